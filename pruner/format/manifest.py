"""Which index files each completed instant wrote, as its timeline entry records them: a commit
or an index build lists its log files (`index_files`), a compaction the buckets it gave a new base
(`buckets`), a clean writes none. Readers build an index partition's view from this record instead
of from a directory listing, so a file that a completed instant wrote and that has since gone
missing is noticed (reading it fails) instead of silently shrinking the index — a shrunken index
would prune files that hold matching rows. A completed instant whose entry predates the record
(neither key) makes the partitions it may have touched fall back to listing.

Completed timeline entries never change, so their parsed records are kept in a small process-wide
cache keyed by the entry's location, name and size: a long-running reader (the sidecar) reads each
entry once, however often the table is reopened."""

from __future__ import annotations

import threading
from collections import OrderedDict, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pruner.errors import TableCorruptError
from pruner.format.layout import METADATA_DIR, IndexFileName
from pruner.format.timeline import PREVIOUS, Action, Instant, Timeline

# Parsed entries kept (an entry is a few hundred bytes to a few KB of file names).
CACHED_ENTRIES = 65_536

_Written = Mapping[str, tuple[IndexFileName, ...]]


@dataclass(frozen=True)
class IndexFileManifest:
    """The index files written by a table's completed instants, by index partition name."""

    written: Mapping[str, tuple[IndexFileName, ...]]
    # Completed instants that may have written index files without recording which.
    unrecorded: frozenset[str]
    # Each completed instant whose entry names the completed instant before it (None: the first).
    previous: Mapping[str, str | None] = field(default_factory=dict)

    @classmethod
    def of(cls, timeline: Timeline) -> IndexFileManifest:
        written: dict[str, list[IndexFileName]] = defaultdict(list)
        unrecorded = set()
        previous: dict[str, str | None] = {}
        for instant in timeline.completed():
            entry = _entry(timeline, instant)
            if entry.names_previous:
                previous[instant.timestamp] = entry.previous
            if entry.written is None:
                unrecorded.add(instant.timestamp)
                continue
            for partition, names in entry.written.items():
                written[partition].extend(names)
        return cls({p: tuple(sorted(n)) for p, n in written.items()}, frozenset(unrecorded), previous)

    def files(self, partition: str, as_of: str, after: str | None) -> list[IndexFileName] | None:
        """The files of `partition` written by completed instants in (`after`, `as_of`]; None when
        an instant in that range did not record its files (the caller must list storage)."""
        if any((after is None or t > after) and t <= as_of for t in self.unrecorded):
            return None
        return [
            n
            for n in self.written.get(partition, ())
            if n.instant <= as_of and (after is None or n.instant > after)
        ]


def parse_record(action: Action, timestamp: str, content: Mapping[str, Any]) -> _Written | None:
    """The index files a completed entry says its instant wrote, or None if it does not say.
    Raises `TableCorruptError` for a record that is there but malformed."""
    try:
        return _parse_record(action, timestamp, content)
    except (TypeError, ValueError, AttributeError) as exc:
        message = f"timeline entry {timestamp}.{action} lists malformed index files: {exc}"
        raise TableCorruptError(message) from exc


def _parse_record(action: Action, timestamp: str, content: Mapping[str, Any]) -> _Written | None:
    if action == Action.CLEAN:
        return {}
    if isinstance(content.get("index_files"), list):
        written: dict[str, list[IndexFileName]] = defaultdict(list)
        prefix = METADATA_DIR + "/"
        for rel in content["index_files"]:
            if not isinstance(rel, str):
                raise TypeError(f"{rel!r} is not a path")
            partition, _, file_name = rel.removeprefix(prefix).rpartition("/")
            name = IndexFileName.parse(file_name)
            if name is not None and name.instant == timestamp and partition:
                written[partition].append(name)
        return {p: tuple(n) for p, n in written.items()}
    buckets = content.get("buckets")
    if action == Action.COMPACTION and isinstance(buckets, dict):
        return {
            str(partition): tuple(IndexFileName(int(b), "base", timestamp) for b in numbers)
            for partition, numbers in buckets.items()
        }
    return None


@dataclass(frozen=True)
class _Entry:
    """What the manifest keeps of one completed timeline entry."""

    written: _Written | None
    names_previous: bool  # entries written before instants named their predecessor do not
    previous: str | None


_cache: OrderedDict[tuple[str, str, int], _Entry] = OrderedDict()
_cache_lock = threading.Lock()


def _entry(timeline: Timeline, instant: Instant) -> _Entry:
    key = (timeline.storage.uri, instant.file_name(), timeline.sizes.get(instant.file_name(), -1))
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    content = timeline.read(instant)
    previous = content.get(PREVIOUS)
    if previous is not None and not isinstance(previous, str):
        raise TableCorruptError(f"timeline entry {instant.file_name()} names {previous!r} as its predecessor")
    record = _Entry(parse_record(instant.action, instant.timestamp, content), PREVIOUS in content, previous)
    with _cache_lock:
        _cache[key] = record
        while len(_cache) > CACHED_ENTRIES:
            _cache.popitem(last=False)
    return record
