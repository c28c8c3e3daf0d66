"""The sidecar's metrics and request log. Every endpoint (gRPC, Thrift) wraps each request in
`Metrics.request(api, method)`: it times the request, counts it by api, method and status, and
writes one log line of `key=value` pairs (api, method, table, files in / out, the storage requests
a prune made by kind and the bytes it read, ms, status) to the
`pruner.service.requests` logger, each value shortened (`bounded.shorten`) since names come from
callers. Endpoints label only the methods they serve (`OTHER` for any other name), so callers
cannot grow the label set. Prunes add their file counts and fallbacks (`prune_result`), row readers
what they served (`rows_served`); the index cache's counters, the process's storage requests by
kind and bytes read (`pruner.storage_requests.TOTALS`) and an endpoint's connection counts
(`watch_connections`) are read at scrape time.

Metrics live on a `CollectorRegistry` of their own, not prometheus_client's global one, so several
sidecars in one process (tests) do not clash. `serve_http` exposes them for Prometheus, beside the
process's health report (`pruner.serving.http`)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from pruner.bounded import shorten
from pruner.metadata.index_partition import BucketCache
from pruner.planner.result import PruneResult
from pruner.serving.errors import Status, classify
from pruner.serving.http import HealthReport, serve_http, stop_http
from pruner.storage_requests import TOTALS, RequestCounter, RequestKind, StorageRequests

request_log = logging.getLogger("pruner.service.requests")

OTHER = "other"
"""The `method` label of calls to methods an endpoint does not serve."""
# Prunes take milliseconds when the index is cached and up to seconds when it is read cold.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class ConnectionCounts(Protocol):
    """What an endpoint reports about its connections (`pruner.thrift.connections.ConnectionStats`)."""

    @property
    def open(self) -> int: ...
    @property
    def refused(self) -> int: ...
    @property
    def closed_idle(self) -> int: ...
    @property
    def closed_stalled(self) -> int: ...


@dataclass
class RequestRecord:
    """What one request did, filled in by its handler; logged and counted when it ends."""

    api: str
    method: str
    table: str | None = None
    status: Status | None = None  # None: decided at the end (OK, or from the exception)
    fields: dict[str, object] = field(default_factory=dict)

    def prune(self, result: PruneResult, requests: StorageRequests | None = None) -> None:
        """The prune's counts; `requests`: what the whole request asked of storage (default: the
        prune's own, `result.storage`)."""
        requests = result.storage if requests is None else requests
        self.fields.update(
            snapshot=result.snapshot,
            files_in=result.files_total,
            files_out=result.files_selected,
            fallbacks=result.fallbacks,
            lists=requests.lists,
            heads=requests.heads,
            gets=requests.gets,
            bytes_read=requests.bytes_read,
        )


