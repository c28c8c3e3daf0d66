"""Metrics and the request log: counts and latency by api, method and status, prune file counts and
fallbacks, rows served, the index cache read at scrape time, one registry per sidecar, the HTTP
endpoint, and one `key=value` log line per request."""

from __future__ import annotations

import logging
import urllib.request

import grpc
import pyarrow as pa
import pytest

from pruner.errors import TableNotFoundError
from pruner.metadata.cache import IndexCache
from pruner.planner.result import ExplainStep, PruneResult, Split
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2_grpc as spb_grpc
from pruner.serving.errors import Status
from pruner.serving.http import HealthReport
from pruner.serving.metrics import Metrics
from pruner.sidecar import Sidecar
from pruner.storage_requests import RequestCounter, RequestKind, StorageRequests
from tests.pruner.service.conftest import SCHEMA, TABLE

RESULT = PruneResult(
    snapshot="20260101000000000",
    predicate="id = 1",
    files_total=40,
    splits=[Split(f"/t/f{i}.parquet", "", {}, f"g{i}", 0, 10, 5, 10) for i in range(3)],
    explain=[ExplainStep("column_stats", "column_stats", ("id",), 40, 3, 1.0, fallback="OSError: gone")],
    storage=StorageRequests(lists=1, heads=2, gets=3, bytes_read=4096),
)


def sample(metrics: Metrics, name: str, **labels: str) -> float | None:
    return metrics.registry.get_sample_value(name, labels)


def test_storage_requests_are_exposed_by_kind_with_the_bytes_read() -> None:
    totals = RequestCounter()
    metrics = Metrics(storage_totals=totals)
    for kind, nbytes in [(RequestKind.LIST, 0), (RequestKind.GET, 100), (RequestKind.GET, 28)]:
        totals.add(kind, nbytes)
    by_kind = {
        k: sample(metrics, "lakeprune_storage_requests_total", kind=k) for k in ("list", "head", "get")
    }
    assert by_kind == {"list": 1, "head": 0, "get": 2}
    assert sample(metrics, "lakeprune_storage_read_bytes_total") == 128


def test_requests_are_counted_timed_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    metrics = Metrics()
    with caplog.at_level(logging.INFO, logger="pruner.service.requests"):
        with metrics.request("thrift", "getSplits", "lake.t") as record:
            record.prune(RESULT)
            metrics.prune_result("thrift", RESULT)
        with pytest.raises(TableNotFoundError), metrics.request("grpc", "Prune", "lake.x"):
            raise TableNotFoundError("table lake.x does not exist")
        with metrics.request("grpc", "Prune") as record:
            record.status = Status.DEADLINE_EXCEEDED
    assert sample(metrics, "lakeprune_requests_total", api="thrift", method="getSplits", status="ok") == 1
    assert sample(metrics, "lakeprune_requests_total", api="grpc", method="Prune", status="not_found") == 1
    assert (
        sample(
            metrics, "lakeprune_request_seconds_count", api="grpc", method="Prune", status="deadline_exceeded"
        )
        == 1
    )
    assert sample(metrics, "lakeprune_prune_files_in_total", api="thrift") == 40
    assert sample(metrics, "lakeprune_prune_files_out_total", api="thrift") == 3
    assert sample(metrics, "lakeprune_prune_fallbacks_total", api="thrift") == 1
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith(
        "api=thrift method=getSplits table=lake.t snapshot=20260101000000000 "
        "files_in=40 files_out=3 fallbacks=1 lists=1 heads=2 gets=3 bytes_read=4096 ms="
    )
    assert lines[0].endswith(" status=ok")
    assert lines[1].startswith("api=grpc method=Prune table=lake.x ms=") and lines[1].endswith(
        "status=not_found"
    )
    assert lines[2].endswith("status=deadline_exceeded")


def test_log_values_with_spaces_are_quoted(caplog: pytest.LogCaptureFixture) -> None:
    with (
        caplog.at_level(logging.INFO, logger="pruner.service.requests"),
        Metrics().request("grpc", "X") as record,
    ):
        record.fields["reason"] = 'say "hi" = bye'
    assert 'reason="say \\"hi\\" = bye"' in caplog.records[0].getMessage()


def test_rows_served_and_the_cache_collector() -> None:
    cache = IndexCache(1000)
    metrics = Metrics(cache)
    metrics.rows_served("thrift", 100, 4096)
    metrics.rows_served("thrift", 5, 4)
    assert sample(metrics, "lakeprune_rows_served_total", api="thrift") == 105
    assert sample(metrics, "lakeprune_bytes_served_total", api="thrift") == 4100
    cache.get_or_load("k", lambda: pa.table({"v": [1, 2]}))
    cache.get_or_load("k", lambda: pa.table({"v": [1, 2]}))
    assert sample(metrics, "lakeprune_index_cache_hits_total") == 1
    assert sample(metrics, "lakeprune_index_cache_misses_total") == 1
    assert sample(metrics, "lakeprune_index_cache_entries") == 1
    assert sample(metrics, "lakeprune_index_cache_bytes") == 16
    assert sample(metrics, "lakeprune_index_cache_max_bytes") == 1000
    assert sample(metrics, "lakeprune_index_cache_too_large") == 0
    cache.get_or_load("huge", lambda: pa.table({"v": list(range(200))}))
    assert sample(metrics, "lakeprune_index_cache_too_large") == 1


def test_sidecars_in_one_process_have_registries_of_their_own() -> None:
    one, two = Metrics(IndexCache(1)), Metrics(IndexCache(2))
    one.rows_served("grpc", 1, 1)
    assert sample(two, "lakeprune_rows_served_total", api="grpc") is None
    assert sample(two, "lakeprune_index_cache_max_bytes") == 2


def test_the_http_endpoint(sidecar: Sidecar) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{sidecar.grpc_port}") as channel:
        stub = spb_grpc.PruningServiceStub(channel)
        stub.GetTable(spb.GetTableRequest(table=spb.TableName(schema=SCHEMA, table=TABLE)))
        with pytest.raises(grpc.RpcError):
            stub.GetTable(spb.GetTableRequest(table=spb.TableName(schema=SCHEMA, table="gone")))
    text = (
        urllib.request.urlopen(f"http://127.0.0.1:{sidecar.metrics_port}/metrics", timeout=5).read().decode()
    )
    assert 'lakeprune_requests_total{api="grpc",method="GetTable",status="ok"}' in text
    assert 'lakeprune_requests_total{api="grpc",method="GetTable",status="not_found"} 1.0' in text
    assert 'lakeprune_request_seconds_bucket{api="grpc",le="0.5",method="GetTable",status="ok"}' in text
    assert "lakeprune_index_cache_hits_total" in text


def test_the_http_endpoint_stops() -> None:
    metrics = Metrics()
    port = metrics.serve_http("127.0.0.1", 0, lambda: HealthReport(True))
    assert urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).status == 200
    metrics.stop_http()
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2)
