"""Reading one data file as rows of the table schema. Columns the file lacks are taken from its
partition path where the path carries them (adopted Hive-style files, `pruner.format.path_columns`)
and are NULL otherwise; everything is cast to the table's Arrow types. Used by the pyarrow snapshot
reader and by the builder's reads of old file images (copy-on-write, index builds), so that all of
them see an adopted file the same way; `iter_data_file` reads a file a batch at a time for tasks that
need not hold all of it (adopt's key scan)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from pruner.format.path_columns import partition_of, with_path_columns
from pruner.storage import Storage
from pruner.types import TableSchema


def read_data_file(
    storage: Storage, path: str, schema: TableSchema, columns: Sequence[str] | None = None
) -> pa.Table:
    """The rows of the data file at `path` (relative to the table root) with `columns` (default:
    every table column), typed per `schema`. Raises OSError / ArrowInvalid for unreadable files."""
    return read_opened_data_file(pq.ParquetFile(storage.open_input_file(path)), path, schema, columns)


def read_opened_data_file(
    parquet: pq.ParquetFile, path: str, schema: TableSchema, columns: Sequence[str] | None = None
) -> pa.Table:
    """`read_data_file` of the file at `path` opened as `parquet`, for a caller that reads more of
    its footer (one open, one footer read)."""
    wanted = list(dict.fromkeys(columns if columns is not None else schema.names))
    stored = set(parquet.schema_arrow.names)
    rows = parquet.read(columns=[c for c in wanted if c in stored])
    return fill_columns(rows, partition_of(path), schema, wanted)


def iter_data_file(
    storage: Storage, path: str, schema: TableSchema, columns: Sequence[str], batch_rows: int
) -> Iterator[pa.Table]:
    """The rows of the data file at `path` as `read_data_file` gives them, in tables of at most
    `batch_rows` rows read one after the other (a row group is decoded once, not held whole)."""
    wanted = list(dict.fromkeys(columns))
    parquet = pq.ParquetFile(storage.open_input_file(path))
    stored = [c for c in wanted if c in set(parquet.schema_arrow.names)]
    if not stored:  # every column comes from the path: only the row count is read
        yield fill_columns(parquet.read(columns=[]), partition_of(path), schema, wanted)
        return
    partition = partition_of(path)
    for batch in parquet.iter_batches(batch_size=batch_rows, columns=stored):
        yield fill_columns(pa.Table.from_batches([batch]), partition, schema, wanted)


def fill_columns(rows: pa.Table, partition: str, schema: TableSchema, columns: Sequence[str]) -> pa.Table:
    """`rows` with exactly `columns`, typed per `schema`: absent ones from the partition path, or
    NULL when the path does not carry them either."""
    filled = with_path_columns(rows, partition, schema, columns)
    arrow = schema.to_arrow()
    target = pa.schema([arrow.field(c) for c in columns])
    for name in columns:
        if name not in filled.column_names:
            field = arrow.field(name)
            filled = filled.append_column(field, pa.nulls(filled.num_rows, field.type))
    return filled.select(list(columns)).cast(target)
