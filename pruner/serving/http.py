"""The sidecar's HTTP endpoint: Prometheus metrics and a health report on the metrics port. `/health`
answers 200 with `{"status": "SERVING", ...}` when the process can plan, 503 with `NOT_SERVING`
otherwise, as JSON; the report's other fields come from whoever serves the port (a single sidecar:
nothing more; a supervisor: its workers by state and the restarts), so that a load balancer or an
orchestrator probing one HTTP address sees the whole sidecar, not the one worker a gRPC health
check happens to land on. Every other path serves the metrics in the Prometheus text format (as
prometheus_client's own server does). Requests are served on threads and not logged."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app

HEALTH_PATH = "/health"
SERVING = "SERVING"
NOT_SERVING = "NOT_SERVING"


@dataclass(frozen=True)
class HealthReport:
    """Whether the process can plan now, and what else its server wants probes to see."""

    serving: bool
    detail: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"status": SERVING if self.serving else NOT_SERVING, **self.detail}


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Scrapes and probes are not logged (the base class writes every request to stderr)."""


Respond = Callable[[str, list[tuple[str, str]]], Any]


def make_app(registry: CollectorRegistry, health: Callable[[], HealthReport]) -> Any:
    """The WSGI application: `/health` from `health()`, anything else the registry's metrics."""
    metrics = make_wsgi_app(registry)

    def app(environ: dict[str, Any], respond: Respond) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != HEALTH_PATH:
            return metrics(environ, respond)  # type: ignore[no-any-return]
        report = health()
        body = json.dumps(report.to_json(), sort_keys=True).encode() + b"\n"
        status = "200 OK" if report.serving else "503 Service Unavailable"
        respond(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]

    return app


def serve_http(
    host: str, port: int, registry: CollectorRegistry, health: Callable[[], HealthReport]
) -> WSGIServer:
    """Serve metrics and health on host:port (0: a free port, see `server_port`) on a daemon thread
    until `stop_http(server)`. Raises OSError if it cannot bind."""
    server = make_server(
        host, port, make_app(registry, health), server_class=_ThreadingServer, handler_class=_QuietHandler
    )
    threading.Thread(target=server.serve_forever, name="metrics-http", daemon=True).start()
    return server


def stop_http(server: WSGIServer) -> None:
    """Stop serving and free the port."""
    server.shutdown()
    server.server_close()
