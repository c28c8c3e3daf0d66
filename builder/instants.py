"""Running an action as an instant: requested -> inflight (listing the data and index partitions it
will write into) -> completed, and rolling back an instant that did not complete by deleting every
file named with it in those partitions, and its staging directory (files Spark wrote for it that
were not yet moved into their partitions). The next writer rolls back what a crashed one left, and
deletes the temporary files of timeline states it died publishing (local disks); an action that
fails with an exception rolls itself back at once, except when it lost its instant to another
writer (a `ConflictError` from the timeline): the instant's files are then that writer's, and are
left alone."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pruner.errors import ConflictError, TableCorruptError, TableDamagedError
from pruner.format import timeline as tl
from pruner.format.layout import (
    METADATA_DIR,
    STAGING_DIR,
    TIMELINE_DIR,
    staging_dir,
    written_by,
)
from pruner.format.manifest import IndexFileManifest
from pruner.format.timeline import Action, Instant, State, Timeline
from pruner.storage import Storage, is_hidden_temp
from pruner.table.integrity import require_intact

log = logging.getLogger(__name__)


@dataclass
class PendingInstant:
    """An instant being written; `inflight` must be called before any file is written."""

    storage: Storage
    instant: Instant
    completed: Instant | None = None
    touched: dict[str, list[str]] = field(default_factory=dict)
    lost: bool = False  # another writer took the instant: its files are not ours to roll back

    @property
    def timestamp(self) -> str:
        return self.instant.timestamp

    def inflight(self, data_partitions: list[str], index_partitions: list[str]) -> None:
        self.touched = {
            "data_partitions": sorted(set(data_partitions)),
            "index_partitions": sorted(set(index_partitions)),
        }
        try:
            self.instant = tl.mark_inflight(self.storage, self.instant, self.touched)
        except ConflictError:
            self.lost = True
            raise

    def complete(self, content: dict[str, Any]) -> Instant:
        try:
            self.completed = tl.complete(self.storage, self.instant, {**self.touched, **content})
        except ConflictError:
            self.lost = True
            raise
        return self.completed


@contextmanager
def run_instant(storage: Storage, action: Action, content: dict[str, Any]) -> Iterator[PendingInstant]:
    """Run a block as a new instant; if the block raises (or never completes), roll it back unless
    the instant was lost to another writer. `ConflictError` from `request`: nothing was written."""
    pending = PendingInstant(storage, tl.request(storage, action, content))
    try:
        yield pending
    finally:
        if pending.completed is None and not pending.lost:
            rollback(storage, Timeline.load(storage), pending.instant)


def rollback(storage: Storage, timeline: Timeline, instant: Instant) -> int:
    """Delete the files an incomplete instant wrote, then its timeline files. Returns files deleted.

    A partition whose path cannot exist on the storage (an index named, before names were checked,
    beyond the file system's name limit) lists as empty (`Storage.list_files`): nothing can have
    been written there, so there is nothing to delete and the rollback goes on. Any other storage
    error propagates before the timeline files are touched, and the instant stays pending for the
    next writer to roll back again. Removing the timeline entry while files of the instant may
    remain would be worse than failing: readers would not see those files (their instant never
    completes) and `clean` deletes them eventually, but a later instant that reuses the timestamp
    (the next instant is only chosen after the latest one *on the timeline*, and a clock can step
    back) would adopt them, and their index log rows (tombstones included) would join its commit.

    Only an instant of the timeline's tail (newer than every completed one) is rolled back: below
    a completed instant an incomplete one is damage, and its files may be committed rows."""
    if instant not in timeline.tail():
        raise TableDamagedError(
            f"table {storage.uri}: instant {instant.timestamp} is not newer than every completed "
            "instant, so it is not rolled back; nothing was deleted. `lakeprune table check` says more"
        )
    content: dict[str, Any] = {}
    if instant.state == State.INFLIGHT:
        try:
            content = timeline.read(instant, State.INFLIGHT)
        except TableCorruptError:
            content = {}
    data_partitions = content.get("data_partitions")
    index_partitions = content.get("index_partitions")
    deleted = 0
    if instant.state == State.INFLIGHT:
        if data_partitions is None or index_partitions is None:  # unreadable: scan everything
            deleted += _delete_written_by(storage, "", instant.timestamp, recursive=True)
        else:
            for partition in data_partitions:
                deleted += _delete_written_by(storage, partition, instant.timestamp)
            for name in index_partitions:
                deleted += _delete_written_by(storage, f"{METADATA_DIR}/{name}", instant.timestamp)
        if delete_staged(storage, instant.timestamp):
            log.info("deleted the staged files of %s", instant.timestamp)
    tl.remove_pending(storage, instant)
    log.info("rolled back %s %s (%d files deleted)", instant.action, instant.timestamp, deleted)
    return deleted


def delete_staged(storage: Storage, instant: str) -> bool:
    """Delete the instant's staging directory, and the staging root once nothing else is staged
    (a local disk would keep it as an empty directory; the writer lock keeps other writers from
    staging meanwhile). False when the instant had staged nothing."""
    if not storage.delete_tree(staging_dir(instant)):
        return False
    if not storage.list_dirs(STAGING_DIR) and not storage.list_files(STAGING_DIR):
        storage.delete_tree(STAGING_DIR)
    return True


def _delete_written_by(storage: Storage, directory: str, timestamp: str, recursive: bool = False) -> int:
    doomed = [
        e.rel
        for e in storage.list_files(directory, recursive=recursive)
        if written_by(e.rel.rpartition("/")[2]) == timestamp
    ]
    return storage.delete_many(doomed)


def rollback_pending(storage: Storage) -> list[str]:
    """Roll back the incomplete instants a dead writer left (the timeline's tail), and delete the
    temporary files of timeline states that a writer killed while publishing them left (call with
    the table lock held). A damaged timeline raises `TableDamagedError` before anything is deleted."""
    timeline = Timeline.load(storage)
    require_intact(storage, timeline, IndexFileManifest.of(timeline))
    _delete_unfinished_publishes(storage)
    done = []
    for instant in timeline.tail():
        rollback(storage, timeline, instant)
        done.append(instant.timestamp)
    return done


def _delete_unfinished_publishes(storage: Storage) -> None:
    """On a local disk a timeline state is created as a temporary file hard-linked to its name,
    then unlinked: a writer killed in between leaves the temporary file, which no reader looks at
    and `clean` (deleting data and index files only) would keep forever. Every timeline state is
    written under the table lock, so while the caller holds it, any such file is a dead writer's."""
    doomed = [e.rel for e in storage.list_files(TIMELINE_DIR) if is_hidden_temp(e.rel.rpartition("/")[2])]
    if doomed:
        log.info("deleting %d temporary timeline file(s) a killed writer left", storage.delete_many(doomed))
