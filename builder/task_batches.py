"""What the builder's Spark task functions share: the type of a `mapInArrow` function, running one
over a work list the driver holds (files, buckets), and walking a task's sorted input one run of
rows at a time. A task whose input Spark sorted by some key columns holds one run (the rows that
share those columns' values: a file group, an index bucket, a file) in memory at a time, never its
whole partition; a run split across Arrow batches comes out whole."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

BatchFunction = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]


def string_columns(items: Sequence[object], fields: Sequence[str]) -> pa.Table:
    """The `fields` attributes of `items` (dataclasses of files), as string columns: a work list
    for `over_tasks`."""
    return pa.table({name: pa.array([getattr(item, name) for item in items], pa.string()) for name in fields})


def over_tasks(
    spark: SparkSession, work: pa.Table, tasks: int, function: BatchFunction, schema: StructType | str
) -> DataFrame:
    """`function` run by `tasks` Spark tasks (at most one per row) over the rows of `work`, each
    task given a share of consecutive rows as Arrow batches, as `mapInArrow` runs it over a
    DataFrame. The rows travel in the function's closure and each task takes its share by the
    row positions `spark.range` gives it. A DataFrame of the rows made on the driver has at most a
    partition per core, and spreading it over more tasks with `repartition` cost a shuffle, a Spark
    job of its own, in every adopt, index build, first insert and index compaction."""

    def run(positions: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        shares = (work.take(batch.column(0)) for batch in positions)
        yield from function(batch for share in shares for batch in share.to_batches())

    return spark.range(0, work.num_rows, 1, max(1, min(tasks, work.num_rows))).mapInArrow(run, schema)


def _run_starts(batch: pa.RecordBatch, columns: Sequence[str]) -> np.ndarray:
    """Positions (after the first) where any of `columns` differs from the row before."""
    changed = np.zeros(max(0, batch.num_rows - 1), dtype=bool)
    for name in columns:
        column = batch.column(name)
        values = column.to_numpy(zero_copy_only=False)
        valid = column.is_valid().to_numpy(zero_copy_only=False)
        changed |= ((values[1:] != values[:-1]) & valid[1:] & valid[:-1]) | (valid[1:] != valid[:-1])
    return np.flatnonzero(changed) + 1


def runs(batches: Iterator[pa.RecordBatch], columns: Sequence[str]) -> Iterator[pa.Table]:
    """Each run of consecutive rows with equal values in `columns`, as one table, from batches
    sorted (or at least grouped) by those columns. Null compares equal to null."""
    pending: list[pa.RecordBatch] = []
    current: tuple[object, ...] | None = None
    for batch in batches:
        if batch.num_rows == 0:
            continue
        cuts = [0, *_run_starts(batch, columns).tolist(), batch.num_rows]
        for start, end in itertools.pairwise(cuts):
            key = tuple(batch.column(name)[start].as_py() for name in columns)
            if pending and key != current:
                yield pa.Table.from_batches(pending)
                pending = []
            current = key
            pending.append(batch.slice(start, end - start))
    if pending:
        yield pa.Table.from_batches(pending)
