"""The pure parts of the write tasks: how a rewrite task walks its partition file group by file
group (it holds one group's rows at a time, never the partition), and which record index rows it
ships for a group's planned rows."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from builder.write.tasks import FILE_GROUP, KEY, PARTITION, RECORD_OP, file_groups, record_index_rows
from pruner.metadata.spec import OP_DELETE, OP_FIELD, OP_UPSERT


def _batches(groups: list[str], sizes: list[int]) -> list[pa.RecordBatch]:
    rows = pa.table({FILE_GROUP: groups, "n": list(range(len(groups)))})
    out, start = [], 0
    for size in sizes:
        out.append(rows.slice(start, size).combine_chunks().to_batches()[0] if size else _empty(rows))
        start += size
    return out


def _empty(rows: pa.Table) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([], schema=rows.schema)


def test_a_group_split_across_batches_comes_out_whole() -> None:
    batches = _batches(["a", "a", "b", "b", "b", "c"], [1, 3, 0, 2])
    groups = list(file_groups(iter(batches)))
    assert [g.column(FILE_GROUP).to_pylist() for g in groups] == [["a", "a"], ["b", "b", "b"], ["c"]]
    assert [g.column("n").to_pylist() for g in groups] == [[0, 1], [2, 3, 4], [5]]


def test_no_rows_no_groups() -> None:
    assert list(file_groups(iter([]))) == []
    assert list(file_groups(iter(_batches([], [0, 0])))) == []


@given(
    st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=8),
    st.lists(st.integers(min_value=0, max_value=5), max_size=10),
)
def test_groups_equal_the_sorted_rows_grouped(counts: list[int], cuts: list[int]) -> None:
    groups = [f"g{i:02d}" for i, count in enumerate(counts) for _ in range(count)]
    fitted, left = [], len(groups)
    for cut in cuts:  # batch sizes as given while rows last (empty batches included), then the rest
        fitted.append(min(cut, left))
        left -= fitted[-1]
    fitted.append(left)
    out = list(file_groups(iter(_batches(groups, fitted))))
    assert [g.num_rows for g in out] == counts
    assert [g.column(FILE_GROUP).to_pylist() for g in out] == [
        [f"g{i:02d}"] * c for i, c in enumerate(counts)
    ]
    assert [n for g in out for n in g.column("n").to_pylist()] == list(range(len(groups)))


def test_record_index_rows_are_the_planned_rows_with_an_op() -> None:
    group = pa.table(
        {
            KEY: ["new", "kept", "moved-away", "gone"],
            PARTITION: ["city=ams", "city=ams", "city=ams", "city=ams"],
            FILE_GROUP: ["fg1"] * 4,
            RECORD_OP: pa.array([OP_UPSERT, None, None, OP_DELETE], pa.int8()),
        }
    )
    rows = record_index_rows(group)
    assert rows.to_pylist() == [
        {"key": "new", "partition": "city=ams", "file_group": "fg1", OP_FIELD: OP_UPSERT},
        {"key": "gone", "partition": "city=ams", "file_group": "fg1", OP_FIELD: OP_DELETE},
    ]