class Metrics:
    def __init__(self, cache: BucketCache | None = None, storage_totals: RequestCounter = TOTALS) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        labels = ("api", "method", "status")
        self.requests = Counter(
            "lakeprune_requests", "Requests served, by api, method and status", labels, registry=self.registry
        )
        self.latency = Histogram(
            "lakeprune_request_seconds",
            "Request latency in seconds, by api, method and status",
            labels,
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.files_in = Counter(
            "lakeprune_prune_files_in", "Live files considered by prunes", ("api",), registry=self.registry
        )
        self.files_out = Counter(
            "lakeprune_prune_files_out",
            "Files kept (returned as splits) by prunes",
            ("api",),
            registry=self.registry,
        )
        self.fallbacks = Counter(
            "lakeprune_prune_fallbacks",
            "Pruning steps that kept files because index data was missing, stale or unreadable, "
            "a probe budget ran out or the prune's deadline passed",
            ("api",),
            registry=self.registry,
        )
        self.rows = Counter(
            "lakeprune_rows_served", "Rows served to engines", ("api",), registry=self.registry
        )
        self.bytes = Counter(
            "lakeprune_bytes_served", "Bytes of row data served to engines", ("api",), registry=self.registry
        )
        if cache is not None:
            self.registry.register(_CacheCollector(cache))
        self.registry.register(_StorageCollector(storage_totals))
        self._http: WSGIServer | None = None

    @contextmanager
    def request(self, api: str, method: str, table: str | None = None) -> Iterator[RequestRecord]:
        """Time, count and log one request. The status is the record's if the handler set one,
        else OK when the block ends normally and the exception's `classify` status otherwise."""
        record = RequestRecord(api, method, table)
        start = time.perf_counter()
        try:
            yield record
        except BaseException as exc:
            if record.status is None:
                record.status = classify(exc).status
            raise
        finally:
            elapsed = time.perf_counter() - start
            status = record.status or Status.OK
            self.requests.labels(api, method, status).inc()
            self.latency.labels(api, method, status).observe(elapsed)
            request_log.info("%s", _log_line(record, status, elapsed))

    def prune_result(self, api: str, result: PruneResult) -> None:
        self.files_in.labels(api).inc(result.files_total)
        self.files_out.labels(api).inc(result.files_selected)
        if result.fallbacks:
            self.fallbacks.labels(api).inc(result.fallbacks)

    def rows_served(self, api: str, rows: int, nbytes: int) -> None:
        self.rows.labels(api).inc(rows)
        self.bytes.labels(api).inc(nbytes)

    def watch_connections(self, api: str, counts: Callable[[], ConnectionCounts]) -> None:
        """Expose an endpoint's connection counts, read from `counts()` at scrape time."""
        self.registry.register(_ConnectionCollector(api, counts))

    def serve_http(self, host: str, port: int, health: Callable[[], HealthReport]) -> int:
        """Expose the metrics at http://host:port/metrics and `health()` at /health; returns the
        bound port."""
        self._http = serve_http(host, port, self.registry, health)
        return int(self._http.server_port)

    def stop_http(self) -> None:
        if self._http is not None:
            stop_http(self._http)
            self._http = None


def _log_line(record: RequestRecord, status: Status, elapsed: float) -> str:
    items: dict[str, object] = {"api": record.api, "method": record.method}
    if record.table is not None:
        items["table"] = record.table
    items.update(record.fields)
    items["ms"] = f"{elapsed * 1000:.1f}"
    items["status"] = status
    return " ".join(f"{k}={_quote(v)}" for k, v in items.items())


def _quote(value: object) -> str:
    text = "-" if value is None else shorten(value)
    if not text or any(c in text for c in ' "=\n'):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return text


class _CacheCollector(Collector):
    """The index cache's counters and size, read from `IndexCache.stats()` at scrape time."""

    def __init__(self, cache: BucketCache) -> None:
        self.cache = cache

    def collect(self) -> Iterator[Metric]:
        stats = self.cache.stats()
        yield CounterMetricFamily(
            "lakeprune_index_cache_hits", "Index bucket reads served from the cache", stats.hits
        )
        yield CounterMetricFamily(
            "lakeprune_index_cache_misses", "Index bucket reads that went to storage", stats.misses
        )
        yield CounterMetricFamily(
            "lakeprune_index_cache_evictions",
            "Index buckets evicted to stay within the size",
            stats.evictions,
        )
        yield GaugeMetricFamily("lakeprune_index_cache_bytes", "Bytes of index data held", stats.bytes)
        yield GaugeMetricFamily("lakeprune_index_cache_entries", "Index buckets held", stats.entries)
        yield GaugeMetricFamily("lakeprune_index_cache_max_bytes", "Configured cache size", stats.max_bytes)
        yield GaugeMetricFamily(
            "lakeprune_index_cache_too_large",
            "Index buckets larger than the whole cache (their lookups read from storage)",
            stats.too_large,
        )


class _StorageCollector(Collector):
    """The requests made to storage (by kind) and the bytes read, read from the process's
    `pruner.storage_requests` totals at scrape time."""

    def __init__(self, totals: RequestCounter) -> None:
        self.totals = totals

    def collect(self) -> Iterator[Metric]:
        value = self.totals.value()
        requests = CounterMetricFamily(
            "lakeprune_storage_requests",
            "Requests made to storage, by kind: list (directory listings), head (metadata requests, "
            "incl. the size lookup on opening a file), get (reads of a byte range: ranged GETs)",
            labels=["kind"],
        )
        for kind in RequestKind:
            requests.add_metric([kind.value], value.count(kind))
        yield requests
        yield CounterMetricFamily(
            "lakeprune_storage_read_bytes", "Bytes read from storage by GETs", value.bytes_read
        )


class _ConnectionCollector(Collector):
    """One endpoint's open, refused and closed connections."""

    def __init__(self, api: str, counts: Callable[[], ConnectionCounts]) -> None:
        self.api = api
        self.counts = counts

    def collect(self) -> Iterator[Metric]:
        counts = self.counts()
        open_ = GaugeMetricFamily("lakeprune_connections_open", "Open connections", labels=["api"])
        open_.add_metric([self.api], counts.open)
        yield open_
        refused = CounterMetricFamily(
            "lakeprune_connections_refused",
            "Connections closed at once because the endpoint's connection limit was reached",
            labels=["api"],
        )
        refused.add_metric([self.api], counts.refused)
        yield refused
        closed = CounterMetricFamily(
            "lakeprune_connections_closed",
            "Connections the server closed: idle for too long, or a frame that stalled",
            labels=["api", "reason"],
        )
        closed.add_metric([self.api, "idle"], counts.closed_idle)
        closed.add_metric([self.api, "stalled"], counts.closed_stalled)
        yield closed
