"""Index data is served from the bounded cache, and a commit is visible at the next call: repeated
prunes do not read index files again (cache hits grow, misses do not), and a delete committed
between two Prune calls changes the second answer."""

from __future__ import annotations

import urllib.request
from pathlib import Path

from pyspark.sql import SparkSession

from builder import LakepruneTable
from pruner.client import PruningClient
from pruner.planner.prune import prune
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.table.table import LakeTable
from tests.pruner.planner.conftest import Oracle
from tests.pruner.service.conftest import SCHEMA, TABLE, StartSidecar, address

PREDICATES = [
    TupleDomain.with_domains({"token": Domain.single_value("t7919")}),
    TupleDomain.with_domains({"id": Domain.multiple_values([3, 500, 1001])}),
    TupleDomain.with_domains(
        {
            "region": Domain.single_value("us"),
            "seq": Domain(SortedRangeSet.of_ranges(Range(10, True, 90, True)), False),
        }
    ),
]


def scrape(port: int | None) -> dict[str, float]:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return {
        name: float(value)
        for line in text.splitlines()
        if line and not line.startswith("#")
        for name, _, value in [line.rpartition(" ")]
    }


def test_repeated_prunes_are_served_from_the_cache(start_sidecar: StartSidecar, lake: str) -> None:
    sidecar = start_sidecar(lake, metrics_port=0, cache_bytes=64 * 1024**2)
    with PruningClient(address(sidecar)) as client:
        first = [client.prune(SCHEMA, TABLE, p) for p in PREDICATES]
        warm = sidecar.cache.stats()
        assert warm.misses > 0 and warm.entries > 0
        for _ in range(3):
            assert [client.prune(SCHEMA, TABLE, p) for p in PREDICATES] == first
        hot = sidecar.cache.stats()
    assert hot.misses == warm.misses and hot.hits >= warm.hits + 3 * len(PREDICATES)
    metrics = scrape(sidecar.metrics_port)
    assert metrics["lakeprune_index_cache_hits_total"] == hot.hits
    assert metrics["lakeprune_index_cache_misses_total"] == hot.misses
    assert metrics["lakeprune_index_cache_bytes"] == hot.bytes > 0


def test_a_small_cache_evicts_and_still_answers_correctly(start_sidecar: StartSidecar, lake: str) -> None:
    sidecar = start_sidecar(lake, cache_bytes=16 * 1024)
    with PruningClient(address(sidecar)) as client:
        for _ in range(2):
            for predicate in PREDICATES:
                expected = prune(LakeTable.open(str(Path(lake) / TABLE)), predicate)
                assert client.prune(SCHEMA, TABLE, predicate).splits == expected.splits
    stats = sidecar.cache.stats()
    assert stats.evictions > 0 and stats.bytes <= 16 * 1024


def test_a_commit_between_two_prunes_is_visible(
    start_sidecar: StartSidecar, table_copy: str, spark: SparkSession
) -> None:
    sidecar = start_sidecar(str(Path(table_copy).parent))
    keys = LakeTable.open(table_copy).snapshot().read(columns=["id"]).column("id").to_pylist()[:3]
    predicate = TupleDomain.with_domains({"id": Domain.multiple_values(keys)})
    with PruningClient(address(sidecar)) as client:
        before = client.prune(SCHEMA, TABLE, predicate)
        assert before.files_selected > 0
        LakepruneTable(table_copy, spark).delete(spark.createDataFrame([(k,) for k in keys], "id bigint"))
        after = client.prune(SCHEMA, TABLE, predicate)
    snapshot = LakeTable.open(table_copy).snapshot()
    assert after.snapshot == snapshot.instant and after.snapshot is not None
    assert before.snapshot is not None and after.snapshot > before.snapshot
    assert after.splits == [] and Oracle(snapshot).files_matching(predicate) == set()
