"""The values one column may take: `SortedRangeSet` (a union of disjoint ranges) and `Domain` (a
range set plus whether NULL is allowed), after Trino's SPI `SortedRangeSet` and `Domain`. Both are
immutable, and every set has one canonical form made by the factories: ranges sorted, disjoint, and
touching ranges merged when at least one touching end is inclusive (`[1,2)` and `[2,3]` become
`[1,3]`; `(1,2)` and `(2,3)` stay apart), so equal sets compare equal with `==`. Domains are
untyped: callers normalise literals with `pruner.predicate.values.normalize` first. The order is
treated as dense, so integer discreteness is not exploited (`x > 1 AND x < 2` on an integer column
stays a non-empty range); that only widens, which is safe for pruning. NaN rule: ranges never
contain NaN; a domain matches NaN when its values are all or when it says so (`nan_allowed`, as
`null_allowed` says it of NULL: `x > 5 OR is_nan(x)`, Spark's `x > 5`, where NaN is the greatest
double). Intersection and union combine whether each side matches NaN. The complement is not
NaN-aware: it matches NaN only if its values are all, although SQL `NOT (x < 5)` is true for NaN
in engines that order NaN above every number: translation layers must widen negations on float
and double columns themselves."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from pruner.predicate.ranges import Range, high_key, low_key
from pruner.predicate.values import Value, format_value, is_nan


class SortedRangeSet:
    """A set of values as sorted, disjoint, non-touching ranges. Build it with the factories; the
    constructor only accepts ranges already in canonical form (`ValueError` otherwise). Immutable.
    A set of single values made by `of_values` (an IN list) is held as its ascending values, and
    its `ranges` are made only when something asks for them: the planner reads a dynamic filter's
    100,000 keys as values (`discrete_values`, `range_count`, `contains_value`, `span`), and making
    a range of each would cost more than the prune. A set made by `of_integers` also keeps the
    packed array its values came in (`discrete_integers`), for lookups that take them as one array."""

    __slots__ = ("_integers", "_points", "_points_known", "_ranges")

    _ranges: tuple[Range, ...] | None  # None until asked for, for a set made of values
    _points: tuple[Value, ...] | None  # the values of a discrete set; None for any other set
    _points_known: bool  # whether `_points` was worked out (from the ranges, on first use)
    _integers: npt.NDArray[np.int64] | None  # `_points` as a read-only array, if made by `of_integers`

    def __init__(self, ranges: Iterable[Range] = ()) -> None:
        ranges = tuple(ranges)
        for before, after in itertools.pairwise(ranges):
            if not before < after or _mergeable(before, after):
                raise ValueError(
                    f"ranges are not in canonical form (sorted, disjoint, not touching): {before}, {after}; "
                    "use SortedRangeSet.of_ranges"
                )
        self._set(ranges, None, False)

    def _set(self, ranges: tuple[Range, ...] | None, points: tuple[Value, ...] | None, known: bool) -> None:
        object.__setattr__(self, "_ranges", ranges)
        object.__setattr__(self, "_points", points)
        object.__setattr__(self, "_points_known", known)
        object.__setattr__(self, "_integers", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"SortedRangeSet is immutable: cannot set {name}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuilt, (self._ranges, self._points, self._points_known))

    @property
    def ranges(self) -> tuple[Range, ...]:
        """The set's ranges, sorted, disjoint and not touching."""
        if self._ranges is None:
            assert self._points is not None, "a set without ranges is made of values"
            object.__setattr__(self, "_ranges", Range.points(self._points))
            assert self._ranges is not None
        return self._ranges

    # Factories -------------------------------------------------------------------------------

    @classmethod
    def none(cls) -> SortedRangeSet:
        return cls(())

    @classmethod
    def all(cls) -> SortedRangeSet:
        return cls((Range.all(),))

    @classmethod
    def of_ranges(cls, *ranges: Range) -> SortedRangeSet:
        """The union of the given ranges, in canonical form."""
        return cls(_canonical(ranges))

    @classmethod
    def of_values(cls, *values: Value) -> SortedRangeSet:
        """The set of the given values (an IN list); a NaN value is a `ValueError`. Values of one
        type are sorted and deduplicated as plain values and kept as values (sound: distinct
        points never overlap or touch), their ranges made only when asked for."""
        ascending = _ascending_distinct(values)
        if ascending is None:
            return cls.of_ranges(*(Range.equal(v) for v in values))
        return cls._of_points(tuple(ascending))

    @classmethod
    def of_integers(cls, values: npt.NDArray[np.int64]) -> SortedRangeSet:
        """The set of the integers in `values` (a packed IN list, a join's dynamic filter of up to
        100,000 keys): sorted and deduplicated in bulk, then held as `of_values` holds its values."""
        ascending = np.sort(values, kind="stable")
        if len(ascending) > 1:
            ascending = ascending[np.concatenate(([True], ascending[1:] != ascending[:-1]))]
        made = cls._of_points(tuple(ascending.tolist()))
        if len(ascending):
            ascending.flags.writeable = False
            object.__setattr__(made, "_integers", ascending)
        return made

    @classmethod
    def _of_points(cls, ascending: tuple[Value, ...]) -> SortedRangeSet:
        """The set of `ascending`: strictly ascending values of one type, free of None and NaN."""
        made = object.__new__(cls)
        if ascending:
            made._set(None, ascending, True)
        else:
            made._set((), None, True)
        return made

    # Predicates ------------------------------------------------------------------------------

    def range_count(self) -> int:
        """The number of ranges (of values, for a discrete set) without making them."""
        points = self._discrete()
        return len(points) if points is not None else len(self.ranges)

    def is_none(self) -> bool:
        return self.range_count() == 0

    def is_all(self) -> bool:
        return self._discrete() is None and len(self.ranges) == 1 and self.ranges[0].is_all()

    def is_single_value(self) -> bool:
        points = self._discrete()
        return points is not None and len(points) == 1

    def single_value(self) -> Value:
        """The one value of a single-value set; `ValueError` for any other set."""
        points = self._discrete()
        if points is None or len(points) != 1:
            raise ValueError(f"value set {self} is not a single value")
        return points[0]

    def is_discrete(self) -> bool:
        """Whether the set is a non-empty list of single values (an IN list)."""
        return self._discrete() is not None

    def discrete_values(self) -> tuple[Value, ...]:
        """The values of a discrete set, in order; `ValueError` if the set is not discrete."""
        points = self._discrete()
        if points is None:
            raise ValueError(f"value set {self} is not a list of single values")
        return points

    def discrete_integers(self) -> npt.NDArray[np.int64] | None:
        """The values of a set made by `of_integers` as one sorted, distinct, read-only int64 array
        (what `discrete_values` holds as a tuple), for consumers that take them as an array without
        converting 100,000 Python integers; None for any other set (a discrete one included)."""
        return self._integers

    def _discrete(self) -> tuple[Value, ...] | None:
        """The values of a discrete set (None for any other), found once per set: planning asks
        for an IN list of 100,000 values many times."""
        if not self._points_known:
            ranges = self.ranges
            values = tuple(r.low for r in ranges if r.low is not None and r.low == r.high)
            object.__setattr__(self, "_points", values if values and len(values) == len(ranges) else None)
            object.__setattr__(self, "_points_known", True)
        return self._points

    def contains_value(self, value: Value) -> bool:
        """Whether `value` is in the set; never true for NaN."""
        if is_nan(value):
            return False
        points = self._discrete()
        if points is not None:
            index = bisect.bisect_left(points, value)
            return index < len(points) and points[index] == value
        index = bisect.bisect_right(self.ranges, (1, value, 0), key=low_key)
        return index > 0 and self.ranges[index - 1].contains_value(value)

    def overlaps(self, other: SortedRangeSet) -> bool:
        return not self.intersect(other).is_none()

    # Operations ------------------------------------------------------------------------------

    def union(self, other: SortedRangeSet) -> SortedRangeSet:
        mine, theirs = self._discrete(), other._discrete()
        if mine is not None and theirs is not None:  # two lists of values: merged as values
            return SortedRangeSet.of_values(*mine, *theirs)
        return SortedRangeSet.of_ranges(*self.ranges, *other.ranges)

    def intersect(self, other: SortedRangeSet) -> SortedRangeSet:
        # a list of values meets anything value by value, without making its ranges
        for values, rest in ((self, other), (other, self)):
            points = values._discrete()
            if points is not None:
                return SortedRangeSet._of_points(tuple(v for v in points if rest.contains_value(v)))
        result: list[Range] = []
        i = j = 0
        while i < len(self.ranges) and j < len(other.ranges):
            mine, theirs = self.ranges[i], other.ranges[j]
            both = mine.intersect(theirs)
            if both is not None:
                result.append(both)
            # Advance whichever range ends first; the other may still meet the next one.
            if high_key(mine) <= high_key(theirs):
                i += 1
            else:
                j += 1
        return SortedRangeSet.of_ranges(*result)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SortedRangeSet):
            return NotImplemented
        mine, theirs = self._discrete(), other._discrete()
        if mine is not None or theirs is not None:
            return mine == theirs
        return self.ranges == other.ranges

    def __hash__(self) -> int:
        points = self._discrete()
        return hash(points) if points is not None else hash(self.ranges)

    def __repr__(self) -> str:
        return f"SortedRangeSet(ranges={self.ranges!r})"

    def complement(self) -> SortedRangeSet:
        """Every (non-NaN) value not in the set."""
        gaps: list[Range] = []
        low: Value | None = None
        low_inclusive = False
        for r in self.ranges:
            if r.low is not None:
                gap = Range.between(low, low_inclusive, r.low, not r.low_inclusive)
                if gap is not None:
                    gaps.append(gap)
            if r.high is None:
                return SortedRangeSet.of_ranges(*gaps)
            low, low_inclusive = r.high, not r.high_inclusive
        gaps.append(Range(low, low_inclusive and low is not None, None, False))
        return SortedRangeSet.of_ranges(*gaps)

    def span(self) -> Range | None:
        """The smallest single range covering the set, `None` for the empty set. A widening: the
        span also holds the values in the gaps between the set's ranges."""
        points = self._discrete()
        if points is not None:
            return Range(points[0], True, points[-1], True)
        if not self.ranges:
            return None
        first, last = self.ranges[0], self.ranges[-1]
        return Range(first.low, first.low_inclusive, last.high, last.high_inclusive)

    def __str__(self) -> str:
        return "{" + ", ".join(str(r) for r in self.ranges) + "}"


