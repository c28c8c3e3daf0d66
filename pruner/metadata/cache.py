"""A bounded, thread-safe cache of merged index buckets for long-running readers (the sidecar).

An index bucket as of a snapshot is fully determined by the names of the files that make it up (its
base and the logs after it): index files are immutable once their instant completes, and every
commit, compaction or rollback that changes a bucket changes that list of names. Keying merged
buckets by (partition directory, file names) therefore never serves stale data: a new snapshot
names new files and misses the cache, and entries no snapshot names any more simply age out. The
cache is generic in what it holds (the sidecar keeps each bucket with its lookup structure, see
`pruner.metadata.lookup`); every value reports its own size (`nbytes`), which must count all the
memory the value holds. Eviction is least-recently-used by that size; a value larger than the whole
budget is returned without being cached, and its key is remembered (`too_large`) so that a reader
can stop loading it whole and read only what it needs. Hit, miss and eviction counts and the number
of keys known too large feed the metrics."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

log = logging.getLogger(__name__)

# How many keys of values too large for the budget are remembered (most recently seen kept).
TOO_LARGE_KEYS = 4096


@dataclass(frozen=True)
class CacheStats:
    hits: int
    misses: int
    evictions: int
    entries: int
    bytes: int
    max_bytes: int
    too_large: int = 0


class Measured(Protocol):
    """A value that knows how many bytes of memory it holds (Arrow tables and arrays do)."""

    @property
    def nbytes(self) -> int: ...


V = TypeVar("V", bound=Measured)


class IndexCache(Generic[V]):
    """LRU by bytes (each value's `nbytes`, read once when it is stored). `get_or_load` runs `load`
    outside the lock, so a slow read never blocks hits on other keys; two concurrent misses of one
    key may both load (the second result is kept)."""

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError("cache size must not be negative")
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._too_large: OrderedDict[Hashable, None] = OrderedDict()
        self._bytes = 0
        self._hits = self._misses = self._evictions = 0
        self._lock = threading.Lock()

    def get_or_load(self, key: Hashable, load: Callable[[], V]) -> V:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                self._hits += 1
                return entry[0]
            self._misses += 1
        value = load()
        self._put(key, value)
        return value

    def too_large(self, key: Hashable) -> bool:
        """Whether a value loaded for `key` was larger than the whole budget (and so not kept)."""
        with self._lock:
            return key in self._too_large

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._too_large.clear()
            self._bytes = 0

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(
                self._hits,
                self._misses,
                self._evictions,
                len(self._entries),
                self._bytes,
                self.max_bytes,
                len(self._too_large),
            )

    def _put(self, key: Hashable, value: V) -> None:
        size = value.nbytes
        if size > self.max_bytes:
            with self._lock:
                known = key in self._too_large
                self._too_large[key] = None
                self._too_large.move_to_end(key)
                if len(self._too_large) > TOO_LARGE_KEYS:
                    self._too_large.popitem(last=False)
            if not known:
                log.warning(
                    "not caching %s: %d bytes, more than the whole cache (%d)", key, size, self.max_bytes
                )
            return
        with self._lock:
            previous = self._entries.pop(key, None)
            if previous is not None:
                self._bytes -= previous[1]
            self._entries[key] = (value, size)
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, (_, evicted) = self._entries.popitem(last=False)
                self._bytes -= evicted
                self._evictions += 1
