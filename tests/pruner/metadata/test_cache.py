"""The index cache: LRU by bytes, hit / miss / eviction counts, entries too large for the budget,
thread safety; and wired into `IndexPartitionView`, cached reads equal uncached ones and a bucket that
gains a file is read afresh."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import pyarrow as pa
import pytest

from pruner.metadata import cache as cache_module
from pruner.metadata import record_index
from pruner.metadata.cache import CacheStats, IndexCache
from pruner.metadata.index_partition import BucketCache, IndexPartitionView, write_logs
from pruner.metadata.lookup import IndexedRows
from pruner.metadata.merge import with_op
from pruner.metadata.spec import OP_DELETE, OP_UPSERT
from pruner.storage import Storage


def table_of(nbytes: int, tag: int = 0) -> pa.Table:
    """A table whose Arrow size is exactly `nbytes` (a multiple of 8)."""
    return pa.table({"v": pa.array([tag] * (nbytes // 8), pa.int64())})


class Loads:
    """A loader that counts its calls."""

    def __init__(self, nbytes: int = 80) -> None:
        self.nbytes = nbytes
        self.calls = 0

    def __call__(self) -> pa.Table:
        self.calls += 1
        return table_of(self.nbytes, self.calls)


def test_a_second_get_is_a_hit_and_does_not_load() -> None:
    cache, load = IndexCache(1000), Loads()
    first = cache.get_or_load("k", load)
    second = cache.get_or_load("k", load)
    assert second is first and load.calls == 1
    assert cache.stats() == CacheStats(hits=1, misses=1, evictions=0, entries=1, bytes=80, max_bytes=1000)


def test_least_recently_used_entries_are_evicted_first() -> None:
    cache = IndexCache(240)  # three entries of 80 bytes
    for key in "abc":
        cache.get_or_load(key, Loads())
    cache.get_or_load("a", Loads())  # a is now the most recently used
    cache.get_or_load("d", Loads())  # evicts b
    stats = cache.stats()
    assert (stats.entries, stats.bytes, stats.evictions) == (3, 240, 1)
    reloaded = Loads()
    for key in "acd":
        cache.get_or_load(key, reloaded)
    assert reloaded.calls == 0
    cache.get_or_load("b", reloaded)
    assert reloaded.calls == 1


def test_one_large_entry_evicts_as_many_as_needed() -> None:
    cache = IndexCache(400)
    for key in "abcde":
        cache.get_or_load(key, Loads(80))
    cache.get_or_load("big", Loads(320))
    stats = cache.stats()
    assert stats.bytes <= 400 and stats.evictions == 4 and stats.entries == 2


def test_an_entry_larger_than_the_cache_is_returned_but_not_kept_and_its_key_remembered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cache, load = IndexCache(100), Loads(160)
    assert not cache.too_large("k")
    assert cache.get_or_load("k", load).num_rows == 20
    assert cache.too_large("k") and not cache.too_large("other")
    cache.get_or_load("k", load)
    assert load.calls == 2
    assert cache.stats() == CacheStats(
        hits=0, misses=2, evictions=0, entries=0, bytes=0, max_bytes=100, too_large=1
    )
    assert len([r for r in caplog.records if "more than the whole cache" in r.getMessage()]) == 1
    cache.clear()
    assert not cache.too_large("k")


def test_only_so_many_too_large_keys_are_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_module, "TOO_LARGE_KEYS", 2)
    cache = IndexCache(10)
    for key in "abc":
        cache.get_or_load(key, Loads(80))
    assert [cache.too_large(key) for key in "abc"] == [False, True, True]


def test_size_zero_caches_nothing() -> None:
    cache, load = IndexCache(0), Loads(8)
    cache.get_or_load("k", load)
    cache.get_or_load("k", load)
    assert load.calls == 2 and cache.stats().entries == 0


def test_a_failed_load_propagates_and_is_not_cached() -> None:
    cache = IndexCache(1000)

    def fail() -> pa.Table:
        raise OSError("disk on fire")

    with pytest.raises(OSError, match="disk on fire"):
        cache.get_or_load("k", fail)
    load = Loads()
    cache.get_or_load("k", load)
    assert load.calls == 1 and cache.stats().misses == 2


def test_clear_empties_the_cache_but_keeps_the_counts() -> None:
    cache = IndexCache(1000)
    cache.get_or_load("k", Loads())
    cache.get_or_load("k", Loads())
    cache.clear()
    assert cache.stats() == CacheStats(hits=1, misses=1, evictions=0, entries=0, bytes=0, max_bytes=1000)


@dataclass(frozen=True)
class Sized:
    nbytes: int


def test_any_value_that_reports_its_size_is_cached_by_that_size() -> None:
    cache: IndexCache[Sized] = IndexCache(100)
    first = cache.get_or_load("a", lambda: Sized(60))
    assert cache.get_or_load("a", lambda: Sized(1)) is first
    cache.get_or_load("b", lambda: Sized(50))  # 110 bytes: evicts a
    assert cache.stats() == CacheStats(hits=1, misses=2, evictions=1, entries=1, bytes=50, max_bytes=100)


def test_negative_size_is_refused() -> None:
    with pytest.raises(ValueError):
        IndexCache(-1)


def test_concurrent_use_keeps_the_accounting_exact() -> None:
    cache = IndexCache(80 * 10)
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for i in range(300):
                key = (i * 7 + offset) % 25
                assert cache.get_or_load(key, Loads()).num_rows == 10
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    stats = cache.stats()
    assert stats.hits + stats.misses == 8 * 300
    assert stats.entries <= 10 and stats.bytes == 80 * stats.entries


# Wired into IndexPartitionView -----------------------------------------------------------------------

SPEC = record_index.spec(2)
I1, I2 = "20240101000000001", "20240101000000002"


def _log(storage: Storage, instant: str, entries: dict[str, str], deletes: tuple[str, ...] = ()) -> None:
    def rows(keys: list[str], op: int) -> pa.Table:
        return with_op(
            pa.table(
                {
                    "key": keys,
                    "partition": [entries.get(k, "") for k in keys],
                    "file_group": ["g"] * len(keys),
                },
                schema=record_index.SCHEMA,
            ),
            op,
        )

    write_logs(
        storage,
        SPEC,
        instant,
        pa.concat_tables([rows(list(entries), OP_UPSERT), rows(list(deletes), OP_DELETE)]),
    )


def _rows(table: pa.Table) -> dict[str, str]:
    return dict(zip(table["key"].to_pylist(), table["partition"].to_pylist(), strict=True))


def test_partition_view_reads_through_the_cache_and_sees_new_files(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    _log(storage, I1, {f"k{i}": f"p{i % 3}" for i in range(40)})
    cache: BucketCache = IndexCache(10**7)

    def view(as_of: str, cached: bool) -> IndexPartitionView:
        return IndexPartitionView.load(storage, SPEC, frozenset({I1, I2}), as_of, cache if cached else None)

    keys = pa.array(["k1", "k7", "k30", "nope"])
    assert _rows(view(I1, True).read_all()) == _rows(view(I1, False).read_all())
    # Each cached bucket is counted with its lookup index.
    uncached = view(I1, False)
    expected = [IndexedRows.build(uncached.read_bucket(b), SPEC.hash_field).nbytes for b in uncached.buckets]
    assert cache.stats().bytes == sum(expected) > 0
    assert (
        _rows(view(I1, True).lookup(keys))
        == _rows(view(I1, False).lookup(keys))
        == {
            "k1": "p1",
            "k7": "p1",
            "k30": "p0",
        }
    )
    misses = cache.stats().misses
    view(I1, True).read_all()
    assert cache.stats().misses == misses  # served from the cache

    _log(storage, I2, {"k1": "moved", "k99": "p0"}, deletes=("k7",))
    fresh = _rows(view(I2, True).lookup(keys))
    assert fresh == _rows(view(I2, False).lookup(keys)) == {"k1": "moved", "k30": "p0"}
    assert cache.stats().misses > misses  # the changed buckets were read again
    assert _rows(view(I1, True).lookup(keys))["k1"] == "p1"  # time travel still sees the old bucket


def test_a_bucket_too_large_for_the_cache_is_read_by_key_after_the_first_load(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    _log(storage, I1, {f"k{i}": f"p{i % 3}" for i in range(40)})
    cache: BucketCache = IndexCache(64)  # smaller than any bucket
    keys = pa.array(["k1", "k7", "k30", "nope"])
    expected = _rows(IndexPartitionView.load(storage, SPEC, frozenset({I1}), I1).lookup(keys))
    builds = []
    real_build = IndexedRows.build

    def counted_build(rows: pa.Table, field: str) -> IndexedRows:
        builds.append(rows.num_rows)
        return real_build(rows, field)

    with mock.patch.object(IndexedRows, "build", counted_build):
        view = IndexPartitionView.load(storage, SPEC, frozenset({I1}), I1, cache)
        assert _rows(view.lookup(keys)) == expected
        first = len(builds)
        assert first > 0 and cache.stats().entries == 0 and cache.stats().too_large == first
        for _ in range(3):
            assert _rows(view.lookup(keys)) == expected
        assert len(builds) == first  # later lookups read by key, not the whole bucket again
        assert _rows(view.read_all()) == _rows(
            IndexPartitionView.load(storage, SPEC, frozenset({I1}), I1).read_all()
        )
