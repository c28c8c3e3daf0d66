"""The constant columns of a data file from its partition path. Hive-style directories written by
Spark's or Hive's `partitionBy` (adopted tables, `builder.adopt`) do not store the partition
columns inside the files: their values exist only in the path (`city=Paris/part-0.parquet`). Every
reader that finds such a column absent from a file fills it from here, typed per the table schema
(the null partition `__HIVE_DEFAULT_PARTITION__` is NULL; escaped characters are unescaped). Files
lakeprune writes store their partition columns, so for them nothing is filled. This is also the one
place a partition path's text is read as values: the planner's splits and `ListFiles` carry them
typed (`typed_value`), so engines on the wire never parse a partition value."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from pruner.errors import InvalidInputError, TableCorruptError
from pruner.format.keys import parse_partition_path
from pruner.predicate.values import Value, normalize
from pruner.types import ColumnType, TableSchema, TypeKind


def partition_of(path: str) -> str:
    """The partition path of a data file's path relative to the table root (its directory)."""
    return path.rpartition("/")[0]


def typed_value(text: str | None, column_type: ColumnType) -> Value | None:
    """A partition path's text (`canonical_text` of the value, unescaped) as the normalised value
    of its column's type, exactly (`pruner.predicate.values.normalize`); `ValueError` for a text
    that is not one. Every type of the type model: a value is parsed here, once, and travels typed
    from then on (the wire's `PartitionValue`, the planner's partition step, the filled columns)."""
    if text is None:
        return None
    raw: object = text  # strings, binaries (their UTF-8 text), decimals, dates and timestamps
    if column_type.kind.is_integer:
        raw = int(text)
    elif column_type.kind is TypeKind.FLOAT:
        # the shortest text that reads back as this float32 (Arrow's): its nearest float32, not
        # its nearest double (4.519759e+07 is the float32 45197592, not 45197590)
        raw = float(np.float32(float(text)))
    elif column_type.kind is TypeKind.DOUBLE:
        raw = float(text)
    elif column_type.kind is TypeKind.BOOLEAN:
        if text.lower() not in ("true", "false"):
            raise ValueError(f"{text!r} is not a boolean")
        raw = text.lower() == "true"
    try:
        return normalize(raw, column_type)
    except InvalidInputError as exc:
        raise ValueError(str(exc)) from None


def path_values(partition: str, schema: TableSchema) -> dict[str, Value | None]:
    """The typed values of the table columns that a partition path carries."""
    return {
        name: typed_value(text, schema.column(name).type)
        for name, text in parse_partition_path(partition).items()
        if schema.has(name)
    }


def file_path_values(partition: str, schema: TableSchema, table: str) -> dict[str, Value | None]:
    """`path_values` of a partition path of `table`'s own files, which its writer made from typed
    values: one that does not parse is a corrupt table (`TableCorruptError`, naming both)."""
    try:
        return path_values(partition, schema)
    except ValueError as exc:
        raise TableCorruptError(f"{table}: partition path {partition!r}: {exc}") from None


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
