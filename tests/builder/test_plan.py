"""builder.write.plan: which records of an insert go to which file group (no Spark involved)."""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from builder.write.plan import DEFAULT_RECORD_BYTES, InsertBin, average_record_bytes, plan_insert_bins
from pruner.format.config import TableProperties
from pruner.metadata.files_index import DataFile

INSTANT = "20240101000000000"


def _file(partition: str, group: str, size: int, rows: int) -> DataFile:
    return DataFile(partition, f"{group}.parquet", group, INSTANT, size, rows)


def _counter() -> Callable[[], str]:
    numbers = itertools.count()
    return lambda: f"new{next(numbers)}"


def _properties(target: int, small_limit: int) -> TableProperties:
    return TableProperties(write_target_file_size_bytes=target, write_small_file_limit_bytes=small_limit)


def _by_partition(bins: list[InsertBin]) -> dict[str, list[InsertBin]]:
    grouped: dict[str, list[InsertBin]] = defaultdict(list)
    for b in bins:
        grouped[b.partition].append(b)
    return grouped


def test_average_record_bytes() -> None:
    assert average_record_bytes([]) == DEFAULT_RECORD_BYTES
    assert average_record_bytes([_file("", "a", 0, 0)]) == DEFAULT_RECORD_BYTES
    assert average_record_bytes([_file("", "a", 300, 10), _file("p", "b", 100, 30)]) == 10.0


def test_first_write_uses_the_default_record_size() -> None:
    # 6400 bytes / 64 bytes per record = 100 records per file; 250 records -> 3 files of ~84.
    bins = plan_insert_bins({"": 250}, [], _properties(6400, 3200), _counter())
    assert bins == [
        InsertBin("", "new0", 0, 84),
        InsertBin("", "new1", 84, 168),
        InsertBin("", "new2", 168, 250),
    ]


def test_small_files_are_topped_up_first_smallest_first() -> None:
    # 10 bytes per record over all live files; target 1000 bytes = 100 records; small below 800.
    live = [
        _file("p=a", "mid", 500, 50),
        _file("p=a", "big", 900, 90),  # not small: never topped up
        _file("p=a", "tiny", 300, 30),
        _file("p=b", "other", 100, 10),  # another partition's small file
        _file("p=a", "full", 1000, 100),
    ]
    props = _properties(1000, 800)
    assert plan_insert_bins({"p=a": 10}, live, props, _counter()) == [InsertBin("p=a", "tiny", 0, 10)]
    assert plan_insert_bins({"p=a": 150}, live, props, _counter()) == [
        InsertBin("p=a", "tiny", 0, 70),
        InsertBin("p=a", "mid", 70, 120),
        InsertBin("p=a", "new0", 120, 150),
    ]
    assert plan_insert_bins({"p=b": 95, "p=c": 5}, live, props, _counter()) == [
        InsertBin("p=b", "other", 0, 90),
        InsertBin("p=b", "new0", 90, 95),
        InsertBin("p=c", "new1", 0, 5),
    ]


def test_equal_small_files_are_taken_in_file_group_order() -> None:
    live = [_file("", "b", 500, 50), _file("", "a", 500, 50)]
    bins = plan_insert_bins({"": 60}, live, _properties(1000, 800), _counter())
    assert bins == [InsertBin("", "a", 0, 50), InsertBin("", "b", 50, 60)]


def test_new_file_groups_come_from_the_injected_factory() -> None:
    bins = plan_insert_bins({"x": 3, "y": 3}, [_file("x", "g", 10, 1)], _properties(20, 5), _counter())
    assert [b.file_group for b in bins] == ["new0", "new1", "new2", "new3"]
    assert [(b.partition, b.start, b.end) for b in bins] == [
        ("x", 0, 2),
        ("x", 2, 3),
        ("y", 0, 2),
        ("y", 2, 3),
    ]


def test_default_file_groups_are_unique_hex() -> None:
    bins = plan_insert_bins({"": 1000}, [], _properties(640, 320))
    groups = [b.file_group for b in bins]
    assert len(groups) == 100
    assert len(set(groups)) == len(groups)
    assert all(len(g) == 32 and int(g, 16) >= 0 for g in groups)


def test_nothing_to_insert() -> None:
    assert plan_insert_bins({}, [_file("", "a", 1, 1)], TableProperties(), _counter()) == []
    assert plan_insert_bins({"p": 0}, [_file("p", "a", 1, 1)], TableProperties(), _counter()) == []


partitions = st.sampled_from(["", "p=a", "p=b", "p=c"])
live_files = st.lists(
    st.tuples(partitions, st.integers(0, 5000), st.integers(0, 200)),
    max_size=12,
).map(lambda specs: [_file(p, f"g{i}", size, rows) for i, (p, size, rows) in enumerate(specs)])
properties = st.tuples(st.integers(1, 5000), st.integers(1, 5000)).map(lambda t: _properties(max(t), min(t)))


@settings(max_examples=200)
@given(st.dictionaries(partitions, st.integers(0, 2000)), live_files, properties)
def test_bins_cover_each_partition_exactly(
    counts: dict[str, int], live: list[DataFile], props: TableProperties
) -> None:
    bins = plan_insert_bins(counts, live, props, _counter())
    record_bytes = max(average_record_bytes(live), 1.0)
    per_file = max(1, int(props.write_target_file_size_bytes // record_bytes))
    existing = {f.file_group: f for f in live}
    grouped = _by_partition(bins)
    assert set(grouped) == {p for p, n in counts.items() if n > 0}
    for partition, partition_bins in grouped.items():
        # Contiguous, non-empty, in order, covering [0, count) exactly.
        assert partition_bins[0].start == 0
        assert partition_bins[-1].end == counts[partition]
        for previous, current in itertools.pairwise(partition_bins):
            assert previous.end == current.start
        assert all(b.start < b.end for b in partition_bins)
        # Existing small groups first, smallest first, then new ones.
        topped = [existing[b.file_group] for b in partition_bins if b.file_group in existing]
        new = [b for b in partition_bins if b.file_group not in existing]
        assert partition_bins[: len(topped)] == [b for b in partition_bins if b.file_group in existing]
        assert topped == sorted(topped, key=lambda f: (f.size, f.file_group))
        for small, b in zip(topped, partition_bins, strict=False):
            assert small.partition == partition
            assert small.size < props.write_small_file_limit_bytes
            filled = small.size + (b.end - b.start) * record_bytes
            assert filled <= props.write_target_file_size_bytes * (1 + 1e-9)  # float rounding only
        new_records = sum(b.end - b.start for b in new)
        assert all(b.end - b.start <= per_file for b in new)
        assert len(new) == -(-new_records // per_file)  # as few new groups as the target allows
        if new:
            # Every small file with room for a record was filled up before a new group was opened.
            fills = {b.file_group: b.end - b.start for b in partition_bins}
            for f in live:
                room = int((props.write_target_file_size_bytes - f.size) // record_bytes)
                if f.partition == partition and f.size < props.write_small_file_limit_bytes and room > 0:
                    assert fills.get(f.file_group) == room
    groups = [b.file_group for b in bins]
    assert len(groups) == len(set(groups))
