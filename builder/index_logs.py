"""Index log files written by Spark executors, bucket by bucket, so that the driver never holds
index rows. Whoever computes index rows (the write tasks, an index build's tasks, the driver for the
few rows proportional to files) cuts them into *chunks*: the rows of one index partition's bucket,
as Arrow IPC of at most about `CHUNK_MAX_BYTES`, with an order, a source and a piece number (a
bucket's rows from one source, cut in pieces). The chunks are shuffled by (index partition,
bucket) and sorted (`SORT_KEY`); a task takes its buckets one at a time, concatenates a bucket's
chunks in (order, source, piece) order and writes the bucket's log file with
`pruner.metadata.index_partition.write_bucket_log` (the last row of a key wins; the rows are not
hashed again), which gives each bucket the same log a single `write_logs` call over all of the
commit's rows gives it. A secondary index's
rows are then put tombstones first (`order_for_commit`), as a commit has always ordered them.

Orders: `ROWS` (log rows with their op: upserts, a secondary index's pair changes), `TOMBSTONES`
(log rows the driver derived from the files a commit removed), `PREVIOUS` (the partition and file
name of removed files of an index keyed by value: the task tombstones the rows its bucket held for
them in the previous snapshot, which are proportional to data, so they are read there)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

from builder.task_batches import BatchFunction, runs
from pruner.format.keys import value_hashes
from pruner.index.secondary import order_for_commit
from pruner.index.specs import from_ipc, to_ipc
from pruner.metadata.index_partition import IndexPartitionView, write_bucket_log
from pruner.metadata.merge import with_op
from pruner.metadata.spec import OP_DELETE, IndexPartitionSpec
from pruner.storage import Storage

ROWS = 0
TOMBSTONES = 1
PREVIOUS = 2

INDEX_PARTITION = "index_partition"
CHUNK_SCHEMA = pa.schema(
    [
        (INDEX_PARTITION, pa.string()),
        ("bucket", pa.int32()),
        ("order", pa.int8()),
        ("source", pa.string()),
        ("piece", pa.int32()),
        ("data", pa.binary()),
    ]
)
CHUNK_STRUCT = from_arrow_schema(CHUNK_SCHEMA)
# The order of a bucket's chunks: its log is their rows in this order (the last row of a key wins).
SORT_KEY = (INDEX_PARTITION, "bucket", "order", "source", "piece")
REMOVED_SCHEMA = pa.schema([("partition", pa.string()), ("file_name", pa.string())])
# The log-writing job runs at most this many tasks, and at most `TASKS_PER_CORE` a core of the
# session (a task writes its buckets one after the other): on local[1], one task a bucket made a
# commit's 36 buckets 36 Python tasks, each costing more to start than its bucket's rows.
MAX_TASKS = 64
TASKS_PER_CORE = 4
# Chunks are persisted between the job that computes them and the one that writes the logs, and
# Spark's Java serializer keeps the last 100 objects it wrote to a persisted block in the heap
# (`spark.serializer.objectStreamReset`): with one chunk per cached batch (`builder.intermediates`)
# this cap bounds that to ~100 MiB per task, whatever the size of the data.
CHUNK_MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class LogTarget:
    """An index partition that a commit writes logs into. `pairs`: a secondary index (tombstones
    go first). `previous`: the partition as of the previous snapshot, for `PREVIOUS` chunks."""

    spec: IndexPartitionSpec
    pairs: bool = False
    previous: IndexPartitionView | None = None


def _pieces(rows: pa.Table, max_bytes: int) -> list[pa.Table]:
    """`rows` in consecutive slices of at most about `max_bytes` each (at least one row each)."""
    row_bytes = max(1, rows.nbytes // max(1, rows.num_rows))
    step = max(1, max_bytes // row_bytes)
    return [rows.slice(offset, step) for offset in range(0, rows.num_rows, step)]


def _split(
    spec: IndexPartitionSpec,
    rows: pa.Table,
    buckets: np.ndarray,
    order: int,
    source: str,
    max_bytes: int,
) -> list[dict[str, object]]:
    return [
        {
            INDEX_PARTITION: spec.name,
            "bucket": int(bucket),
            "order": order,
            "source": source,
            "piece": piece,
            "data": to_ipc(part),
        }
        for bucket in np.unique(buckets)
        for piece, part in enumerate(_pieces(rows.filter(pa.array(buckets == bucket)), max_bytes))
    ]


def chunks(
    spec: IndexPartitionSpec, rows: pa.Table, order: int, source: str, max_bytes: int = CHUNK_MAX_BYTES
) -> list[dict[str, object]]:
    """Log rows (with their op) of one index partition: chunks of at most about `max_bytes` for
    each bucket they touch."""
    if rows.num_rows == 0:
        return []
    rows = rows.select(spec.log_schema.names).cast(spec.log_schema)
    return _split(spec, rows, spec.buckets(rows), order, source, max_bytes)


def previous_chunks(spec: IndexPartitionSpec, removed: pa.Table) -> list[dict[str, object]]:
    """`PREVIOUS` chunks for removed files (`REMOVED_SCHEMA`) of a partition hashed by partition path."""
    assert spec.hash_field == "partition", spec.name
    if removed.num_rows == 0:
        return []
    buckets = spec.buckets_of_hashes(value_hashes(removed.column("partition")))
    return _split(spec, removed.cast(REMOVED_SCHEMA), buckets, PREVIOUS, "", CHUNK_MAX_BYTES)


def chunk_batch(items: list[dict[str, object]]) -> Iterator[pa.RecordBatch]:
    """Chunks as record batches for a `mapInArrow` output (one batch per chunk: binary columns
    have 32-bit offsets, so many large chunks must not share one batch)."""
    for item in items:
        yield pa.RecordBatch.from_pylist([item], schema=CHUNK_SCHEMA)


def _previous_rows(target: LogTarget, bucket: int, removed: pa.Table) -> pa.Table:
    spec = target.spec
    if target.previous is None or bucket not in target.previous.buckets:
        return spec.log_schema.empty_table()
    rows = target.previous.read_bucket(bucket, pc.unique(removed.column("partition").combine_chunks()))
    rows = rows.filter(pc.is_in(rows["file_name"], value_set=removed.column("file_name").combine_chunks()))
    return with_op(rows.select(spec.schema.names).cast(spec.schema), OP_DELETE)


def _bucket_rows(target: LogTarget, bucket: int, group: pa.Table) -> pa.Table:
    """One bucket's log rows from its chunks (sorted by order, source and piece)."""
    tables = []
    for order, data in zip(group.column("order").to_pylist(), group.column("data"), strict=True):
        rows = from_ipc(data.as_buffer())
        if order == PREVIOUS:
            rows = _previous_rows(target, bucket, rows)
        tables.append(rows.select(target.spec.log_schema.names).cast(target.spec.log_schema))
    rows = pa.concat_tables(tables)
    return order_for_commit(rows) if target.pairs else rows


