"""What the builder's Spark task functions share: the type of a `mapInArrow` function, and walking a
task's sorted input one run of rows at a time. A task whose input Spark sorted by some key columns
holds one run (the rows that share those columns' values: a file group, an index bucket, a file) in
memory at a time, never its whole partition; a run split across Arrow batches comes out whole."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pyarrow as pa

BatchFunction = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]


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