ValueSet: TypeAlias = SortedRangeSet
"""The value-set abstraction of Trino; lakeprune has only the range-based kind."""


@dataclass(frozen=True)
class Domain:
    """The values a column may take: a range set, whether NULL is allowed, and whether NaN is
    beyond what the values say (canonical: false when the values are all, which match NaN)."""

    values: SortedRangeSet
    null_allowed: bool
    nan_allowed: bool = False

    def __post_init__(self) -> None:
        if self.nan_allowed and self.values.is_all():
            object.__setattr__(self, "nan_allowed", False)

    # Factories -------------------------------------------------------------------------------

    @classmethod
    def all(cls) -> Domain:
        return cls(SortedRangeSet.all(), True)

    @classmethod
    def none(cls) -> Domain:
        return cls(SortedRangeSet.none(), False)

    @classmethod
    def only_null(cls) -> Domain:
        return cls(SortedRangeSet.none(), True)

    @classmethod
    def not_null(cls) -> Domain:
        return cls(SortedRangeSet.all(), False)

    @classmethod
    def single_value(cls, value: Value) -> Domain:
        return cls(SortedRangeSet.of_values(value), False)

    @classmethod
    def multiple_values(cls, values: Iterable[Value], null_allowed: bool = False) -> Domain:
        return cls(SortedRangeSet.of_values(*values), null_allowed)

    @classmethod
    def of(cls, values: SortedRangeSet, null_allowed: bool) -> Domain:
        return cls(values, null_allowed)

    @classmethod
    def only_nan(cls) -> Domain:
        """The rows holding NaN (`is_nan(x)`)."""
        return cls(SortedRangeSet.none(), False, nan_allowed=True)

    # Predicates ------------------------------------------------------------------------------

    def is_all(self) -> bool:
        return self.null_allowed and self.values.is_all()

    def is_none(self) -> bool:
        return not self.null_allowed and not self.nan_allowed and self.values.is_none()

    def is_only_null(self) -> bool:
        return self.null_allowed and not self.nan_allowed and self.values.is_none()

    def is_null_allowed(self) -> bool:
        return self.null_allowed

    def is_nan_allowed(self) -> bool:
        """Whether NaN matches beyond the values (which then are not all): a lookup of the values
        alone (record, secondary, bloom index) misses the rows holding NaN."""
        return self.nan_allowed

    def matches_nan(self) -> bool:
        return self.nan_allowed or self.values.is_all()

    def is_single_value(self) -> bool:
        """Whether exactly one non-null value matches (and neither NULL nor NaN does)."""
        return not self.null_allowed and not self.nan_allowed and self.values.is_single_value()

    def contains_value(self, value: Value | None) -> bool:
        """Whether a row holding `value` matches; `None` is SQL NULL. NaN matches a domain whose
        values are all or that allows NaN (see the module docstring)."""
        if value is None:
            return self.null_allowed
        if is_nan(value):
            return self.matches_nan()
        return self.values.contains_value(value)

    def overlaps(self, other: Domain) -> bool:
        return (
            (self.null_allowed and other.null_allowed)
            or (self.nan_allowed and other.matches_nan())
            or (other.nan_allowed and self.matches_nan())
            or self.values.overlaps(other.values)
        )

    # Operations ------------------------------------------------------------------------------

    def intersect(self, other: Domain) -> Domain:
        return Domain(
            self.values.intersect(other.values),
            self.null_allowed and other.null_allowed,
            self.matches_nan() and other.matches_nan(),
        )

    def union(self, other: Domain) -> Domain:
        """Every value of either domain. A widening for NaN: ranges that together cover every
        number merge into all values, and an all-values domain admits NaN (see the module
        docstring) although neither operand did — the safe direction for pruning."""
        return Domain(
            self.values.union(other.values),
            self.null_allowed or other.null_allowed,
            self.nan_allowed or other.nan_allowed,
        )

    def complement(self) -> Domain:
        """The other values, with NULL flipped too (as in Trino). Not NaN-aware: see the module
        docstring."""
        return Domain(self.values.complement(), not self.null_allowed)

    def explain(self, column: str) -> str:
        """A readable condition on `column` for explain output, e.g.
        `(ts >= 2026-01-01T00:00:00Z OR ts IS NULL)`."""
        if self.is_all():
            return "TRUE"
        if self.is_none():
            return "FALSE"
        if self.values.is_all():
            return f"{column} IS NOT NULL"
        conditions = [] if self.values.is_none() else [_explain_values(column, self.values)]
        if self.nan_allowed:
            conditions.append(f"is_nan({column})")
        if self.null_allowed:
            conditions.append(f"{column} IS NULL")
        return conditions[0] if len(conditions) == 1 else f"({' OR '.join(conditions)})"

    def __str__(self) -> str:
        extra = (" OR NaN" if self.nan_allowed else "") + (" OR NULL" if self.null_allowed else "")
        return f"{self.values}{extra}"


