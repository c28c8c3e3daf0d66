"""Directories of Parquet files as plain Spark writes them (`df.write.partitionBy(...).parquet`),
for the adopt tests, and the DuckDB reference over the files a snapshot of an adopted table lists
(`hive_partitioning`, so that partition columns come from the paths as for any Hive reader)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
from pyspark.sql import SparkSession

from builder import LakepruneTable
from builder.adopt import adopt_table
from pruner.table.table import LakeTable

SCHEMA = "id bigint, name string, score double, city string, day date"
CITIES = ["ams", "ber", "new york", None]  # a space (escaped differently by Spark) and NULL
ROWS = 48
INDEXES = [
    "CREATE INDEX stats ON hive USING column_stats",
    "CREATE INDEX by_name ON hive USING bloom_filters (name)",
    "CREATE INDEX by_city ON hive USING secondary_index (city)",
]
UPSERT = [
    (1, "n1 again", 99.0, "ber", date(2026, 1, 2)),  # same partition: rewritten in its group
    (2, "n2 moved", 98.0, "ams", date(2026, 1, 1)),  # "new york" -> "ams": moves partition
    (4, "n4 city", 97.0, None, date(2026, 1, 3)),  # into the null partition
    (100, "new", 1.5, "new york", date(2026, 1, 1)),
]
DELETED = [3, 6]


@dataclass(frozen=True)
class Adopted:
    location: str
    adopted: str  # the adopt instant
    upserted: str
    deleted: str


def source_row(key: int) -> tuple[Any, ...]:
    from datetime import timedelta

    return (
        key,
        f"n{key}",
        None if key % 7 == 0 else key / 4,
        CITIES[key % 4],
        date(2026, 1, 1) + timedelta(days=key % 3),
    )


def write_hive(spark: SparkSession, directory: Path, partition_by: list[str], keys: range) -> Path:
    """`keys`' rows written by plain Spark, two tasks, Hive-style when `partition_by` is given."""
    df = spark.createDataFrame([source_row(k) for k in keys], SCHEMA).repartition(2)
    writer = df.write.mode("append")
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    writer.parquet(str(directory))
    return directory


def snapshot_files(location: str, instant: str | None = None) -> list[str]:
    snapshot = LakeTable.open(location).snapshot(instant)
    return [snapshot.table.storage.full_uri(f.path) for f in snapshot.files()]


def duckdb_rows(files: list[str], sql: str = "SELECT * FROM {t}") -> list[tuple[Any, ...]]:
    """`sql` over `files` (`{t}`), partition columns from the paths where a file lacks them."""
    relation = f"read_parquet({files!r}, hive_partitioning = true, union_by_name = true)"
    return duckdb.connect().execute(sql.format(t=relation)).fetchall()


def reference(location: str, instant: str | None = None) -> dict[int, dict[str, Any]]:
    """DuckDB's rows of a snapshot's files, keyed by id (fails on a repeated id)."""
    files = snapshot_files(location, instant)
    rows: dict[int, dict[str, Any]] = {}
    for key, name, score, city, day in duckdb_rows(files, "SELECT id, name, score, city, day FROM {t}"):
        assert key not in rows, f"key {key} occurs twice"
        rows[key] = {"id": key, "name": name, "score": score, "city": city, "day": day}
    return rows


def build_adopted(spark: SparkSession, root: Path) -> Adopted:
    """`root/hive`: written by plain Spark partitioned by city and day, adopted with column stats,
    a bloom filter and a secondary index, then upserted and deleted from."""
    directory = write_hive(spark, root / "hive", ["city", "day"], range(ROWS))
    result = adopt_table(spark, str(directory), "id", ["city", "day"], indexes=INDEXES)
    table = LakepruneTable(str(directory), spark)
    upserted = table.upsert(spark.createDataFrame(UPSERT, SCHEMA)).instant
    deleted = table.delete(spark.createDataFrame([(k,) for k in DELETED], "id bigint")).instant
    assert upserted is not None and deleted is not None
    return Adopted(str(directory), result.instant, upserted, deleted)