def write_chunks(storage: Storage, targets: dict[str, LogTarget], instant: str) -> BatchFunction:
    """The task: write one log file per (index partition, bucket) among its chunks, which arrive
    sorted by `SORT_KEY`; it holds one bucket's chunks at a time."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        written: list[str] = []
        for run_ in runs(batches, [INDEX_PARTITION, "bucket"]):
            bucket_chunks = run_.cast(CHUNK_SCHEMA)
            target = targets[bucket_chunks.column(INDEX_PARTITION)[0].as_py()]
            bucket = bucket_chunks.column("bucket")[0].as_py()
            rows = _bucket_rows(target, bucket, bucket_chunks)
            if rows.num_rows:  # every chunk holds rows of its bucket only (`chunks`)
                written.append(write_bucket_log(storage, target.spec, instant, bucket, rows))
        if written:
            yield pa.RecordBatch.from_pydict({"path": written}, schema=pa.schema([("path", pa.string())]))

    return run


def as_chunk_frame(spark: SparkSession, items: Iterable[dict[str, object]]) -> DataFrame:
    """Chunks the driver made (rows proportional to files, never to data) as a DataFrame."""
    return spark.createDataFrame([tuple(item[f] for f in CHUNK_STRUCT.names) for item in items], CHUNK_STRUCT)


def write_by_bucket(
    chunk_frame: DataFrame, storage: Storage, targets: dict[str, LogTarget], instant: str
) -> list[str]:
    """Shuffle chunks by (index partition, bucket) and write every bucket's log in a task; returns
    the relative paths written (for the instant's `index_files`)."""
    if not targets:
        return []
    cores = chunk_frame.sparkSession.sparkContext.defaultParallelism
    buckets = sum(t.spec.num_buckets for t in targets.values())
    tasks = max(1, min(buckets, MAX_TASKS, cores * TASKS_PER_CORE))
    written = (
        chunk_frame.select(*CHUNK_SCHEMA.names)
        .repartition(tasks, INDEX_PARTITION, "bucket")
        .sortWithinPartitions(*SORT_KEY)
        .mapInArrow(write_chunks(storage, targets, instant), "path string")
        .collect()
    )
    return [r["path"] for r in written]
