"""Functions that run inside Spark tasks through `mapInArrow`. Each factory closes over plain,
picklable values and returns the per-partition function. They call the same pyarrow code the query
side uses (record keys, buckets, partition paths, index partition storage), so Spark never
re-implements a format rule.

- `annotate`: adds the encoded record key, its record-index bucket and the partition path.
- `lookup_locations`: tags keys with their current (partition, file group) from the record index.
- `held_locations`: every key the record index holds, with its location (an overwrite's keys to
  delete are those of them its input does not hold).
- `rewrite_file_groups`: writes one new file slice per target file group (copy-on-write), computes
  the new file's index rows while they are in memory (diffing the old image against the new rows
  for the secondary indexes) and the record index's rows of the keys the plan moved to or removed
  from the group, and returns them cut into chunks by bucket for `builder.index_logs`. A table's
  first insert on an object store plans its rows without their encoded keys (`builder.write.bulk`):
  the rewrite encodes them.
- `FileIndexRows`: the index rows of a group's new file, shared with the tasks that index the files
  Spark wrote for a table's first insert (`builder.write.bulk`)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql.pandas.types import from_arrow_schema

from builder import index_logs
from builder.task_batches import BatchFunction, runs
from pruner.format.config import TableConfig
from pruner.format.keys import buckets_of, encode_record_keys, partition_paths
from pruner.format.layout import DataFileName, data_file_path
from pruner.format.parquet_encoding import dictionary_columns
from pruner.index.definitions import IndexDefinition, IndexState
from pruner.index.kinds import kind_of, partition_of
from pruner.index.specs import rows_for_file, spec_for
from pruner.metadata.files_index import DataFile
from pruner.metadata.index_partition import IndexPartitionView
from pruner.metadata.merge import with_op
from pruner.metadata.spec import OP_FIELD, OP_UPSERT, IndexPartitionSpec
from pruner.storage import Storage
from pruner.table.data_files import read_data_file

KEY = "_lp_key"
BUCKET = "_lp_bucket"
PARTITION = "_lp_partition"
FILE_GROUP = "_lp_fg"
ACTION = "_lp_action"  # 0: add this row to the file group; 1: remove this key from it
# The record index op the plan gives a row: OP_UPSERT where the key gets this (partition, file
# group) as its location (new keys, moved keys), OP_DELETE where a delete removes it, null where its
# location does not change (an update in place, the old copy of a moved key).
RECORD_OP = "_lp_record_op"
OLD_PARTITION = "_lp_old_partition"
OLD_FILE_GROUP = "_lp_old_fg"
ACTION_ADD = 0
ACTION_REMOVE = 1

LOCATION_SCHEMA = pa.schema([(KEY, pa.string()), (OLD_PARTITION, pa.string()), (OLD_FILE_GROUP, pa.string())])
HELD_SCHEMA = LOCATION_SCHEMA.append(pa.field(BUCKET, pa.int32()))
HELD_STRUCT = from_arrow_schema(HELD_SCHEMA)
FILE_FIELDS = ["partition", "file_name", "file_group", "size", "rows"]
# One row per target file group (index fields null; file name null when the group emptied), and
# one per (index partition, bucket) chunk of the index rows of the group's new file (file fields
# null but the file group): see `builder.index_logs`.
WRITTEN_SCHEMA = pa.schema(
    [
        ("partition", pa.string()),
        ("file_name", pa.string()),
        ("file_group", pa.string()),
        ("size", pa.int64()),
        ("rows", pa.int64()),
        *((f.name, f.type) for f in index_logs.CHUNK_SCHEMA if f.name != "source"),
    ]
)
WRITTEN_STRUCT = from_arrow_schema(WRITTEN_SCHEMA)


def _collect(batches: Iterator[pa.RecordBatch]) -> pa.Table | None:
    collected = list(batches)
    if not collected:
        return None
    table = pa.Table.from_batches(collected)
    return table if table.num_rows else None


def annotate(
    key_fields: tuple[str, ...], partition_fields: tuple[str, ...], num_buckets: int
) -> BatchFunction:
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            keys = encode_record_keys(batch, key_fields)
            yield (
                pa.Table.from_batches([batch])
                .append_column(KEY, keys)
                .append_column(PARTITION, partition_paths(batch, partition_fields))
                .append_column(BUCKET, pa.array(buckets_of(keys, num_buckets)))
                .combine_chunks()
                .to_batches()[0]
            )

    return run


def lookup_locations(view: IndexPartitionView) -> BatchFunction:
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = _collect(batches)
        if table is None:
            return
        buckets = table.column(BUCKET).to_numpy()
        keys = table.column(KEY).combine_chunks()
        for bucket in np.unique(buckets):
            found = view.read_bucket(int(bucket), keys.filter(pa.array(buckets == bucket)))
            if found.num_rows:
                yield (
                    pa.table([found["key"], found["partition"], found["file_group"]], schema=LOCATION_SCHEMA)
                    .combine_chunks()
                    .to_batches()[0]
                )

    return run


def held_locations(view: IndexPartitionView) -> BatchFunction:
    """For each bucket number of the input's one column, the bucket's live keys with their
    location and the bucket (`HELD_SCHEMA`)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for bucket in batch.column(0).to_pylist():
                found = view.read_bucket(int(bucket))
                if found.num_rows:
                    buckets = pa.array(np.full(found.num_rows, bucket, dtype=np.int32))
                    columns = [found["key"], found["partition"], found["file_group"], buckets]
                    yield pa.table(columns, schema=HELD_SCHEMA).combine_chunks().to_batches()[0]

    return run