# An explained value list names at most this many values, then how many there are: a join's
# dynamic filter of 100,000 keys would otherwise cost more to explain than to plan.
EXPLAINED_VALUES = 20


def _value_list(items: Sequence[Value]) -> str:
    shown = ", ".join(format_value(v) for v in items[:EXPLAINED_VALUES])
    return shown if len(items) <= EXPLAINED_VALUES else f"{shown}, ... ({len(items):,} values)"


def _explain_values(column: str, values: SortedRangeSet) -> str:
    if values.is_discrete():
        items = values.discrete_values()
        if len(items) == 1:
            return f"{column} = {format_value(items[0])}"
        return f"{column} IN ({_value_list(items)})"
    excluded = values.complement()
    if excluded.is_discrete():
        items = excluded.discrete_values()
        if len(items) == 1:
            return f"{column} <> {format_value(items[0])}"
        return f"{column} NOT IN ({_value_list(items)})"
    terms: list[str] = []
    points: list[Value] = []
    for r in values.ranges:
        if r.is_single_value():
            points.append(r.single_value())
        else:
            terms.append(_explain_range(column, r))
    if len(points) == 1:
        terms.append(f"{column} = {format_value(points[0])}")
    elif points:
        terms.append(f"{column} IN ({_value_list(points)})")
    if len(terms) == 1:
        return terms[0]
    return "(" + " OR ".join(terms) + ")"


