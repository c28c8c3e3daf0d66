"""Compaction of index partitions: a bucket whose log files since its base pass a threshold gets a
new base file (base + logs merged), written as a `compaction` instant of its own so that readers
switch to it atomically and older snapshots keep reading the old base until a clean removes it.
A bucket is merged as sorted runs (`compact_bucket`, memory about one row group per file). An index
partition whose buckets to compact hold at least `index.compaction_spark_threshold_bytes` is
compacted by a Spark job, its buckets in parallel on executors; smaller ones in this process."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa
from pyspark.sql import SparkSession

from builder.instants import rollback_pending, run_instant
from builder.lock import table_lock
from builder.task_batches import over_tasks
from pruner.format.timeline import Action
from pruner.metadata.index_partition import IndexPartitionView, compact_bucket
from pruner.table.table import LakeTable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompactionReport:
    instant: str | None
    buckets: dict[str, list[int]] = field(default_factory=dict)

    @property
    def bucket_count(self) -> int:
        return sum(len(b) for b in self.buckets.values())


def compact(location: str, force: bool = True, spark: SparkSession | None = None) -> CompactionReport:
    """Compact a table's index partitions: every bucket with logs (`force`), or only those past
    the table's `index.compaction.max_log_files`."""
    table = LakeTable.open(location)
    with table_lock(table.storage, "compaction"):
        rollback_pending(table.storage)
        return compact_locked(table.refresh(), force, spark)


def compact_locked(table: LakeTable, force: bool, spark: SparkSession | None = None) -> CompactionReport:
    """Compaction for a caller that already holds the table lock (the writer, after a commit). A
    large partition runs in `spark` (or the embedded session when none is given)."""
    threshold = 1 if force else table.config.properties.index_compaction_max_log_files
    snapshot = table.snapshot()
    snapshot.files()  # a files index naming an instant the timeline lacks stops it (TableDamagedError)
    views = {spec.name: snapshot.index_partition(spec) for spec in table.index_partition_specs()}
    plan = {
        name: sorted(b for b, n in view.log_counts().items() if n >= threshold)
        for name, view in views.items()
    }
    plan = {name: buckets for name, buckets in plan.items() if buckets}
    if not plan:
        return CompactionReport(None)
    threshold = table.config.properties.index_compaction_spark_threshold_bytes
    large = {name for name, buckets in plan.items() if _bytes(views[name], buckets) >= threshold}
    with run_instant(table.storage, Action.COMPACTION, {"buckets": plan}) as pending:
        pending.inflight([], list(plan))
        for name, buckets in plan.items():
            if name not in large:
                for bucket in buckets:
                    compact_bucket(views[name], bucket, pending.timestamp)
        if large:
            log.info("compacting %s in Spark", ", ".join(sorted(large)))
            _compact_in_spark(spark, {name: views[name] for name in large}, plan, pending.timestamp)
        pending.complete({"buckets": plan})
    report = CompactionReport(pending.timestamp, plan)
    log.info("compacted %d index buckets at %s", report.bucket_count, report.instant)
    return report


def _bytes(view: IndexPartitionView, buckets: list[int]) -> int:
    """Bytes of the files of `buckets` (one listing of the partition's directory)."""
    sizes = {e.rel.rpartition("/")[2]: e.size for e in view.storage.list_files(view.spec.directory)}
    return sum(sizes.get(str(n), 0) for b in buckets for n in view.buckets[b].names)


def _compact_in_spark(
    spark: SparkSession | None, views: dict[str, IndexPartitionView], plan: dict[str, list[int]], instant: str
) -> list[str]:
    """One task per bucket (up to 64 at once) runs `compact_bucket` on an executor."""
    from builder.session import job_session

    session = job_session(spark)
    work = [(name, bucket) for name in sorted(views) for bucket in plan[name]]
    listing = pa.table(
        {
            "index_partition": pa.array([name for name, _ in work], pa.string()),
            "bucket": pa.array([bucket for _, bucket in work], pa.int32()),
        }
    )

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            paths = [
                compact_bucket(views[item["index_partition"]], item["bucket"], instant)
                for item in batch.to_pylist()
            ]
            yield pa.RecordBatch.from_pydict({"path": paths}, schema=pa.schema([("path", pa.string())]))

    written = over_tasks(session, listing, 64, run, "path string").collect()
    return [r["path"] for r in written]
