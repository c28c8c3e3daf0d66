"""Damage to a table's timeline, found before anything is read or deleted. A writer that dies
mid-action can only leave incomplete instants newer than every completed one (the timeline's tail),
which the next writer rolls back. Anything else contradicts the table's files and is damage, never
a reason to delete them: an incomplete instant below a completed one (its completion marker was
deleted: rolling it back would delete committed rows), a completed instant whose predecessor (the
entry names it) is missing from the timeline, no completed instant while index or data files of
instants the timeline does not hold exist (the timeline was deleted), and a `files` index row that
names an instant that is not completed. `require_intact` makes a damaged table unreadable with one
line naming what is damaged; `lakeprune table check` lists all of it (`pruner.table.check`)."""

from __future__ import annotations

from collections.abc import Iterable

from pruner.errors import TableDamagedError
from pruner.format.layout import META_DIR, METADATA_DIR, written_by
from pruner.format.manifest import IndexFileManifest
from pruner.format.timeline import Timeline
from pruner.metadata.files_index import DataFile
from pruner.storage import Storage

# How many file names a finding quotes.
_QUOTED = 3


def timeline_damage(storage: Storage, timeline: Timeline, manifest: IndexFileManifest) -> list[str]:
    """What is damaged, one line each (empty: nothing found). Lists storage only when the timeline
    has no completed instant (an empty table: cheap)."""
    found = []
    latest = timeline.latest_completed()
    for instant in timeline.holes():
        assert latest is not None  # holes lie below a completed instant
        found.append(
            f"instant {instant.timestamp} ({instant.action}) is {instant.state} below the completed "
            f"instant {latest.timestamp}: its completion marker is missing"
        )
    present = {i.timestamp for i in timeline.instants}
    for timestamp, previous in sorted(manifest.previous.items()):
        if previous is not None and previous not in present:
            found.append(
                f"instant {previous} is missing from the timeline (the completed instant {timestamp} "
                "follows it)"
            )
    if latest is None:
        found.extend(_files_without_instants(storage, timeline))
    return found


def _files_without_instants(storage: Storage, timeline: Timeline) -> list[str]:
    pending = {i.timestamp for i in timeline.instants}
    index = [e.rel for e in storage.list_files(METADATA_DIR, recursive=True) if _unheld(e.rel, pending)]
    data = [
        e.rel
        for e in storage.list_files("", recursive=True)
        if not e.rel.startswith(f"{META_DIR}/") and _unheld(e.rel, pending)
    ]
    found = []
    if index:
        found.append(f"the timeline has no completed instant, yet {_count(index, 'index file')} exist")
    if data:
        found.append(f"the timeline has no completed instant, yet {_count(data, 'data file')} exist")
    return found


def _unheld(rel: str, pending: set[str]) -> bool:
    """A lakeprune file written by an instant the timeline does not hold."""
    instant = written_by(rel.rpartition("/")[2])
    return instant is not None and instant not in pending


def _count(paths: list[str], noun: str) -> str:
    quoted = ", ".join(sorted(paths)[:_QUOTED]) + (", ..." if len(paths) > _QUOTED else "")
    return f"{len(paths)} {noun}{'s' if len(paths) != 1 else ''} ({quoted})"


def files_index_damage(files: Iterable[DataFile], completed: frozenset[str], as_of: str) -> str | None:
    """A `files` index row naming an instant that is not a completed one up to `as_of`."""
    strays = sorted({f.instant for f in files if f.instant not in completed or f.instant > as_of})
    if not strays:
        return None
    return f"the files index of snapshot {as_of} names instant(s) the timeline does not hold completed: " + (
        ", ".join(strays[:_QUOTED]) + (", ..." if len(strays) > _QUOTED else "")
    )


def damaged(uri: str, found: list[str]) -> TableDamagedError:
    more = f" (and {len(found) - 1} more finding(s))" if len(found) > 1 else ""
    return TableDamagedError(
        f"table {uri} is damaged: {found[0]}{more}; nothing was read or deleted. "
        f"`lakeprune table check {uri}` says what is damaged and what can repair it"
    )


def require_intact(storage: Storage, timeline: Timeline, manifest: IndexFileManifest) -> None:
    """Raise `TableDamagedError` naming what is damaged, if anything is."""
    found = timeline_damage(storage, timeline, manifest)
    if found:
        raise damaged(storage.uri, found)
