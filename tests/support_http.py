"""GETs against a sidecar's or a supervisor's metrics port (`/metrics`, `/health`) for tests: the
status, content type and body, whether the status is an error or not."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


def get(port: int | None, path: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read()


def metrics_text(port: int | None) -> str:
    """`/metrics`, which must answer 200: the exposition text."""
    status, _, body = get(port, "/metrics")
    assert status == 200, f"/metrics on port {port} answered {status}: {body[:200]!r}"
    return body.decode("utf-8")


def health(port: int | None) -> tuple[int, dict[str, Any]]:
    """`/health`: the HTTP status and the report."""
    status, _, body = get(port, "/health")
    return status, json.loads(body)
