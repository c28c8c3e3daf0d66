"""Compaction of index partitions: a bucket whose log files since its base pass a threshold gets a
new base file (base + logs merged), written as a `compaction` instant of its own so that readers
switch to it atomically and older snapshots keep reading the old base until a clean removes it.
Runs on the driver with pyarrow: buckets are small by construction."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from builder.instants import rollback_pending, run_instant
from builder.lock import table_lock
from pruner.format.timeline import Action
from pruner.metadata.index_partition import compact_bucket
from pruner.table.table import LakeTable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompactionReport:
    instant: str | None
    buckets: dict[str, list[int]] = field(default_factory=dict)

    @property
    def bucket_count(self) -> int:
        return sum(len(b) for b in self.buckets.values())


def compact(location: str, force: bool = True) -> CompactionReport:
    """Compact a table's index partitions: every bucket with logs (`force`), or only those past
    the table's `index.compaction.max_log_files`."""
    table = LakeTable.open(location)
    with table_lock(table.storage, "compaction"):
        rollback_pending(table.storage)
        return compact_locked(table.refresh(), force)


def compact_locked(table: LakeTable, force: bool) -> CompactionReport:
    """Compaction for a caller that already holds the table lock (the writer, after a commit)."""
    threshold = 1 if force else table.config.properties.index_compaction_max_log_files
    snapshot = table.snapshot()
    views = {spec.name: snapshot.index_partition(spec) for spec in table.index_partition_specs()}
    plan = {
        name: sorted(b for b, n in view.log_counts().items() if n >= threshold)
        for name, view in views.items()
    }
    plan = {name: buckets for name, buckets in plan.items() if buckets}
    if not plan:
        return CompactionReport(None)
    with run_instant(table.storage, Action.COMPACTION, {"buckets": plan}) as pending:
        pending.inflight([], list(plan))
        for name, buckets in plan.items():
            for bucket in buckets:
                compact_bucket(views[name], bucket, pending.timestamp)
        pending.complete({"buckets": plan})
    report = CompactionReport(pending.timestamp, plan)
    log.info("compacted %d index buckets at %s", report.bucket_count, report.instant)
    return report
