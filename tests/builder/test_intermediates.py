"""How the builder persists intermediates: on disk, uncompressed, index chunks one per cached batch;
the session's own settings unchanged (whether it had them set or not)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from builder.intermediates import (
    CACHE_BATCH_ROWS,
    CACHE_COMPRESSED,
    INTERMEDIATE_LEVEL,
    persist_chunks,
    persist_intermediate,
)

SETTINGS = (CACHE_COMPRESSED, CACHE_BATCH_ROWS)


@pytest.fixture
def restored(spark: SparkSession) -> Iterator[SparkSession]:
    before = {key: spark.conf.get(key, None) for key in SETTINGS}
    yield spark
    for key, value in before.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)


def _cached_batches(df: DataFrame) -> list[Any]:
    """The cached batches of a persisted DataFrame (through the JVM: PySpark does not show them)."""
    plan = df._jdf.queryExecution().withCachedData()
    pending = [plan]
    while pending:
        node = pending.pop()
        if node.getClass().getSimpleName() == "InMemoryRelation":
            return list(node.cacheBuilder().cachedColumnBuffers().collect())
        children = node.children().iterator()
        while children.hasNext():
            pending.append(children.next())
    raise AssertionError("not persisted")


@pytest.mark.parametrize("own", [None, {CACHE_COMPRESSED: "true", CACHE_BATCH_ROWS: "5000"}])
@pytest.mark.parametrize(("persist", "rows_per_batch"), [(persist_intermediate, 100), (persist_chunks, 1)])
def test_persisted_on_disk_uncompressed_and_the_session_keeps_its_settings(
    restored: SparkSession,
    own: dict[str, str] | None,
    persist: Callable[[DataFrame], DataFrame],
    rows_per_batch: int,
) -> None:
    spark = restored
    for key in SETTINGS:
        spark.conf.unset(key)
    for key, value in (own or {}).items():
        spark.conf.set(key, value)
    expected = {key: spark.conf.get(key) for key in SETTINGS}
    spark.conf.set(CACHE_BATCH_ROWS, "100")  # the default 10,000 would make one batch of these rows
    expected[CACHE_BATCH_ROWS] = "100"
    persisted = persist(spark.range(0, 400, numPartitions=1).selectExpr("id", "id * 2 AS twice"))
    try:
        assert {key: spark.conf.get(key) for key in SETTINGS} == expected
        assert persisted.storageLevel == INTERMEDIATE_LEVEL
        assert persisted.count() == 400
        batches = _cached_batches(persisted)
        assert len(batches) == 400 // rows_per_batch
        # An uncompressed long column: 8 bytes a value plus a small header (compressed, these
        # sequential values take far less: delta encoding).
        assert all(len(batch.buffers()[0]) >= 8 * batch.numRows() for batch in batches)
    finally:
        persisted.unpersist()