def _explain_range(column: str, r: Range) -> str:
    parts: list[str] = []
    if r.low is not None:
        parts.append(f"{column} {'>=' if r.low_inclusive else '>'} {format_value(r.low)}")
    if r.high is not None:
        parts.append(f"{column} {'<=' if r.high_inclusive else '<'} {format_value(r.high)}")
    if len(parts) == 2:
        return f"({parts[0]} AND {parts[1]})"
    return parts[0]


def _mergeable(before: Range, after: Range) -> bool:
    """Whether two ranges, `before` sorting no later than `after`, overlap or touch with at least
    one inclusive touching end (so their union is one range)."""
    if before.high is None or after.low is None:
        return True
    if after.low < before.high:  # type: ignore[operator]
        return True
    return after.low == before.high and (before.high_inclusive or after.low_inclusive)


def _ascending_distinct(values: tuple[Value, ...]) -> list[Value] | None:
    """`values` ascending without repeats, or None when they are not plain values of one type
    that sort (a None, a NaN, mixed types): those take the checked way, which raises for them."""
    kinds: set[type] = {type(v) for v in values}
    if len(kinds) != 1:
        return None
    kind = kinds.pop()
    if kind is type(None) or (kind in (float, Decimal) and any(is_nan(v) for v in values)):
        return None
    try:
        return sorted(set(values))
    except TypeError:
        return None


def _rebuilt(
    ranges: tuple[Range, ...] | None, points: tuple[Value, ...] | None, known: bool
) -> SortedRangeSet:
    """A pickled set as it was (`SortedRangeSet.__reduce__`)."""
    made = object.__new__(SortedRangeSet)
    made._set(ranges, points, known)
    return made


def _canonical(ranges: Iterable[Range]) -> tuple[Range, ...]:
    result: list[Range] = []
    for r in sorted(ranges):
        if result and _mergeable(result[-1], r):
            result[-1] = result[-1].span(r)
        else:
            result.append(r)
    return tuple(result)