def _write_token() -> str:
    from pyspark import TaskContext

    context = TaskContext.get()
    prefix = f"{context.partitionId()}-{context.attemptNumber()}" if context else "0-0"
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def record_index_rows(group: pa.Table) -> pa.Table:
    """The record index's log rows of one file group's planned rows: those the plan gave an op."""
    changed = group.filter(pc.is_valid(group.column(RECORD_OP)))
    return pa.table(
        {
            "key": changed.column(KEY),
            "partition": changed.column(PARTITION),
            "file_group": changed.column(FILE_GROUP),
            OP_FIELD: changed.column(RECORD_OP),
        }
    )


@dataclass(frozen=True)
class FileIndexRows:
    """The index log rows of a file group's new file, for every index the table maintains: the
    record index's (from the planned rows' ops, or every key of a new group's file), each secondary
    index's pair changes (the old image diffed against the new rows), and the per-file indexes'
    upserts; cut into chunks by bucket for `builder.index_logs`. Shared by the rewrite tasks and by
    the tasks that index the files Spark wrote for a table's first insert (`builder.write.bulk`)."""

    config: TableConfig
    definitions: tuple[IndexDefinition, ...]
    record_index: IndexPartitionSpec

    @cached_property
    def specs(self) -> dict[str, IndexPartitionSpec]:
        config = self.config
        specs = {partition_of(d): spec_for(d, config.properties, config.schema) for d in self.definitions}
        return specs | {self.record_index.name: self.record_index}

    @cached_property
    def columns(self) -> tuple[str, ...]:
        """The table columns these index rows are computed from: the record key's and every
        index's (`IndexKind.reads`)."""
        record_key = self.config.record_key
        indexed = (name for d in self.definitions for name in kind_of(d.index_type).reads(d, record_key))
        return tuple(dict.fromkeys((*record_key, *indexed)))

    def pair_changes(self, old: pa.Table | None, new: pa.Table) -> dict[str, pa.Table]:
        """The log rows of the indexes keyed by value and record key (`Leftover.NOTHING` kinds) for
        one file group rewritten from `old` to `new`; an index still being built gets every pair."""
        out = {}
        for d in self.definitions:
            partition = partition_of(d)
            changes = kind_of(d.index_type).file_group_changes(
                old, new, d, self.config.record_key, self.specs[partition], full=d.state != IndexState.READY
            )
            if changes is not None:
                out[partition] = changes
        return out

    def per_file(self, rows: pa.Table, partition: str, file_name: str) -> dict[str, pa.Table]:
        per_file = rows_for_file(rows, self.config.schema, list(self.definitions), partition, file_name)
        schemas = {index: self.specs[index].schema for index in per_file}
        return {
            index: with_op(upserts.select(schemas[index].names).cast(schemas[index]), OP_UPSERT)
            for index, upserts in per_file.items()
        }

    def chunks(self, log_rows: dict[str, pa.Table], file_group: str) -> list[dict[str, object]]:
        """`WRITTEN_SCHEMA` rows of the chunks of `log_rows` (index partition -> rows with op)."""
        out = []
        for index, changes in log_rows.items():
            for chunk in index_logs.chunks(self.specs[index], changes, index_logs.ROWS, file_group):
                source = chunk.pop("source")
                out.append({**chunk, "file_group": source})
        return out


