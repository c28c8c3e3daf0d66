"""An IN list as the keys of a lookup: the domain's values as one Arrow array of the column's type,
made once per prune and column (`StepContext.keys`), so that the record, secondary and bloom
lookups hash, search and compare all keys with vectorised Arrow / numpy calls instead of a Python
loop per key. Values no row of the column can hold (an integer beyond the type's range, a decimal
beyond its precision or scale, a value of another type: whatever `normalize` refuses) are dropped:
no row equals them, so leaving them out never prunes a file holding a match. Bound predicates hold
only normalised values; the check runs, value by value, only when Arrow refuses the whole list."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from pruner.errors import InvalidInputError
from pruner.predicate.domain import SortedRangeSet
from pruner.predicate.values import Value, normalize
from pruner.types import ColumnType

# What Arrow raises for a value it cannot convert to the type (out of range, of another type).
_REFUSED = (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError)


def discrete_keys(values: SortedRangeSet, column_type: ColumnType) -> pa.Array:
    """The values of a discrete set as `key_array` makes them; a packed IN list of an integer
    column (`SortedRangeSet.of_integers`) converted from its array at once."""
    packed = values.discrete_integers()
    if packed is not None and column_type.is_integer:
        return key_array(packed, column_type)
    return key_array(values.discrete_values(), column_type)


def key_array(values: Sequence[Value] | npt.NDArray[np.int64], column_type: ColumnType) -> pa.Array:
    """`values` (distinct literals of `column_type`) as an array of its Arrow type, without the
    values no row of the column can hold."""
    arrow_type = column_type.to_arrow()
    try:
        return pa.array(values, arrow_type)
    except _REFUSED:  # rare (a TupleDomain not bound to the table): one value at a time
        listed: Sequence[Value] = values.tolist() if isinstance(values, np.ndarray) else values
        return pa.array([v for v in listed if _holdable(v, column_type)], arrow_type)


def _holdable(value: Value, column_type: ColumnType) -> bool:
    try:
        pa.array([normalize(value, column_type)], column_type.to_arrow())
    except (InvalidInputError, *_REFUSED):
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
