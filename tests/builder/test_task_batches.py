"""How a Spark task walks its sorted input run by run (`builder.task_batches.runs`): a rewrite task
file group by file group, a log-writing task bucket by bucket. It holds one run at a time, never its
partition, and a run split across Arrow batches (empty ones included) comes out whole. And how a
work list the driver holds reaches the tasks (`over_tasks`): each row to one task, in shares of
consecutive rows."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st
from pyspark import TaskContext
from pyspark.sql import SparkSession

from builder.task_batches import over_tasks, runs


def _batches(rows: pa.Table, sizes: list[int]) -> list[pa.RecordBatch]:
    out, start = [], 0
    for size in sizes:
        piece = rows.slice(start, size).combine_chunks()
        out.append(piece.to_batches()[0] if size else pa.RecordBatch.from_pylist([], rows.schema))
        start += size
    return out


def test_a_run_split_across_batches_comes_out_whole() -> None:
    rows = pa.table({"g": ["a", "a", "b", "b", "b", "c"], "n": list(range(6))})
    out = list(runs(iter(_batches(rows, [1, 3, 0, 2])), ["g"]))
    assert [r.column("g").to_pylist() for r in out] == [["a", "a"], ["b", "b", "b"], ["c"]]
    assert [r.column("n").to_pylist() for r in out] == [[0, 1], [2, 3, 4], [5]]


def test_no_rows_no_runs() -> None:
    rows = pa.table({"g": pa.array([], pa.string())})
    assert list(runs(iter([]), ["g"])) == []
    assert list(runs(iter(_batches(rows, [0, 0])), ["g"])) == []


def test_a_run_is_cut_where_any_key_column_changes_and_nulls_are_equal() -> None:
    rows = pa.table(
        {
            "name": ["x", "x", "x", "y", "y", None, None],
            "bucket": pa.array([0, 0, 1, 1, None, None, None], pa.int32()),
        }
    )
    # A batch boundary inside the (None, None) run, and one between ("x", 0) and ("x", 1).
    out = list(runs(iter(_batches(rows, [2, 4, 1])), ["name", "bucket"]))
    assert [r.to_pylist()[0] for r in out] == [
        {"name": "x", "bucket": 0},
        {"name": "x", "bucket": 1},
        {"name": "y", "bucket": 1},
        {"name": "y", "bucket": None},
        {"name": None, "bucket": None},
    ]
    assert [r.num_rows for r in out] == [2, 1, 1, 1, 2]


@given(
    st.lists(st.tuples(st.integers(0, 2), st.integers(1, 5)), min_size=1, max_size=8),
    st.lists(st.integers(min_value=0, max_value=5), max_size=10),
)
def test_runs_equal_the_rows_grouped(groups: list[tuple[int, int]], cuts: list[int]) -> None:
    # Consecutive groups may share the first key column; the second (the group's number) differs.
    keys = [(f"k{first}", i) for i, (first, count) in enumerate(groups) for _ in range(count)]
    rows = pa.table({"a": [a for a, _ in keys], "b": [b for _, b in keys], "n": list(range(len(keys)))})
    sizes, left = [], len(keys)
    for cut in cuts:  # batch sizes as given while rows last (empty batches included), then the rest
        sizes.append(min(cut, left))
        left -= sizes[-1]
    sizes.append(left)
    out = list(runs(iter(_batches(rows, sizes)), ["a", "b"]))
    assert [r.num_rows for r in out] == [count for _, count in groups]
    assert [set(zip(r["a"].to_pylist(), r["b"].to_pylist(), strict=True)) for r in out] == [
        {(f"k{first}", i)} for i, (first, _) in enumerate(groups)
    ]
    assert [n for r in out for n in r.column("n").to_pylist()] == list(range(len(keys)))


def _tagged_with_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Each row with the number of the Spark task that got it."""
    context = TaskContext.get()
    assert context is not None
    for batch in batches:
        task = pa.repeat(pa.scalar(context.partitionId(), pa.int32()), batch.num_rows)
        columns = [batch.column("n"), batch.column("name"), task]
        yield pa.RecordBatch.from_arrays(columns, ["n", "name", "task"])


def test_a_work_list_reaches_the_tasks_each_row_once_in_consecutive_shares(spark: SparkSession) -> None:
    work = pa.table({"n": pa.array(range(10), pa.int32()), "name": [f"file-{n}" for n in range(10)]})
    schema = "n int, name string, task int"
    rows = over_tasks(spark, work, 3, _tagged_with_task, schema).collect()
    assert sorted((r["n"], r["name"]) for r in rows) == [(n, f"file-{n}") for n in range(10)]
    shares: dict[int, list[int]] = {}
    for r in rows:
        shares.setdefault(r["task"], []).append(r["n"])
    assert len(shares) == 3
    assert all(sorted(share) == list(range(min(share), max(share) + 1)) for share in shares.values())
    assert over_tasks(spark, work.slice(0, 2), 8, _tagged_with_task, schema).rdd.getNumPartitions() == 2
    assert over_tasks(spark, work.slice(0, 0), 8, _tagged_with_task, schema).collect() == []