def written_batches(items: list[dict[str, object]]) -> Iterator[pa.RecordBatch]:
    """`WRITTEN_SCHEMA` rows, one batch per row: index chunks are binary blobs (32-bit offsets per
    batch)."""
    for item in items:
        yield pa.RecordBatch.from_pylist([item], schema=WRITTEN_SCHEMA)


def rewrite_file_groups(
    storage: Storage,
    config: TableConfig,
    definitions: list[IndexDefinition],
    record_index: IndexPartitionSpec,
    live: dict[str, DataFile],
    instant: str,
) -> BatchFunction:
    """For each target file group: old slice minus every touched key, plus the added rows. Also
    computes the new file's rows for every per-file index while the rows are in memory, and the
    record index's rows of the group's keys that change location."""
    schema = config.schema.to_arrow()
    key_fields = config.record_key
    row_group_bytes = config.properties.write_row_group_bytes
    indexer = FileIndexRows(config, tuple(definitions), record_index)

    def rewrite(group: pa.Table, token: str) -> list[dict[str, object]]:
        file_group = group.column(FILE_GROUP)[0].as_py()
        if KEY not in group.column_names:  # a first insert's plan (`builder.write.bulk`): all adds
            group = group.append_column(KEY, encode_record_keys(group, key_fields))
        is_add = pc.equal(group.column(ACTION), ACTION_ADD)
        added = group.filter(is_add).select(schema.names).cast(schema)
        existing = live.get(file_group)
        parts = [added]
        old = None
        if existing is not None:
            old = read_data_file(storage, existing.path, config.schema)
            touched = pc.unique(group.column(KEY))
            keep = pc.invert(pc.is_in(encode_record_keys(old, key_fields), value_set=touched))
            parts.insert(0, old.cast(schema).filter(keep))
        rows = pa.concat_tables(parts).sort_by([(k, "ascending") for k in key_fields])
        partition = existing.partition if existing else group.column(PARTITION)[0].as_py()
        result: dict[str, object] = {
            "partition": partition,
            "file_name": None,
            "file_group": file_group,
            "size": 0,
            "rows": rows.num_rows,
        }
        # Secondary indexes diff the old image against the new rows, also for a group that empties.
        log_rows = {record_index.name: record_index_rows(group), **indexer.pair_changes(old, rows)}
        if rows.num_rows:
            name = DataFileName(file_group, token, instant)
            rel = data_file_path(partition, name)
            per_row = max(1, rows.nbytes // rows.num_rows)
            with storage.open_output_stream(rel) as sink:
                pq.write_table(
                    rows,
                    sink,
                    row_group_size=max(1024, row_group_bytes // per_row),
                    compression="zstd",
                    use_dictionary=dictionary_columns(rows),
                    coerce_timestamps="us",
                )
            result["file_name"] = str(name)
            result["size"] = int(storage.fs.get_file_info(storage.path(rel)).size)
            log_rows |= indexer.per_file(rows, partition, str(name))
        return [result, *indexer.chunks(log_rows, file_group)]

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        token = _write_token()
        for group in runs(batches, [FILE_GROUP]):
            yield from written_batches(rewrite(group, token))

    return run
