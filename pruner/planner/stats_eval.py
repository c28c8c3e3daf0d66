"""Evaluating a Domain against min / max / count statistics (of files or partitions), vectorised
with pyarrow.compute. The contract (as in DataFusion's PruningPredicate): True = might match,
False = proven not to match; unknown statistics mean True. Bounds are compared only after widening
(decimals outward to doubles, inexact conversions made inclusive), so the result never proves
something the exact values would not.

A domain's ranges are sorted and disjoint, so their bounds ascend; a stats row [min, max] meets the
domain exactly when the first range whose high end is not below `min` has its low end not above
`max`. `might_match` finds that range for every row with one binary search over the ranges' high
ends, then makes one comparison of `max` with its low end: the cost grows with the number of rows
plus the log of the number of ranges, so an IN list of 100,000 values costs about as much as one
value. Widening may make neighbouring bounds equal or out of order (two decimals that round to one
double); they are widened further until they ascend again, which only keeps more rows."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pruner.index.stats import FAMILY_TYPES, family
from pruner.numeric import one_ulp_beyond, round_outward
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.values import Value
from pruner.types import ColumnType, TypeKind


def _bound(value: Value, column_type: ColumnType, upper: bool) -> tuple[object, bool]:
    """The bound as a Python value of the stats family's type, and whether the conversion was
    exact."""
    if isinstance(value, bool):
        return int(value), True
    if isinstance(value, Decimal):
        # The nearest double, moved one ulp outward when it is not exact: never narrower than
        # `round_outward` (one ulp wider when the nearest double already lay outside), so the
        # ends of neighbouring ranges can come out of order; `_ends` widens them back.
        nearest = float(value)
        exact = Decimal(nearest) == value
        return (nearest if exact else one_ulp_beyond(nearest, upper)), exact
    if isinstance(value, float) and column_type.kind is TypeKind.FLOAT:
        # Engines disagree on `real_col <= 0.1` (Trino rounds the literal to 32 bits, Spark widens
        # the column to 64): widen the bound to the enclosing float32 so both answers are kept.
        rounded = round_outward(value, upper, bits=32)
        return rounded, rounded == value
    return value, True


# The kinds whose values `_bound` converts (decimals, floats, booleans as integers); the others'
# bounds are compared as they are, which a large IN list's ends are spared going through one by one.
_CONVERTED = frozenset({TypeKind.DECIMAL, TypeKind.FLOAT, TypeKind.DOUBLE, TypeKind.BOOLEAN})


def _ends(
    values: list[Value | None], inclusive: list[bool], column_type: ColumnType, upper: bool
) -> tuple[pa.Array, npt.NDArray[np.bool_]]:
    """Range ends (values and whether each is inclusive), in ascending order, as an array of the
    stats family and whether each is compared inclusively; ascending (not decreasing anywhere)
    after widening."""
    assert None not in values, "an unbounded end has no value to compare"
    if column_type.kind in _CONVERTED:
        converted, exact = _unzip([_bound(v, column_type, upper) for v in values if v is not None])
        inclusive = [i or not e for i, e in zip(inclusive, exact, strict=True)]
        values = converted
    flags = np.array(inclusive, dtype=np.bool_)
    array = pa.array(values, FAMILY_TYPES[family(column_type)])
    if pa.types.is_floating(array.type) and len(array) > 1:
        raw = array.to_numpy()
        # Upper ends widen up (running maximum), lower ends down (running minimum from the right).
        ascending = np.maximum.accumulate(raw) if upper else np.minimum.accumulate(raw[::-1])[::-1]
        tied = np.zeros(len(raw), dtype=np.bool_)
        tied[1:] |= ascending[1:] == ascending[:-1]
        tied[:-1] |= ascending[1:] == ascending[:-1]
        flags |= tied | (ascending != raw)
        array = pa.array(ascending, array.type)
    return array, flags


def _unzip(pairs: list[tuple[Any, bool]]) -> tuple[list[Any], list[bool]]:
    return [first for first, _ in pairs], [second for _, second in pairs]


def _discrete_ends(values: SortedRangeSet, column_type: ColumnType) -> pa.Array | None:
    """The values of a discrete set whose bounds `_bound` leaves as they are, as one array of the
    stats family: each value is both ends of its range, inclusive. A packed IN list
    (`SortedRangeSet.of_integers`) is converted from its array at once. None for any other set."""
    if column_type.kind in _CONVERTED or not values.is_discrete():
        return None
    packed = values.discrete_integers()
    points = packed if packed is not None else list(values.discrete_values())
    return pa.array(points, FAMILY_TYPES[family(column_type)])


def _range_ends(values: SortedRangeSet, upper: bool) -> tuple[list[Value | None], list[bool]]:
    """The bounded high (`upper`) or low ends of the set's ranges, ascending, and whether each is
    inclusive; an unbounded end (only the last range's high or the first range's low can be one)
    is left out. Of a set of single values, its values, without making a range of each."""
    if values.is_discrete():
        points = values.discrete_values()
        return list(points), [True] * len(points)
    if upper:
        return [r.high for r in values.ranges if r.high is not None], [
            r.high_inclusive for r in values.ranges if r.high is not None
        ]
    return [r.low for r in values.ranges if r.low is not None], [
        r.low_inclusive for r in values.ranges if r.low is not None
    ]


def might_match(domain: Domain, column_type: ColumnType, stats: pa.Table) -> npt.NDArray[np.bool_]:
    """For each stats row: could a row of that file / partition be in `domain`?"""
    n = stats.num_rows
    values = stats["value_count"].to_numpy(zero_copy_only=False)
    nulls = stats["null_count"].to_numpy(zero_copy_only=False)
    nans = stats["nan_count"].to_numpy(zero_copy_only=False)
    result = np.zeros(n, dtype=bool)
    if domain.is_null_allowed():
        result |= nulls > 0
    if domain.values.is_all():  # matches every non-null value, NaN included
        return np.asarray(result | (values - nulls > 0), dtype=bool)
    if domain.is_nan_allowed():  # a file's unknown NaN count may hold one
        result |= pc.fill_null(pc.greater(stats["nan_count"], 0), True).to_numpy(zero_copy_only=False)
    if domain.values.is_none():
        return result
    fam = family(column_type)
    low_stat, high_stat = stats[f"min_{fam}"].combine_chunks(), stats[f"max_{fam}"].combine_chunks()
    ordinary = (values - nulls - nans) > 0
    return np.asarray(
        result | (ordinary & _meets_ranges(domain.values, column_type, low_stat, high_stat)), dtype=bool
    )


def _meets_ranges(
    values: SortedRangeSet, column_type: ColumnType, low_stat: pa.Array, high_stat: pa.Array
) -> npt.NDArray[np.bool_]:
    """Whether [low_stat[i], high_stat[i]] meets one of the ranges of `values` (a non-empty set); a
    NULL statistic is unknown and meets everything on its side."""
    n = len(low_stat)
    count = values.range_count()
    # A set of values has the same ends above and below, inclusive, compared as they are.
    discrete = _discrete_ends(values, column_type)
    # first[i]: the first range whose high end does not lie below row i's minimum (count if none).
    # Only the last range can be unbounded above; no row's minimum lies above its high end.
    if discrete is not None:
        highs, inclusive = discrete, np.ones(len(discrete), dtype=np.bool_)
    else:
        highs, inclusive = _ends(*_range_ends(values, upper=True), column_type, upper=True)
    bounded = len(highs)
    first = np.zeros(n, dtype=np.int64)
    if bounded:
        first = pc.fill_null(pc.search_sorted(highs, low_stat, side="left"), 0).to_numpy().astype(np.int64)
        if not inclusive.all():  # a minimum equal to an exclusive high end lies beyond that range
            at = np.minimum(first, bounded - 1)
            on_end = _filled(pc.equal(low_stat, highs.take(pa.array(at))), False)
            first += (first < bounded) & on_end & ~inclusive[at]
    # Does row i's maximum reach range first[i]'s low end? Only the first range can be unbounded
    # below; every maximum reaches it.
    if discrete is not None:
        lows, low_inclusive, skip = discrete, inclusive, 0
    else:
        low_ends, low_flags = _range_ends(values, upper=False)
        skip = count - len(low_ends)
        lows, low_inclusive = _ends(low_ends, low_flags, column_type, upper=False)
    reaches = np.ones(n, dtype=np.bool_)
    index = np.minimum(first, count - 1) - skip
    tested = index >= 0
    if tested.any():
        at = np.where(tested, index, 0)
        low = lows.take(pa.array(at))
        if low_inclusive.all():
            reaches = _filled(pc.greater_equal(high_stat, low), True)
        else:
            above = _filled(pc.greater(high_stat, low), True)
            reaches = above | (_filled(pc.equal(high_stat, low), False) & low_inclusive[at])
        reaches |= ~tested
    return np.asarray((first < count) & reaches, dtype=np.bool_)


def _filled(compared: pa.Array, unknown: bool) -> npt.NDArray[np.bool_]:
    """A comparison's result as booleans, `unknown` where a side was NULL."""
    return np.asarray(pc.fill_null(compared, unknown).to_numpy(zero_copy_only=False), dtype=np.bool_)
