"""The cleaner: deletes data file slices and index files that no retained snapshot needs, and
orphans (a retried task's second copy of a file). Retained snapshots are the completed instants
from the `clean.retain_commits`-th newest commit on; older snapshots stop being readable, which the
clean instant records as `earliest_retained`. Only files that parse as lakeprune data or index files
are ever deleted, and only those a completed instant wrote: anything else a user put in the table
directory, and files of instants the timeline does not hold (`pruner.table.integrity`), are left
alone."""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass

from builder.instants import rollback_pending, run_instant
from builder.lock import table_lock
from pruner.format.layout import META_DIR, METADATA_DIR, IndexFileName, written_by
from pruner.format.timeline import Action
from pruner.metadata.index_partition import select_bucket_files
from pruner.table.table import LakeTable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CleanReport:
    instant: str | None
    earliest_retained: str | None
    deleted_data_files: int
    deleted_index_files: int


def clean(location: str) -> CleanReport:
    table = LakeTable.open(location)
    with table_lock(table.storage, "clean"):
        rollback_pending(table.storage)
        return clean_locked(table.refresh())


def clean_locked(table: LakeTable) -> CleanReport:
    commits = table.timeline.commits()
    retain = table.config.properties.clean_retain_commits
    if not commits:
        return CleanReport(None, None, 0, 0)
    earliest = commits[-retain].timestamp if len(commits) >= retain else commits[0].timestamp
    completed = table.timeline.completed_timestamps()
    retained = sorted(t for t in completed if t >= earliest)

    needed_data = {f.path for instant in retained for f in table.snapshot(instant).files()}
    unneeded_data = [
        e.rel
        for e in table.storage.list_files("", recursive=True)
        if not e.rel.startswith(f"{META_DIR}/")
        and written_by(e.rel.rpartition("/")[2])
        and e.rel not in needed_data
    ]
    doomed_data = _of_completed_instants(unneeded_data, completed)
    doomed_index = _of_completed_instants(_unneeded_index_files(table, completed, retained), completed)
    if not doomed_data and not doomed_index and earliest == table.earliest_retained():
        return CleanReport(None, earliest, 0, 0)
    with run_instant(table.storage, Action.CLEAN, {"earliest_retained": earliest}) as pending:
        pending.inflight([], [])
        # Publish the new horizon first: from here on nobody reads a snapshot before `earliest`.
        content = {
            "earliest_retained": earliest,
            "deleted_data_files": len(doomed_data),
            "deleted_index_files": len(doomed_index),
        }
        pending.complete(content)
    table.storage.delete_many(doomed_data)
    table.storage.delete_many(doomed_index)
    log.info(
        "clean %s: deleted %d data and %d index files; earliest retained snapshot %s",
        pending.timestamp,
        len(doomed_data),
        len(doomed_index),
        earliest,
    )
    return CleanReport(pending.timestamp, earliest, len(doomed_data), len(doomed_index))


def _of_completed_instants(paths: list[str], completed: frozenset[str]) -> list[str]:
    """The files among `paths` that a completed instant wrote. A file of an instant the timeline
    does not hold is never deleted: the instant's timeline files may have been lost, and the file
    may hold committed rows (`lakeprune table check` reports it). Rolled-back instants leave no
    files behind (their rollback deletes them before their timeline files)."""
    kept = [rel for rel in paths if written_by(rel.rpartition("/")[2]) not in completed]
    if kept:
        log.warning(
            "clean keeps %d file(s) of instants the timeline does not hold (e.g. %s); "
            "`lakeprune table check` reports them",
            len(kept),
            kept[0],
        )
    return [rel for rel in paths if written_by(rel.rpartition("/")[2]) in completed]


def _unneeded_index_files(table: LakeTable, completed: frozenset[str], retained: list[str]) -> list[str]:
    """Index files not read by any retained snapshot (including files of incomplete instants)."""
    by_partition: dict[str, list[tuple[str, IndexFileName]]] = defaultdict(list)
    for entry in table.storage.list_files(METADATA_DIR, recursive=True):
        partition, _, file_name = entry.rel[len(METADATA_DIR) + 1 :].rpartition("/")
        parsed = IndexFileName.parse(file_name)
        if parsed is not None:
            by_partition[partition].append((entry.rel, parsed))
    doomed: list[str] = []
    for files in by_partition.values():
        needed: set[IndexFileName] = set()
        for instant in retained:
            visible: dict[int, list[IndexFileName]] = defaultdict(list)
            for _, name in files:
                if name.instant in completed and name.instant <= instant:
                    visible[name.bucket].append(name)
            for names in visible.values():
                needed.update(select_bucket_files(names).names)
        doomed.extend(rel for rel, name in files if name not in needed)
    return doomed
