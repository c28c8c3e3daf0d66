"""The sidecar over a table on a real S3 server (SeaweedFS): a cold keyed prune reads index files
with ranged GETs, footers first, a small share of their bytes; the same prune warm makes no request
but the listings of the timeline and the definition files — counted by the prune's result, the
request log line and `/metrics`, and cross-checked against the server's own request counts — and
a commit published on S3 between two prunes is seen by the next one."""

from __future__ import annotations

import logging
import re
import time
from collections import Counter
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from builder import LakepruneTable
from pruner.client import PruningClient
from pruner.format.layout import METADATA_DIR, TIMELINE_DIR
from pruner.planner.prune import prune
from pruner.predicate.domain import Domain
from pruner.predicate.tuple_domain import TupleDomain
from pruner.serving import catalog
from pruner.storage import Storage
from pruner.storage_requests import StorageRequests
from pruner.table.table import LakeTable
from tests.pruner.service.conftest import SCHEMA, TABLE, StartSidecar, address
from tests.pruner.service.test_caching import scrape
from tests.support_s3 import SeaweedS3

# Short, so that the definition files copied to S3 settle within the test; the listing's times are
# whole seconds, hence the sleep of a second more.
SETTLED = 1.0


def sync(local: str, remote: str) -> None:
    """Publish the files of the local table that its S3 copy lacks or holds at another size,
    timeline files last (as a writer publishes a commit), and the definition files every time."""
    source, target = Storage.from_uri(local), Storage.from_uri(remote)
    held = {e.rel: e.size for e in target.list_files("", recursive=True)}
    changed = [
        e
        for e in source.list_files("", recursive=True)
        if held.get(e.rel) != e.size or e.rel in catalog.DEFINITION_FILES
    ]
    for entry in sorted(changed, key=lambda e: e.rel.startswith(TIMELINE_DIR)):
        target.write_bytes(entry.rel, source.read_bytes(entry.rel))


def request_counts(records: list[logging.LogRecord]) -> StorageRequests:
    """The storage requests of the last Prune request's log line."""
    line = [r.getMessage() for r in records if "method=Prune " in r.getMessage()][-1]
    fields = dict(re.findall(r"(\w+)=(\S+)", line))
    return StorageRequests(
        int(fields["lists"]), int(fields["heads"]), int(fields["gets"]), int(fields["bytes_read"])
    )


def storage_metrics(port: int | None) -> dict[str, float]:
    metrics = scrape(port)
    return {
        kind: metrics[f'lakeprune_storage_requests_total{{kind="{kind}"}}']
        for kind in ("list", "head", "get")
    }


def test_cold_prunes_read_ranges_warm_prunes_only_list_and_commits_are_seen(
    table_copy: str,
    spark: SparkSession,
    s3_server: SeaweedS3,
    s3_root: str,
    start_sidecar: StartSidecar,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(catalog, "SETTLED_SECONDS", SETTLED)
    remote = f"{s3_root}/{TABLE}"
    bucket = s3_root.removeprefix("s3://").partition("/")[0]
    sync(table_copy, remote)
    index_bytes = sum(e.size for e in Storage.from_uri(remote).list_files(METADATA_DIR, recursive=True))
    keys = LakeTable.open(table_copy).snapshot().read(columns=["id"]).column("id").to_pylist()[:2]
    predicate = TupleDomain.with_domains({"id": Domain.multiple_values(keys)})
    time.sleep(SETTLED + 1.1)
    sidecar = start_sidecar(s3_root, metrics_port=0, cache_bytes=64 * 1024**2)
    caplog.set_level(logging.INFO, logger="pruner.service.requests")
    with PruningClient(address(sidecar)) as client:
        cold = client.prune(SCHEMA, TABLE, predicate, explain=True)
        cold_request = request_counts(caplog.records)
        before = storage_metrics(sidecar.metrics_port)
        served_before = s3_server.request_counts(bucket)
        warm = [client.prune(SCHEMA, TABLE, predicate, explain=True) for _ in range(3)]
        warm_request = request_counts(caplog.records)
        after = storage_metrics(sidecar.metrics_port)
        served = Counter(s3_server.request_counts(bucket))
        served.subtract(served_before)

        assert 0 < cold.files_selected < cold.files_total
        assert cold.storage.gets > 0 and cold_request.gets >= cold.storage.gets
        assert cold.storage.bytes_read < index_bytes / 2, (cold.storage, index_bytes)
        for result in warm:
            assert result.splits == cold.splits
            assert result.storage == StorageRequests()  # every index bucket from the cache
        # The whole request: the catalog lists the timeline and the definition files, and reads nothing.
        assert warm_request == StorageRequests(lists=2)
        # Each client prune is a GetTable (the client binds the predicate to the schema) and a Prune.
        assert after == {"list": before["list"] + 3 * 2 * 2, "head": before["head"], "get": before["get"]}
        # The server saw the same: listings only, no HEAD or read of an object (SeaweedFS counts a
        # HEAD as a GET answered 200, a ranged read as one answered 206).
        assert +served == {("LIST", "200"): 3 * 2 * 2}

        # A commit lands on S3 between two prunes: the next prune plans on it.
        LakepruneTable(table_copy, spark).delete(spark.createDataFrame([(k,) for k in keys], "id bigint"))
        sync(table_copy, remote)
        changed = client.prune(SCHEMA, TABLE, predicate)
    local = prune(LakeTable.open(table_copy), predicate)
    assert changed.snapshot == local.snapshot != cold.snapshot
    assert [Path(s.path).name for s in changed.splits] == [Path(s.path).name for s in local.splits]
    assert changed.storage.gets > 0
    logging.getLogger(__name__).info(
        "cold %s, warm request %s, index files %d bytes", cold.storage, warm_request, index_bytes
    )
