"""Compaction of index partitions: a partition past `index.compaction_spark_threshold_bytes` is
compacted by a Spark job (no bucket merged in the driver process), a smaller one in process; both
give every bucket a base holding exactly the rows the base and logs merged to."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

import builder.compaction
from builder.compaction import compact
from pruner.metadata.index_partition import IndexPartitionView, compact_bucket
from pruner.table.table import LakeTable
from tests.support import CITIES, create, make_row, to_df


def _index_rows(location: str) -> dict[str, pa.Table]:
    table = LakeTable.open(location)
    snapshot = table.snapshot()
    return {spec.name: snapshot.index_partition(spec).read_all() for spec in table.index_partition_specs()}


@pytest.mark.parametrize(("threshold", "in_driver"), [(1, False), (1 << 40, True)])
def test_large_partitions_compact_in_spark_small_ones_in_process(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threshold: int, in_driver: bool
) -> None:
    location = str(tmp_path / "t")
    table = create(location, spark, **{"index.compaction_spark_threshold_bytes": threshold})
    table.sql("CREATE INDEX by_day ON t USING secondary_index (day)")
    table.insert(to_df(spark, [make_row(k, CITIES[k % 3]) for k in range(30)]))
    table.upsert(to_df(spark, [make_row(k, CITIES[(k + 1) % 3], 1) for k in range(0, 30, 3)]))
    before = _index_rows(location)
    calls: list[int] = []

    def recording(view: IndexPartitionView, bucket: int, instant: str) -> str:
        calls.append(bucket)
        return compact_bucket(view, bucket, instant)

    monkeypatch.setattr(builder.compaction, "compact_bucket", recording)

    report = compact(location, force=True, spark=spark)

    assert report.bucket_count > 0
    assert bool(calls) == in_driver
    assert len(calls) == (report.bucket_count if in_driver else 0)
    snapshot = LakeTable.open(location).snapshot()
    for spec in LakeTable.open(location).index_partition_specs():
        view = snapshot.index_partition(spec)
        assert all(files.logs == () and files.base is not None for files in view.buckets.values()), spec.name
    assert _index_rows(location) == before
