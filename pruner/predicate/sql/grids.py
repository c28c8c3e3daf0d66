"""The values a column type can hold, to snap a literal to without dropping a matching row. A
`Grid` answers floor / ceil / exact for integers (clamped to the type's range), decimals (the
column's scale), doubles and reals (including the infinities) and dates compared with a timestamp
at midnight UTC; `candidates` lists every value engines may compare a numeric literal as (its exact
value, its rounding to the floating type of a floating column, one double step either side of an
approximate literal against an integer or decimal column); `compare_domain` turns `column op x`,
for x anywhere in such a hull, into the smallest domain of grid values that holds every match."""

from __future__ import annotations

import math
from datetime import UTC, datetime, time, timedelta
from decimal import Context, Decimal, localcontext
from typing import Any

from pruner.numeric import Bits, nearest_float32, one_ulp_beyond, quantize_outward, round_down, round_up
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.values import Value
from pruner.types import ColumnType, TypeKind

_CONTEXT = Context(prec=200)


class Grid:
    """The values a column can hold, to snap a literal to: `floor` is the greatest value <= x,
    `ceil` the least value >= x (`None` if there is none), `exact` the value equal to x or `None`."""

    def floor(self, x: Any) -> Value | None:
        return x  # type: ignore[no-any-return]

    def ceil(self, x: Any) -> Value | None:
        return x  # type: ignore[no-any-return]

    def exact(self, x: Any) -> Value | None:
        low = self.floor(x)
        return low if low is not None and low == x else None


IDENTITY = Grid()


class Integers(Grid):
    def __init__(self, low: int, high: int) -> None:
        self.low, self.high = low, high

    def floor(self, x: Decimal) -> Value | None:
        if x < self.low:
            return None
        return self.high if x > self.high else int(quantize_outward(x, 0, up=False))

    def ceil(self, x: Decimal) -> Value | None:
        if x > self.high:
            return None
        return self.low if x < self.low else int(quantize_outward(x, 0, up=True))


class Decimals(Grid):
    def __init__(self, column_type: ColumnType) -> None:
        self.scale = column_type.scale
        step = Decimal(1).scaleb(-column_type.scale)
        self.high = Decimal(10) ** (column_type.precision - column_type.scale) - step

    def floor(self, x: Decimal) -> Value | None:
        if x < -self.high:
            return None
        return self.high if x > self.high else quantize_outward(x, self.scale, up=False)

    def ceil(self, x: Decimal) -> Value | None:
        if x > self.high:
            return None
        return -self.high if x < -self.high else quantize_outward(x, self.scale, up=True)


class Floats(Grid):
    """Doubles (width 64) or reals (width 32), including the infinities."""

    def __init__(self, width: Bits) -> None:
        self.width: Bits = width

    def nearest(self, x: Decimal) -> float:
        """x rounded to the nearest value (through double for reals)."""
        value = float(x)
        return value if self.width == 64 else nearest_float32(value)

    def floor(self, x: Decimal) -> Value | None:
        return round_down(x, self.width)

    def ceil(self, x: Decimal) -> Value | None:
        return round_up(x, self.width)


class Dates(Grid):
    """Dates, compared with a timestamp at midnight UTC."""

    def floor(self, x: datetime) -> Value | None:
        return x.astimezone(UTC).date()

    def ceil(self, x: datetime) -> Value | None:
        day = x.astimezone(UTC).date()
        if self.exact(x) is not None:
            return day
        try:
            return day + timedelta(days=1)
        except OverflowError:
            return None

    def exact(self, x: datetime) -> Value | None:
        day = x.astimezone(UTC).date()
        return day if datetime.combine(day, time(), UTC) == x else None


def numeric_grid(column_type: ColumnType) -> Grid:
    kind = column_type.kind
    if (bounds := kind.integer_bounds) is not None:
        return Integers(*bounds)
    if (bits := kind.float_bits) is not None:
        return Floats(bits)
    if kind is TypeKind.DECIMAL:
        return Decimals(column_type)
    raise ValueError(f"{column_type} is not a numeric type")


def candidates(grid: Grid, exact: Decimal, approximate: Bits | None, op: str) -> list[Decimal]:
    """Values that `column op literal` may compare the literal as: engines round a decimal literal
    to the floating type of a floating column, and round an integer or decimal column to double
    (or real) against a double (real) literal; `column op c` for some c in the hull of these is
    TRUE whenever `column op literal` is, under exact or engine semantics."""
    values = [exact]
    if not exact.is_finite():
        return values
    if isinstance(grid, Floats):
        short = len(exact.as_tuple().digits) <= 15 and -22 <= int(exact.as_tuple().exponent) <= 22
        low, high = grid.floor(exact), grid.ceil(exact)
        if not short:  # engines' decimal-to-double conversions may round either way
            values += [Decimal(v) for v in (low, high) if isinstance(v, float)]
            return values
        values.append(Decimal(float(exact)))
        if grid.width == 32:
            values.append(Decimal(nearest_float32(float(exact))))
            assert isinstance(low, float) and isinstance(high, float)
            if math.isinf(low) or math.isinf(high):
                values += [Decimal(low), Decimal(high)]
            else:  # the nearest real, rounded directly (both on a tie)
                with localcontext(_CONTEXT):
                    below, above = exact - Decimal(low), Decimal(high) - exact
                if below <= above:
                    values.append(Decimal(low))
                if above <= below:
                    values.append(Decimal(high))
    elif approximate:
        # With f the literal as a double and r(g) any faithful rounding of a column value g:
        # r(g) < f needs g < f, r(g) <= f needs g < next(f), r(g) = f needs prev(f) < g < next(f),
        # and r(g) <> f holds for every g other than f.
        floats = Floats(approximate)
        nearest = floats.nearest(exact)
        if not math.isinf(nearest):
            values.append(Decimal(nearest))
            if op in ("=", "<=", ">="):
                values += [Decimal(one_ulp_beyond(nearest, up, floats.width)) for up in (False, True)]
    return values


def compare_domain(op: str, grid: Grid, low: Any, high: Any) -> Domain:
    """The column values v with `v op x` for some x in [low, high] (exactly x when low == high)."""
    if op == "=":
        first, last = grid.ceil(low), grid.floor(high)
        if first is None or last is None:
            return Domain.none()
        values = Range.between(first, True, last, True)
        return Domain.none() if values is None else Domain(SortedRangeSet.of_ranges(values), False)
    if op == "<>":
        value = grid.exact(low) if low == high else None
        if value is None:
            return Domain.not_null()
        return Domain(SortedRangeSet.of_values(value).complement(), False)
    if op in ("<", "<="):
        value = grid.exact(high) if op == "<" else None
        if value is not None:
            return Domain(SortedRangeSet.of_ranges(Range.less_than(value)), False)
        value = grid.floor(high)
        if value is None:
            return Domain.none()
        return Domain(SortedRangeSet.of_ranges(Range.less_than_or_equal(value)), False)
    value = grid.exact(low) if op == ">" else None
    if value is not None:
        return Domain(SortedRangeSet.of_ranges(Range.greater_than(value)), False)
    value = grid.ceil(low)
    if value is None:
        return Domain.none()
    return Domain(SortedRangeSet.of_ranges(Range.greater_than_or_equal(value)), False)
