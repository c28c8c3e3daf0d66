"""An IN list as the keys of a lookup: the domain's values as one Arrow array of the column's type,
made once per prune and column (`StepContext.keys`), so that the record, secondary and bloom
lookups hash, search and compare all keys with vectorised Arrow / numpy calls instead of a Python
loop per key. Values no column of the type can hold (an integer beyond its range, a decimal beyond
its precision or scale) are dropped: no row holds them, so leaving them out never prunes a file
holding a match. Values of another Python type than the column's are a bug and raise."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from pruner.predicate.values import Value
from pruner.types import ColumnType

# What Arrow raises for a value out of the type's range (a value of another type raises TypeError).
_OUT_OF_RANGE = (pa.ArrowInvalid, OverflowError)


def key_array(values: Sequence[Value], column_type: ColumnType) -> pa.Array:
    """`values` (distinct, normalised literals of `column_type`) as an array of its Arrow type,
    without the values it cannot hold."""
    arrow_type = column_type.to_arrow()
    try:
        return pa.array(values, arrow_type)
    except _OUT_OF_RANGE:  # rare: one value at a time, to drop those out of range
        return pa.array([v for v in values if _fits(v, arrow_type)], arrow_type)


def _fits(value: Value, arrow_type: pa.DataType) -> bool:
    try:
        pa.array([value], arrow_type)
    except _OUT_OF_RANGE:
        return False
    return True


def combinations(columns: Sequence[pa.Array]) -> list[pa.Array]:
    """Every combination of one value of each array (their cartesian product, the first array
    varying slowest), as one array per column, built with one `take` per column."""
    sizes = tuple(len(c) for c in columns)
    if not sizes:
        return []
    positions = np.indices(sizes).reshape(len(sizes), -1)
    return [c.take(pa.array(p)) for c, p in zip(columns, positions, strict=True)]
