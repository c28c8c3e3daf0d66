"""The sum over workers: the metrics of two real exposition endpoints add up by name and labels
(counters, histogram buckets, gauges), `_created` timestamps are left out, a worker that exited
keeps its counters and histograms in the totals but not its gauges, and a worker that cannot be
read counts with its last values."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, start_wsgi_server

from pruner.supervisor.aggregate import WorkerMetrics, parse


class Worker:
    """A worker's metrics on a loopback HTTP port of its own."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.registry = CollectorRegistry()
        self.requests = Counter("lakeprune_requests", "Requests", ["method"], registry=self.registry)
        self.latency = Histogram(
            "lakeprune_request_seconds", "Latency", buckets=(0.1, 1.0), registry=self.registry
        )
        self.cache = Gauge("lakeprune_index_cache_bytes", "Bytes held", registry=self.registry)
        self.server, _ = start_wsgi_server(0, addr="127.0.0.1", registry=self.registry)
        self.port = int(self.server.server_port)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    started = [Worker(101), Worker(102)]
    yield started
    for worker in started:
        worker.stop()


def totals(collector: WorkerMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    families = parse(generate_latest(registry).decode())
    return {key: value for family in families.values() for key, value in family.samples.items()}


def test_samples_add_up_by_name_and_labels(workers: list[Worker]) -> None:
    first, second = workers
    first.requests.labels("Prune").inc(3)
    second.requests.labels("Prune").inc(4)
    second.requests.labels("GetTable").inc()
    first.latency.observe(0.05)
    second.latency.observe(0.5)
    first.cache.set(100)
    second.cache.set(50)
    summed = totals(WorkerMetrics(lambda: [(w.pid, w.port) for w in workers]))
    assert summed[("lakeprune_requests_total", (("method", "Prune"),))] == 7
    assert summed[("lakeprune_requests_total", (("method", "GetTable"),))] == 1
    assert summed[("lakeprune_request_seconds_bucket", (("le", "0.1"),))] == 1
    assert summed[("lakeprune_request_seconds_bucket", (("le", "1.0"),))] == 2
    assert summed[("lakeprune_request_seconds_count", ())] == 2
    assert summed[("lakeprune_request_seconds_sum", ())] == pytest.approx(0.55)
    assert summed[("lakeprune_index_cache_bytes", ())] == 150
    assert not [name for name, _ in summed if name.endswith("_created")]


def test_an_exited_worker_keeps_its_counters_not_its_gauges(workers: list[Worker]) -> None:
    first, second = workers
    first.requests.labels("Prune").inc(3)
    second.requests.labels("Prune").inc(4)
    first.cache.set(100)
    second.cache.set(50)
    running = list(workers)
    collector = WorkerMetrics(lambda: [(w.pid, w.port) for w in running])
    totals(collector)  # read once while both run
    running.remove(first)
    collector.retire(first.pid)
    second.requests.labels("Prune").inc()
    summed = totals(collector)
    assert summed[("lakeprune_requests_total", (("method", "Prune"),))] == 8
    assert summed[("lakeprune_request_seconds_count", ())] == 0
    assert summed[("lakeprune_index_cache_bytes", ())] == 50


def test_a_worker_that_cannot_be_read_counts_with_its_last_values(workers: list[Worker]) -> None:
    first, second = workers
    first.requests.labels("Prune").inc(3)
    second.requests.labels("Prune").inc(4)
    collector = WorkerMetrics(lambda: [(w.pid, w.port) for w in workers])
    totals(collector)
    first.stop()  # not listening any more: its last values stand in
    second.requests.labels("Prune").inc()
    assert totals(collector)[("lakeprune_requests_total", (("method", "Prune"),))] == 8
