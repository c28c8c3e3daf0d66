"""`Range`: one non-empty interval of values of a column, the building block of a value set (see
Trino's SPI `Range`). Each end is a value with an inclusive flag, or `None` for unbounded (an
unbounded end is never inclusive). The invariants are checked on construction: no NaN bound, low
<= high, and a single point only as `[v, v]`; an empty range cannot exist, so `between` and
`intersect` return `None` instead. No range contains NaN. Ranges are immutable; `intersect` and
`span` return new ranges, and ranges sort by their low bound (unbounded first, and at an equal
value the inclusive bound first)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import total_ordering
from typing import Any

from pruner.predicate.values import Value, format_value, is_nan

_Key = tuple[Any, ...]


@total_ordering
@dataclass(frozen=True)
class Range:
    """A non-empty interval; `None` for an end means unbounded on that side."""

    low: Value | None
    low_inclusive: bool
    high: Value | None
    high_inclusive: bool

    def __post_init__(self) -> None:
        if is_nan(self.low) or is_nan(self.high):
            raise ValueError("a range bound cannot be NaN")
        if self.low is None and self.low_inclusive:
            raise ValueError("an unbounded low end cannot be inclusive")
        if self.high is None and self.high_inclusive:
            raise ValueError("an unbounded high end cannot be inclusive")
        if self.low is not None and self.high is not None:
            try:
                inverted = self.low > self.high  # type: ignore[operator]
            except TypeError:
                raise ValueError(f"range bounds are not comparable: {self.low!r} and {self.high!r}") from None
            if inverted:
                raise ValueError(f"empty range: low {self.low!r} > high {self.high!r}")
            if self.low == self.high and not (self.low_inclusive and self.high_inclusive):
                raise ValueError(f"empty range: a single value {self.low!r} must be inclusive on both ends")

    # Factories -------------------------------------------------------------------------------

    @classmethod
    def all(cls) -> Range:
        return cls(None, False, None, False)

    @classmethod
    def equal(cls, value: Value) -> Range:
        return cls(_bound(value), True, value, True)

    @classmethod
    def points(cls, ascending: Iterable[Value]) -> tuple[Range, ...]:
        """`[v, v]` for each value of `ascending`, which the caller has made strictly ascending and
        free of None and NaN: built without checking each range again, because an IN list (a
        dynamic filter's) can hold 100,000 values and the checks would cost more than the prune."""
        points = []
        new = object.__new__
        for value in ascending:
            point = new(cls)
            fields = point.__dict__
            fields["low"] = fields["high"] = value
            fields["low_inclusive"] = fields["high_inclusive"] = True
            points.append(point)
        return tuple(points)

    @classmethod
    def greater_than(cls, value: Value) -> Range:
        return cls(_bound(value), False, None, False)

    @classmethod
    def greater_than_or_equal(cls, value: Value) -> Range:
        return cls(_bound(value), True, None, False)

    @classmethod
    def less_than(cls, value: Value) -> Range:
        return cls(None, False, _bound(value), False)

    @classmethod
    def less_than_or_equal(cls, value: Value) -> Range:
        return cls(None, False, _bound(value), True)

    @classmethod
    def between(
        cls, low: Value | None, low_inclusive: bool, high: Value | None, high_inclusive: bool
    ) -> Range | None:
        """The range between two bounds (`None` = unbounded, whose inclusive flag is ignored), or
        `None` when it holds no value. A NaN bound is a `ValueError`."""
        low_inclusive = low_inclusive and low is not None
        high_inclusive = high_inclusive and high is not None
        if is_nan(low) or is_nan(high):
            raise ValueError("a range bound cannot be NaN")
        if low is not None and high is not None:
            if low > high:  # type: ignore[operator]
                return None
            if low == high and not (low_inclusive and high_inclusive):
                return None
        return cls(low, low_inclusive, high, high_inclusive)

    # Predicates ------------------------------------------------------------------------------

    def is_all(self) -> bool:
        return self.low is None and self.high is None

    def is_single_value(self) -> bool:
        return self.low is not None and self.high is not None and self.low == self.high

    def single_value(self) -> Value:
        """The one value of a single-value range; `ValueError` for any other range."""
        if self.low is None or not self.is_single_value():
            raise ValueError(f"range {self} is not a single value")
        return self.low

    def contains_value(self, value: Value) -> bool:
        """Whether `value` lies in the range; never true for NaN."""
        if is_nan(value):
            return False
        if self.low is not None:
            if value < self.low:  # type: ignore[operator]
                return False
            if value == self.low and not self.low_inclusive:
                return False
        if self.high is not None:
            if value > self.high:  # type: ignore[operator]
                return False
            if value == self.high and not self.high_inclusive:
                return False
        return True

    def overlaps(self, other: Range) -> bool:
        return self.intersect(other) is not None

    # Operations ------------------------------------------------------------------------------

    def intersect(self, other: Range) -> Range | None:
        """The values in both ranges, or `None` if there are none."""
        low, low_inclusive = (
            (self.low, self.low_inclusive)
            if low_key(self) >= low_key(other)
            else (other.low, other.low_inclusive)
        )
        high, high_inclusive = (
            (self.high, self.high_inclusive)
            if high_key(self) <= high_key(other)
            else (other.high, other.high_inclusive)
        )
        return Range.between(low, low_inclusive, high, high_inclusive)

    def span(self, other: Range) -> Range:
        """The smallest range covering both ranges; a widening when they do not overlap or touch."""
        low, low_inclusive = (
            (self.low, self.low_inclusive)
            if low_key(self) <= low_key(other)
            else (other.low, other.low_inclusive)
        )
        high, high_inclusive = (
            (self.high, self.high_inclusive)
            if high_key(self) >= high_key(other)
            else (other.high, other.high_inclusive)
        )
        return Range(low, low_inclusive, high, high_inclusive)

    # Ordering and display --------------------------------------------------------------------

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Range):
            return NotImplemented
        return (low_key(self), high_key(self)) < (low_key(other), high_key(other))

    def __str__(self) -> str:
        if self.is_single_value():
            return f"[{format_value(self.low)}]"  # type: ignore[arg-type]
        low = "(-inf" if self.low is None else ("[" if self.low_inclusive else "(") + format_value(self.low)
        high = (
            "+inf)" if self.high is None else format_value(self.high) + ("]" if self.high_inclusive else ")")
        )
        return f"{low}, {high}"


def low_key(r: Range) -> _Key:
    """Sort key of a low bound: unbounded first, then by value, inclusive before exclusive."""
    if r.low is None:
        return (0,)
    return (1, r.low, 0 if r.low_inclusive else 1)


def high_key(r: Range) -> _Key:
    """Sort key of a high bound: by value, exclusive before inclusive, unbounded last."""
    if r.high is None:
        return (2,)
    return (1, r.high, 1 if r.high_inclusive else 0)


def _bound(value: Value) -> Value:
    if value is None:
        raise ValueError("a range bound needs a value; use Range.all() for an unbounded range")
    return value
