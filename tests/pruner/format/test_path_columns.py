"""The constant columns of a file from its partition path (adopted Hive-style files keep partition
columns only there): typed per the table schema, the null partition, escaping, and nothing filled
for a column the file stores (lakeprune's own files)."""

from __future__ import annotations

from datetime import date

import pyarrow as pa
import pytest

from pruner.format.path_columns import partition_of, path_values, typed_value, with_path_columns
from pruner.types import TableSchema

SCHEMA = TableSchema.parse("id bigint, city string, day date, n int, flag boolean")


def test_partition_of_is_the_directory() -> None:
    assert partition_of("city=a/day=2026-01-01/part-0.parquet") == "city=a/day=2026-01-01"
    assert partition_of("part-0.parquet") == ""


def test_path_values_are_typed_unescaped_and_null_for_the_default_partition() -> None:
    values = path_values("city=New York%2FNY/day=2026-03-01/n=-7/flag=true", SCHEMA)
    assert values == {"city": "New York/NY", "day": date(2026, 3, 1), "n": -7, "flag": True}
    assert path_values("city=__HIVE_DEFAULT_PARTITION__", SCHEMA) == {"city": None}
    assert path_values("", SCHEMA) == {}
    assert path_values("other=1", SCHEMA) == {}  # a path column the table does not have


def test_typed_value_of_each_kind() -> None:
    assert typed_value("12", SCHEMA.column("n").type) == 12
    assert typed_value("FALSE", SCHEMA.column("flag").type) is False
    assert typed_value(None, SCHEMA.column("day").type) is None


def test_missing_path_columns_become_constants_in_the_requested_order() -> None:
    rows = pa.table({"id": pa.array([1, 2], pa.int64())})
    filled = with_path_columns(rows, "city=ams/day=2026-01-02", SCHEMA, ["day", "id", "city"])
    assert filled.column_names == ["day", "id", "city"]
    assert filled.column("city").to_pylist() == ["ams", "ams"]
    assert filled.column("day").to_pylist() == [date(2026, 1, 2)] * 2
    assert filled.schema.field("day").type == pa.date32()


def test_null_partition_fills_typed_nulls() -> None:
    rows = pa.table({"id": pa.array([1], pa.int64())})
    filled = with_path_columns(rows, "n=__HIVE_DEFAULT_PARTITION__", SCHEMA, ["id", "n"])
    assert filled.column("n").type == pa.int32() and filled.column("n").to_pylist() == [None]


def test_a_stored_column_wins_over_the_path() -> None:
    """A lakeprune file stores its partition columns: they are read, never replaced."""
    rows = pa.table({"id": [1], "city": ["stored"]})
    assert with_path_columns(rows, "city=path", SCHEMA, ["id", "city"]).column("city").to_pylist() == [
        "stored"
    ]


def test_a_column_neither_stored_nor_in_the_path_is_left_out() -> None:
    rows = pa.table({"id": [1]})
    assert with_path_columns(rows, "", SCHEMA, ["id", "city"]).column_names == ["id"]


@pytest.mark.parametrize("text", ["x", "1.5"])
def test_a_bad_integer_path_value_raises(text: str) -> None:
    with pytest.raises(ValueError):
        path_values(f"n={text}", SCHEMA)


def test_an_adopted_file_keeps_its_path_through_commit_metadata() -> None:
    from pruner.metadata.files_index import DataFile

    adopted = DataFile("city=a", "city=a/part-0.snappy.parquet", "f" * 32, "20260101000000000", 10, 2)
    assert adopted.path == "city=a/part-0.snappy.parquet"
    assert DataFile.from_json(adopted.to_json()) == adopted
    own = DataFile(
        "city=a", f"{'f' * 32}_0-0-ab_20260101000000000.parquet", "f" * 32, "20260101000000000", 1, 1
    )
    assert DataFile.from_json(own.to_json()) == own
