"""The cleaner keeps exactly what retained snapshots need, refuses time travel past its horizon,
and never touches files that are not lakeprune's."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from builder.cleaner import clean
from builder.compaction import compact
from pruner.errors import SnapshotNotFoundError
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
