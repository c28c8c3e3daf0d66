"""Authenticated opaque tokens for the Thrift connector: split ids and paging tokens. The engine
hands these bytes back unchanged, so whatever the sidecar needs later (which table and file a split
reads, the engine's constraint, the keys of an index split, where a page stopped) travels inside
them — no server-side state, so any sidecar sharing the key can serve any split. Each token is a
version byte, a zlib-compressed JSON payload and an HMAC-SHA256 of both under the configured
`security.split_key`; a token that fails the check is refused before anything in it is used, so no
caller can make the sidecar read a path it did not hand out itself."""

from __future__ import annotations

import hashlib
import hmac
import json
import zlib
from typing import Any

from pruner.errors import LakepruneError

_VERSION = b"\x01"
_MAC_BYTES = hashlib.sha256().digest_size


class TokenError(LakepruneError):
    """A split id or paging token is malformed or was not issued by a sidecar holding this key."""


class TokenSealer:
    def __init__(self, key: bytes) -> None:
        if len(key) < 16:
            raise ValueError("the token key must be at least 16 bytes")
        self._key = key

    def seal(self, kind: str, payload: dict[str, Any]) -> bytes:
        """The token for `payload` (JSON-serialisable), bound to its `kind` (split, page, ...)."""
        body = _VERSION + zlib.compress(json.dumps([kind, payload], separators=(",", ":")).encode())
        return body + self._mac(body)

    def open(self, kind: str, token: bytes) -> dict[str, Any]:
        """The payload of a token sealed with this key for `kind`; `TokenError` otherwise."""
        body, mac = token[:-_MAC_BYTES], token[-_MAC_BYTES:]
        if len(token) <= _MAC_BYTES + 1 or not hmac.compare_digest(mac, self._mac(body)):
            raise TokenError(f"{kind} token rejected: it was not issued by this lakeprune deployment")
        if body[:1] != _VERSION:
            raise TokenError(f"{kind} token has unknown version {body[:1]!r}")
        try:
            sealed_kind, payload = json.loads(zlib.decompress(body[1:]))
        except (zlib.error, ValueError, TypeError) as exc:  # cannot happen for a token we sealed
            raise TokenError(f"{kind} token is malformed: {exc}") from exc
        if sealed_kind != kind or not isinstance(payload, dict):
            raise TokenError(f"token is a {sealed_kind} token, not a {kind} token")
        return payload

    def _mac(self, body: bytes) -> bytes:
        return hmac.new(self._key, body, hashlib.sha256).digest()
