"""The metrics port's HTTP endpoint: `/health` as JSON with 200 or 503 from the server's report
(read at each probe), the metrics on every other path, and no request written to stderr."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry, Counter

from pruner.serving.http import HealthReport, serve_http
from tests.support_http import get


@pytest.fixture
def served() -> Iterator[tuple[int, list[HealthReport]]]:
    """A server whose health report is the last item of the returned list."""
    registry = CollectorRegistry()
    Counter("probe_things", "Things", registry=registry).inc(3)
    reports = [HealthReport(True, {"workers": {"ready": 1}})]
    server = serve_http("127.0.0.1", 0, registry, lambda: reports[-1])
    yield int(server.server_port), reports
    server.shutdown()
    server.server_close()


def test_health_follows_the_report_at_each_probe(served: tuple[int, list[HealthReport]]) -> None:
    port, reports = served
    status, kind, body = get(port, "/health")
    assert (status, kind) == (200, "application/json")
    assert json.loads(body) == {"status": "SERVING", "workers": {"ready": 1}}
    reports.append(HealthReport(False, {"workers": {"ready": 0}}))
    status, _, body = get(port, "/health")
    assert status == 503
    assert json.loads(body) == {"status": "NOT_SERVING", "workers": {"ready": 0}}


@pytest.mark.parametrize("path", ["/metrics", "/", "/anything"])
def test_every_other_path_serves_the_metrics(served: tuple[int, list[HealthReport]], path: str) -> None:
    status, kind, body = get(served[0], path)
    assert status == 200 and kind.startswith("text/plain")
    assert "probe_things_total 3.0" in body.decode()


def test_requests_are_not_logged(
    served: tuple[int, list[HealthReport]], capfd: pytest.CaptureFixture[str]
) -> None:
    get(served[0], "/health")
    get(served[0], "/metrics")
    assert capfd.readouterr().err == ""
