"""Talking to a running engine over its HTTP API with the standard library only (the launcher must
not depend on the client packages, which are development dependencies): `GET /v1/info` for the
node's state, and the client protocol (`POST /v1/statement`, then follow `nextUri`) to run a
statement such as `SELECT 1` and collect its rows."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from pruner.engines.errors import StatementFailedError
from pruner.engines.spec import EngineSpec

USER = "lakeprune"
SOURCE = "lakeprune-launcher"


def _get_json(request: urllib.request.Request, timeout: float) -> dict[str, Any]:
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body = json.loads(response.read().decode())
    if not isinstance(body, dict):
        raise StatementFailedError(f"unexpected reply from {request.full_url}: {body!r}")
    return body


def server_info(host: str, port: int, timeout: float = 2.0) -> dict[str, Any] | None:
    """`/v1/info` (version, `starting`, uptime), or None if nothing answers there."""
    request = urllib.request.Request(f"http://{host}:{port}/v1/info")
    try:
        return _get_json(request, timeout)
    except (OSError, ValueError, StatementFailedError):
        return None


def run_statement(
    spec: EngineSpec, host: str, port: int, sql: str, *, timeout: float = 30.0
) -> list[list[Any]]:
    """Run `sql` and return its rows; raises StatementFailedError with the engine's message."""
    headers = {spec.header("User"): USER, spec.header("Source"): SOURCE}
    request = urllib.request.Request(
        f"http://{host}:{port}/v1/statement", data=sql.encode(), headers=headers, method="POST"
    )
    rows: list[list[Any]] = []
    try:
        reply = _get_json(request, timeout)
        while True:
            error = reply.get("error")
            if isinstance(error, dict):
                name = error.get("errorName")
                raise StatementFailedError(
                    str(error.get("message", error)), name if isinstance(name, str) else None
                )
            data = reply.get("data")
            if isinstance(data, list):
                rows.extend(row for row in data if isinstance(row, list))
            next_uri = reply.get("nextUri")
            if not isinstance(next_uri, str):
                return rows
            reply = _get_json(urllib.request.Request(next_uri, headers=headers), timeout)
    except (OSError, ValueError) as exc:  # URLError and HTTPError are OSErrors
        raise StatementFailedError(f"{sql!r} on port {port}: {exc}") from None
