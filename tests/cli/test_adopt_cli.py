"""`lakeprune table adopt`: a directory written by plain Spark becomes a table (summary line, JSON
with --json, CREATE INDEX statements built with --index, whose column stats carry the optimizer
statistics, so `table analyze` has nothing to do); a duplicate key is one line on stderr, exit
status 2 (after the progress log lines), and no `.lakeprune/` behind."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import SparkSession

from pruner.format.layout import META_DIR
from pruner.table.statistics import table_statistics
from pruner.table.table import LakeTable
from tests.cli.test_cli import lakeprune
from tests.support_adopt import write_hive


def test_adopt_prints_a_summary_and_builds_indexes(spark: SparkSession, tmp_path: Path) -> None:
    directory = write_hive(spark, tmp_path / "events", ["city"], range(12))
    out = lakeprune(
        "table", "adopt", str(directory), "--record-key", "id", "--partition-by", "city",
        "--index", "CREATE INDEX stats ON events USING column_stats",
    )  # fmt: skip
    out = " ".join(out.split())  # the console wraps long lines
    assert "adopted events at" in out and "12 row(s) in 4 partition(s)" in out
    assert "partition columns are read from the paths" in out and "1 index(es) built" in out
    table = LakeTable.open(str(directory))
    assert [d.name for d in table.definitions] == ["stats"]
    assert sum(f.rows for f in table.snapshot().files()) == 12
    snapshot = table.snapshot()
    ids = next(c for c in table_statistics(snapshot, snapshot.files()).columns if c.column == "id")
    assert ids.distinct_values_count is not None and round(ids.distinct_values_count) == 12
    assert "nothing to do" in lakeprune("table", "analyze", str(directory))
    analyzed = json.loads(lakeprune("table", "analyze", str(directory), "--json"))
    assert analyzed == {"files": 0, "instant": None}


def test_adopt_json_of_a_flat_directory(spark: SparkSession, tmp_path: Path) -> None:
    directory = write_hive(spark, tmp_path / "flat", [], range(5))
    info = json.loads(lakeprune("table", "adopt", str(directory), "--record-key", "id", "--json"))
    assert info["rows"] == 5 and info["partitions"] == 1 and info["path_columns_in_files"]


def test_a_duplicate_key_is_one_line_and_exit_status_2(spark: SparkSession, tmp_path: Path) -> None:
    directory = write_hive(spark, tmp_path / "dup", [], range(3))
    write_hive(spark, directory, [], range(3))
    err = lakeprune("table", "adopt", str(directory), "--record-key", "id", expect=2)
    errors = [line for line in err.splitlines() if line.startswith("error:")]  # after progress logs
    assert len(errors) == 1 and err.endswith(errors[0] + "\n") and "duplicate record key '0'" in errors[0]
    assert not (directory / META_DIR).exists()
