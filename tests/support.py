"""Test helpers shared by the Spark-backed tests: a small typed table, row generation, and an
independent view of a table's contents (read straight from the data files a snapshot lists)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from builder import LakepruneTable
from pruner.storage import Storage
from pruner.table.data_files import read_data_file
from pruner.table.table import LakeTable

SCHEMA = "id bigint, city string, amount decimal(10,2), score double, ts timestamp, day date"
COLUMNS = ["id", "city", "amount", "score", "ts", "day"]
CITIES = ["ams", "ber", "cdg"]
# Tiny target files (10 rows before the first write, a handful after) so that a few dozen rows
# already spread over several file groups per partition.
SMALL_FILES = {"write.target_file_size_bytes": 640, "write.small_file_limit_bytes": 320}
BASE_TS = datetime(2026, 1, 1, tzinfo=UTC)

Row = dict[str, Any]


def make_row(key: int, city: str, version: int = 0) -> Row:
    return {
        "id": key,
        "city": city,
        "amount": Decimal(f"{key}.{version:02d}"),
        "score": float(key) + version / 10 if key % 7 else None,
        "ts": BASE_TS + timedelta(minutes=key, seconds=version),
        "day": date(2026, 1, 1) + timedelta(days=key % 5),
    }


def to_df(spark: SparkSession, rows: list[Row]) -> DataFrame:
    return spark.createDataFrame([tuple(r[c] for c in COLUMNS) for r in rows], SCHEMA)


def keys_df(spark: SparkSession, keys: list[int]) -> DataFrame:
    return spark.createDataFrame([(k,) for k in keys], "id bigint")


def create(location: str, spark: SparkSession, **properties: Any) -> LakepruneTable:
    return LakepruneTable.create(
        location,
        SCHEMA,
        record_key="id",
        partition_by=["city"],
        ordering_field="ts",
        properties={**SMALL_FILES, **properties},
        spark=spark,
    )


def contents(location: str, snapshot: str | None = None) -> dict[int, Row]:
    """Rows of a snapshot keyed by id; fails if a key occurs twice (a uniqueness violation)."""
    rows: dict[int, Row] = {}
    for row in LakeTable.open(location).snapshot(snapshot).read().to_pylist():
        assert row["id"] not in rows, f"key {row['id']} occurs twice"
        rows[row["id"]] = row
    return rows


def assert_record_index_consistent(location: str) -> None:
    """Every live row's key maps, in the record index, to the partition and file group of the one
    file that holds it, and the index has no entry for a key that is not live."""
    snapshot = LakeTable.open(location).snapshot()
    expected: dict[str, tuple[str, str]] = {}
    for f in snapshot.files():
        storage = snapshot.table.storage
        data = read_data_file(
            storage, f.path, snapshot.table.config.schema, ["id"]
        )  # id may be a path column
        ids = data.column("id").to_pylist()
        assert len(ids) == f.rows, f"files index row count is wrong for {f.path}"
        for key in ids:
            expected[str(key)] = (f.partition, f.file_group)
    index = snapshot.record_index().read_all().to_pylist()
    actual = {r["key"]: (r["partition"], r["file_group"]) for r in index}
    assert actual == expected


def copy_table(source: str, target: str) -> str:
    """Every file of the table at `source` written at `target` (either a path or a URI), the same
    relative paths: a table's metadata names its files relative to its root, so the copy is the
    same table."""
    origin, copy = Storage.from_uri(source), Storage.from_uri(target)
    for entry in origin.list_files("", recursive=True):
        copy.write_bytes(entry.rel, origin.read_bytes(entry.rel))
    return target
