"""The constant columns of a data file from its partition path. Hive-style directories written by
Spark's or Hive's `partitionBy` (adopted tables, `builder.adopt`) do not store the partition
columns inside the files: their values exist only in the path (`city=Paris/part-0.parquet`). Every
reader that finds such a column absent from a file fills it from here, typed per the table schema
(the null partition `__HIVE_DEFAULT_PARTITION__` is NULL; escaped characters are unescaped). Files
lakeprune writes store their partition columns, so for them nothing is filled."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import pyarrow as pa

from pruner.format.keys import parse_partition_path
from pruner.types import ColumnType, TableSchema, TypeKind

PathValue = bool | int | date | str


def partition_of(path: str) -> str:
    """The partition path of a data file's path relative to the table root (its directory)."""
    return path.rpartition("/")[0]


def typed_value(text: str | None, column_type: ColumnType) -> PathValue | None:
    """A partition path's text as a value of its column's type."""
    if text is None:
        return None
    if column_type.kind.is_integer:
        return int(text)
    match column_type.kind:
        case TypeKind.DATE:
            return date.fromisoformat(text)
        case TypeKind.BOOLEAN:
            return text.lower() == "true"
        case _:  # strings: the path holds the value itself
            return text


def path_values(partition: str, schema: TableSchema) -> dict[str, PathValue | None]:
    """The typed values of the table columns that a partition path carries."""
    return {
        name: typed_value(text, schema.column(name).type)
        for name, text in parse_partition_path(partition).items()
        if schema.has(name)
    }


def with_path_columns(
    rows: pa.Table, partition: str, schema: TableSchema, columns: Sequence[str]
) -> pa.Table:
    """`rows` (read from a file of `partition`) with each of `columns` that it lacks but the path
    carries added as a constant column; the result has `columns` in order wherever available (a
    column neither stored nor in the path is left out, for the caller's schema handling)."""
    missing = [c for c in columns if c not in rows.column_names]
    if not missing:
        return rows.select([c for c in columns if c in rows.column_names])
    values = path_values(partition, schema)
    arrow = schema.to_arrow()
    for name in missing:
        if name in values:
            constant = pa.array([values[name]] * rows.num_rows, arrow.field(name).type)
            rows = rows.append_column(arrow.field(name), constant)
    return rows.select([c for c in columns if c in rows.column_names])
