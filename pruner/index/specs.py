"""The metadata partitions of the user-defined data-skipping indexes, and the rows one data file
contributes to them. Writers call `rows_for_file` inside the Spark task that wrote the file (the
rows are still in memory); `index build` calls it for files written before the index existed.

| partition | key | payload |
|---|---|---|
| `column_stats` | column, partition path, file name | counts, typed min / max (`stats.py`) |
| `partition_stats` | column, partition path | the same, aggregated over the partition's live files |
| `bloom_filters` | column, partition path, file name | Parquet split-block bloom filter bytes |
| `func_index_<name>` | index name, partition path, file name [, value] | stats of f(col) (`functional.py`) |

All three hash on the partition path, so a commit reads and rewrites only the buckets of the
partitions it touched."""

from __future__ import annotations

import pyarrow as pa

from pruner.format.config import TableProperties
from pruner.index import bloom, secondary
from pruner.index.definitions import IndexDefinition, IndexType
from pruner.index.functional import functional_rows, functional_spec
from pruner.index.stats import column_stats_spec, file_stats, partition_stats_spec
from pruner.metadata.spec import IndexPartitionSpec
from pruner.types import TableSchema

BLOOM_SCHEMA = pa.schema(
    [
        pa.field("column", pa.string(), nullable=False),
        pa.field("partition", pa.string(), nullable=False),
        pa.field("file_name", pa.string(), nullable=False),
        pa.field("filter", pa.binary()),
    ]
)


def bloom_filters_spec(num_buckets: int) -> IndexPartitionSpec:
    return IndexPartitionSpec(
        "bloom_filters", ("column", "partition", "file_name"), "partition", BLOOM_SCHEMA, num_buckets
    )


def spec_for(
    definition: IndexDefinition, properties: TableProperties, schema: TableSchema
) -> IndexPartitionSpec:
    """The partition of a defined index. Every reader and writer of an index partition gets it here,
    so a definition whose name cannot be used (`IndexDefinition.check_usable`) stops them all."""
    definition.check_usable()
    if definition.index_type == IndexType.SECONDARY_INDEX:
        column = schema.column(definition.columns[0]).type
        return secondary.spec(definition.name, column, properties.index_secondary_index_buckets)
    if definition.index_type == IndexType.COLUMN_STATS:
        return column_stats_spec(properties.index_column_stats_buckets)
    if definition.index_type == IndexType.FUNCTIONAL:
        return functional_spec(definition, properties.index_column_stats_buckets)
    if definition.index_type == IndexType.PARTITION_STATS:
        return partition_stats_spec(properties.index_partition_stats_buckets)
    return bloom_filters_spec(properties.index_bloom_filters_buckets)


def rows_for_file(
    rows: pa.Table, schema: TableSchema, definitions: list[IndexDefinition], partition: str, file_name: str
) -> dict[str, pa.Table]:
    """Index rows of one data file for every per-file index (partition stats are derived later)."""
    out: dict[str, pa.Table] = {}
    for definition in definitions:
        if definition.index_type == IndexType.COLUMN_STATS:
            out[definition.index_partition] = file_stats(
                rows, schema, definition.columns, partition, file_name
            )
        elif definition.index_type == IndexType.FUNCTIONAL:
            out[definition.index_partition] = functional_rows(rows, schema, definition, partition, file_name)
        elif definition.index_type == IndexType.BLOOM_FILTERS:
            records = []
            for column in definition.columns:
                hashes = bloom.hash_values(rows.column(column))
                data = bloom.build(hashes, bloom.num_bytes_for(len(hashes), definition.fpp))
                records.append(
                    {"column": column, "partition": partition, "file_name": file_name, "filter": data}
                )
            out[definition.index_partition] = pa.Table.from_pylist(records, schema=BLOOM_SCHEMA)
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
