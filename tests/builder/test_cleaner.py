"""The cleaner keeps exactly what retained snapshots need, refuses time travel past its horizon,
deletes the orphans a write leaves (a retried task's copy of a data file) and never touches files
that are not lakeprune's."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from builder.cleaner import clean
from builder.compaction import compact
from pruner.errors import SnapshotNotFoundError
from pruner.format.layout import DataFileName, data_file_path
from pruner.table.table import LakeTable
from tests.support import CITIES, contents, create, make_row, to_df


def test_clean_retains_the_newest_commits_only(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "t")
    table = create(location, spark, **{"clean.retain_commits": 2})
    snapshots = {}
    for version in range(4):
        if version == 2:
            compact(location)  # logs before this are needed only by snapshots older than it
        result = table.upsert(to_df(spark, [make_row(k, CITIES[k % 3], version) for k in range(12)]))
        assert result.instant is not None
        snapshots[result.instant] = contents(location)
    user_file = tmp_path / "t" / "README.txt"
    user_file.write_text("not lakeprune's")

    report = clean(location)
    instants = sorted(snapshots)
    assert report.earliest_retained == instants[-2]
    assert report.deleted_data_files > 0 and report.deleted_index_files > 0
    for instant in instants[-2:]:
        assert contents(location, instant) == snapshots[instant]
    with pytest.raises(SnapshotNotFoundError, match="cleaned"):
        LakeTable.open(location).snapshot(instants[0])
    assert user_file.exists()
    assert clean(location).instant is None, "a second clean has nothing to do"


def test_clean_deletes_a_retried_tasks_copy_that_no_snapshot_names(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A write task that Spark runs twice (a lost cached block recomputed, a speculative attempt)
    writes its file group's slice twice under the same instant; the commit names one of them. The
    other is an orphan: never read, deleted by the next clean."""
    location = str(tmp_path / "t")
    table = create(location, spark)
    result = table.upsert(to_df(spark, [make_row(k, CITIES[k % 3], 0) for k in range(12)]))
    assert result.instant is not None
    before = contents(location)
    live = LakeTable.open(location).snapshot().files()[0]
    parsed = DataFileName.parse(live.file_name)
    assert parsed is not None and parsed.instant == result.instant
    orphan = (
        tmp_path
        / "t"
        / data_file_path(live.partition, DataFileName(parsed.file_group, "9-1-retried", parsed.instant))
    )
    orphan.write_bytes((tmp_path / "t" / live.path).read_bytes())
    assert contents(location) == before, "the orphan is not part of the snapshot"

    report = clean(location)
    assert report.deleted_data_files == 1
    assert not orphan.exists()
    assert contents(location) == before
