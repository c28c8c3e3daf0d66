"""Partition evolution (RFC-63 use case 2): changing the partition fields a table writes new
records with, without rewriting its data. The change is a new `table.json` (published atomically,
under the table lock, so no write runs with half of it) whose `partition_history` records the
earlier fields and the last commit written before the change. Existing file groups keep their
partition paths; readers never assume a file's partition columns from the table's current fields,
they take them from the file's own path. A record updated later moves to a file group of the
current partitioning. No Spark is needed."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from builder.instants import rollback_pending
from builder.lock import table_lock
from pruner.format.config import TableConfig, load_config, save_config
from pruner.format.timeline import Timeline
from pruner.storage import Storage

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PartitioningChange:
    """What `alter_partitioning` did: the fields before and after, and the last commit written
    with the old ones (None: nothing written yet)."""

    before: tuple[str, ...]
    after: tuple[str, ...]
    until: str | None
    config: TableConfig


def alter_partitioning(location: str, partition_by: Sequence[str]) -> PartitioningChange:
    """Partition records written from now on by `partition_by` (empty: unpartitioned). Raises a
    `LakepruneError` for an unknown column, an unsupported type, a repeated column or no change;
    nothing is written then."""
    storage = Storage.from_uri(location)
    fields = tuple(p.strip() for p in partition_by)
    load_config(storage)  # a missing or corrupt table fails before the lock is taken
    with table_lock(storage, "alter partitioning"):
        rolled_back = rollback_pending(storage)
        if rolled_back:
            log.warning("rolled back incomplete instant(s) %s", ", ".join(rolled_back))
        config = load_config(storage)
        commits = Timeline.load(storage).commits()
        until = commits[-1].timestamp if commits else None
        changed = config.with_partitioning(fields, until)
        save_config(storage, changed)
    log.info(
        "table %s: partitioned by %s from now on (was %s up to instant %s)",
        config.name,
        ", ".join(fields) or "(none)",
        ", ".join(config.partition_fields) or "(none)",
        until,
    )
    return PartitioningChange(config.partition_fields, fields, until, changed)
