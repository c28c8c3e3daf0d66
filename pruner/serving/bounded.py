"""Bounds on the text a caller can make the sidecar repeat. Names, values, method paths and whole
error messages come from requests, and a request can carry megabytes: every piece of such text that
goes into a log line, an error message or a warning passes through `shorten` first, which keeps a
fixed number of characters and says how long the original was, so the cost of logging or answering
a request never grows with what the caller sent."""

from __future__ import annotations

ECHO_CHARS = 200
"""Characters kept of one caller-supplied name or value (names are at most 128: shown whole)."""

MESSAGE_CHARS = 500
"""Characters kept of an error message sent to a caller. Even at 4 UTF-8 bytes per character,
percent-encoded, that stays well under gRPC's 8 KiB metadata limit, so a long message can never
turn the real status into RESOURCE_EXHAUSTED."""


def shorten(text: object, limit: int = ECHO_CHARS) -> str:
    """`text` as it is when it has at most `limit` characters, else its first `limit` characters
    followed by `…(N chars)`, N being the original length."""
    shown = text if isinstance(text, str) else str(text)
    if len(shown) <= limit:
        return shown
    return f"{shown[:limit]}…({len(shown):,} chars)"
