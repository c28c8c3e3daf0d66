"""One plan per query, however it is paged. A listing handed out in pages (the Thrift connector's
`GetSplits` and `GetIndexSplits`) is planned once; every page is a slice of that one plan, never a
recomputation against index state that may have changed in between (a page boundary moved by an
index that was dropped, became ready or was compacted repeats or loses splits: wrong answers).

A query's first page always plans afresh (so it sees the index state of now and is counted in the
metrics like any prune). Its plan is kept in a small bounded cache (`Plans`) under a key made of
everything the listing depends on — the table, its snapshot, the request (constraint, index keys,
...) and the basis: the table's definition and its index definitions — and the digest of the whole
listing; a paging token carries both. A later page is cut from the cached plan. If it is gone
(evicted, or the token was issued by another sidecar sharing the split key), the listing is planned
again, but only on the same basis, and served only if it has the sealed digest; otherwise the page
is refused with `PlanChangedError` and the engine reports it — a query run again plans afresh."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from pruner.errors import LakepruneError
from pruner.table.table import LakeTable

T = TypeVar("T")

MAX_PLANS = 256
MAX_ITEMS = 200_000  # split entries held over all cached plans (a few hundred bytes each)


class PlanChangedError(LakepruneError):
    """A later page of a listing cannot be served as a slice of the plan its first page came from."""


@dataclass(frozen=True)
class Plan(Generic[T]):
    """A listing planned once: its items in order and their digest."""

    key: str
    items: tuple[T, ...]
    digest: str

    def page(self, offset: int, count: int) -> tuple[tuple[T, ...], int | None]:
        """The items of one page and the offset of the next (None: this was the last)."""
        end = offset + count
        return self.items[offset:end], end if end < len(self.items) else None


def plan_key(table: LakeTable, *request: str) -> str:
    """The cache key of a listing of `table` (as loaded: its snapshot instants, definition and index
    definitions are the basis) for a request described by `request` (snapshot, constraint, ...)."""
    basis = {
        "location": table.storage.uri,
        "config": table.config.to_json(),
        "indexes": [d.to_json() for d in table.definitions],
        "request": list(request),
    }
    return hashlib.sha256(json.dumps(basis, sort_keys=True, default=str).encode()).hexdigest()


def digest_of(fingerprints: Sequence[str]) -> str:
    """One digest of a listing from its items' fingerprints, in order."""
    hasher = hashlib.sha256()
    for fingerprint in fingerprints:
        hasher.update(fingerprint.encode())
        hasher.update(b"\x00")
    return hasher.hexdigest()


class Plans(Generic[T]):
    """A bounded LRU cache of plans (by count and by total items); thread-safe. Planning runs
    outside the lock; two concurrent first pages of one key may both plan (the plans are equal:
    same key, same basis)."""

    def __init__(
        self, fingerprint: Callable[[T], str], max_plans: int = MAX_PLANS, max_items: int = MAX_ITEMS
    ) -> None:
        self._fingerprint = fingerprint
        self._max_plans = max_plans
        self._max_items = max_items
        self._plans: OrderedDict[tuple[str, str], Plan[T]] = OrderedDict()
        self._items = 0
        self._lock = threading.Lock()

    def first(self, key: str, plan: Callable[[], Sequence[T]]) -> Plan[T]:
        """The plan for a listing's first page: planned now (a new query), and kept for its later
        pages. Two queries of one key whose plans differ (the index state changed in between) each
        keep their own: plans are held by key and digest."""
        return self._put(key, plan())

    def resume(self, key: str, digest: str, plan: Callable[[], Sequence[T]] | None) -> Plan[T]:
        """The plan a later page is cut from: the cached one, or `plan()` again when that is
        possible (None: the basis changed since, so it is not) and gives the sealed `digest`."""
        cached = self._get(key, digest)
        if cached is not None:
            return cached
        if plan is None:
            raise PlanChangedError(
                "the table's definition or indexes changed while this query listed its splits; "
                "run the query again"
            )
        replanned = self._put(key, plan())
        if replanned.digest != digest:
            raise PlanChangedError(
                "the splits of this query could not be listed again as they were planned; run the query again"
            )
        return replanned

    def clear(self) -> None:
        """Forget every plan (their later pages are planned again, or refused)."""
        with self._lock:
            self._plans.clear()
            self._items = 0

    def _get(self, key: str, digest: str) -> Plan[T] | None:
        with self._lock:
            cached = self._plans.get((key, digest))
            if cached is not None:
                self._plans.move_to_end((key, digest))
            return cached

    def _put(self, key: str, items: Sequence[T]) -> Plan[T]:
        plan = Plan(key, tuple(items), digest_of([self._fingerprint(i) for i in items]))
        if len(plan.items) > self._max_items:
            return plan  # served, not kept: its later pages plan again (and must match)
        with self._lock:
            previous = self._plans.pop((key, plan.digest), None)
            if previous is not None:
                self._items -= len(previous.items)
            self._plans[(key, plan.digest)] = plan
            self._items += len(plan.items)
            while len(self._plans) > self._max_plans or self._items > self._max_items:
                _, evicted = self._plans.popitem(last=False)
                self._items -= len(evicted.items)
        return plan
