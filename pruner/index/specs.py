"""The metadata partitions of the user-defined data-skipping indexes, and the rows one data file
contributes to them, both as the index's kind says (`pruner.index.kinds`). Writers call
`rows_for_file` inside the Spark task that wrote the file (the rows are still in memory);
`index build` calls it for files written before the index existed.

| partition | key | payload |
|---|---|---|
| `column_stats` | column, partition path, file name | counts, typed min / max (`stats.py`) |
| `partition_stats` | column, partition path | the same, aggregated over the partition's live files |
| `bloom_filters` | column, partition path, file name | Parquet split-block bloom filter bytes |
| `func_index_<name>` | index name, partition path, file name [, value] | stats of f(col) (`functional.py`) |
| `text_index_<name>` | column, partition path, file name | bloom filter of the file's text terms |

All of them hash on the partition path, so a commit reads and rewrites only the buckets of the
partitions it touched."""

from __future__ import annotations

import pyarrow as pa

from pruner.format.config import TableProperties
from pruner.index.definitions import IndexDefinition
from pruner.index.kinds import kind_of
from pruner.metadata.spec import IndexPartitionSpec
from pruner.types import TableSchema


def spec_for(
    definition: IndexDefinition, properties: TableProperties, schema: TableSchema
) -> IndexPartitionSpec:
    """The partition of a defined index. Every reader and writer of an index partition gets it here,
    so a definition whose name cannot be used (`IndexDefinition.check_usable`) stops them all."""
    definition.check_usable()
    return kind_of(definition.index_type).spec(definition, properties, schema)


def rows_for_file(
    rows: pa.Table, schema: TableSchema, definitions: list[IndexDefinition], partition: str, file_name: str
) -> dict[str, pa.Table]:
    """Index rows of one data file for every per-file index (partition stats are derived later)."""
    out: dict[str, pa.Table] = {}
    for definition in definitions:
        kind = kind_of(definition.index_type)
        built = kind.file_rows(rows, schema, definition, partition, file_name)
        if built is not None:
            out[kind.partition_name(definition)] = built
    return out


# Index rows shipped between Spark tasks are persisted and shuffled as these blobs. lz4 makes a
# chunk of record index rows (whose partition and file group repeat on every row) about a quarter
# of its Arrow size for ~0.4 ms more to encode and ~0.3 ms to decode a 1 MiB chunk; a data file's
# chunks shrink 2.2x at the same task time, and the end-to-end gain is within noise
# (bench/notes/driver_bottleneck.md, "Is 1.3x within reach?").
IPC_OPTIONS = pa.ipc.IpcWriteOptions(compression="lz4")


def to_ipc(table: pa.Table) -> bytes:
    """Serialise index rows to ship them between Spark tasks (Arrow IPC stream, compressed)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema, options=IPC_OPTIONS) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def from_ipc(data: bytes | pa.Buffer) -> pa.Table:
    return pa.ipc.open_stream(data).read_all()
