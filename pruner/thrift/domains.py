"""The engine's constraint (a Thrift `TupleDomain`) as a lakeprune `TupleDomain` over a table
schema. The engine describes values of the connector types (see `connector_types`), so each range
is first read in the engine's value space (ints, floats, strs, bools; dates as days and timestamps
as milliseconds since the epoch; an equatable "all but these" set is complemented there) and then
translated to the column, **widening** wherever the type mapping loses precision, so that a row the
engine would keep is never pruned: a millisecond bound covers every microsecond that floors to it
(`= v` becomes `[v*1000, v*1000+999]` µs), a double bound on a float column is rounded outward to
float32, and a double bound on a decimal column is moved out by one double ulp and rounded outward
to the column's scale (`to_connector_array` rounds decimals to the nearest double, so a decimal
whose double satisfies the bound lies strictly inside the next double beyond it), and a
floating-point range unbounded above, which holds NaN in the engines' ordering, allows NaN. Bounds beyond a
column's range are clamped, which is exact. A domain that cannot be translated (varchar on a binary
column, a value of another type than the column's, a NaN bound) and a domain on an unknown column
are dropped, i.e. that column is unconstrained: still correct because the engine filters the rows
again. Dropped domains are reported in `DecodedConstraint.dropped` and logged, never silent.
Malformed input (a marker block without exactly one row, an inverted range, a value set with other
than one member) raises `ThriftRequestError`. Absent `domains` is NONE, an empty map ALL."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import assert_never

from pruner.bounded import echo, shorten
from pruner.numeric import (
    MAX_DAY,
    MAX_MICROS,
    MIN_DAY,
    MIN_MICROS,
    date_from_days,
    one_ulp_beyond,
    quantize_outward,
    round_down,
    round_up,
    timestamp_from_micros,
)
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import Value
from pruner.thrift import idl
from pruner.thrift.blocks import EngineValue, block_connector_type, block_row_count, decode_values
from pruner.thrift.connector_types import connector_type
from pruner.thrift.errors import ThriftRequestError
from pruner.types import ColumnType, TableSchema, TypeKind

_log = logging.getLogger(__name__)

_MICROS_PER_MILLI = 1000


@dataclass(frozen=True)
class DroppedDomain:
    """A column whose engine domain was left out (the column is unconstrained), and why."""

    column: str
    reason: str


@dataclass(frozen=True)
class DecodedConstraint:
    """The translated constraint, a superset of the engine's, and the domains it had to drop."""

    tuple_domain: TupleDomain
    dropped: tuple[DroppedDomain, ...] = ()


class _UntranslatableError(Exception):
    """A valid domain that lakeprune cannot translate; the column is left unconstrained."""


def decode_tuple_domain(constraint: idl.TupleDomain, schema: TableSchema) -> DecodedConstraint:
    """The engine's constraint on a table of `schema`, widened where needed (see the module)."""
    if constraint.domains is None:
        return DecodedConstraint(TupleDomain.none())
    domains: dict[str, Domain] = {}
    dropped: list[DroppedDomain] = []
    for name, thrift_domain in sorted(constraint.domains.items()):
        column = str(name)
        if not schema.has(column):
            dropped.append(DroppedDomain(column, "no such column"))
            continue
        try:
            domains[column] = _decode_domain(thrift_domain, schema.column(column).type)
        except _UntranslatableError as exc:
            dropped.append(DroppedDomain(column, str(exc)))
    for item in dropped:
        _log.debug("constraint on %s dropped (column unconstrained): %s", shorten(item.column), item.reason)
    return DecodedConstraint(TupleDomain.with_domains(domains), tuple(dropped))


def values_domain(block: idl.Block, column_type: ColumnType) -> Domain:
    """The domain `column IN (the block's values)` for a block of engine values (a column of an
    index lookup's keys page), widened like a constraint; nulls and NaNs match nothing. Binary
    columns are unconstrained (their values are hex varchar). `ThriftRequestError` if the block
    does not hold the column's connector type."""
    values = decode_values(block, column_type)
    if column_type.kind is TypeKind.BINARY:
        return Domain.all()
    keys = [v for v in values if v is not None and not _is_nan(v)]
    translate = _range_translator(column_type)
    return Domain(_translate_set(SortedRangeSet.of_values(*keys), translate), False)


def _decode_domain(thrift_domain: idl.Domain, column_type: ColumnType) -> Domain:
    value_set = thrift_domain.valueSet
    if value_set is None:
        raise ThriftRequestError("a domain has no value set")
    members = [value_set.allOrNoneValueSet, value_set.equatableValueSet, value_set.rangeValueSet]
    if sum(m is not None for m in members) != 1:
        raise ThriftRequestError("a value set must have exactly one of allOrNone, equatable, range")
    null_allowed = bool(thrift_domain.nullAllowed)
    all_or_none, equatable, ranges = members
    if all_or_none is not None:
        values = SortedRangeSet.all() if all_or_none.all else SortedRangeSet.none()
        return Domain(values, null_allowed)
    translate = _range_translator(column_type)
    if equatable is not None:
        engine_set = _equatable_set(equatable, column_type)
    else:
        engine_set = SortedRangeSet.of_ranges(*(_engine_range(r, column_type) for r in ranges.ranges or ()))
    # The engines order doubles with Java's Double.compare, where NaN is above +inf, so a range
    # unbounded above also holds NaN (`NOT (x <= 5)` is true for NaN), which no lakeprune range
    # does: the domain allows NaN besides its ranges.
    nan_allowed = (
        column_type.kind.is_floating
        and not engine_set.is_all()
        and any(r.high is None for r in engine_set.ranges)
    )
    return Domain(_translate_set(engine_set, translate), null_allowed, nan_allowed)


def _translate_set(engine_set: SortedRangeSet, translate: Callable[[Range], Range | None]) -> SortedRangeSet:
    if engine_set.is_all():
        return engine_set  # also matches NaN, as the engine's "all" does
    return SortedRangeSet.of_ranges(*(t for r in engine_set.ranges if (t := translate(r)) is not None))


# Engine value space ---------------------------------------------------------------------------


def _equatable_set(equatable: idl.EquatableValueSet, column_type: ColumnType) -> SortedRangeSet:
    values = [_single_value(block, column_type) for block in equatable.values or ()]
    if any(_is_nan(v) for v in values):
        raise _UntranslatableError("NaN in an equatable value set")
    listed = SortedRangeSet.of_values(*values)
    return listed if equatable.inclusive else listed.complement()


def _engine_range(thrift_range: idl.Range, column_type: ColumnType) -> Range:
    if thrift_range.low is None or thrift_range.high is None:
        raise ThriftRequestError("a range needs a low and a high marker")
    low, low_inclusive = _marker(
        thrift_range.low, column_type, unbounded=idl.Bound.ABOVE, open_=idl.Bound.ABOVE
    )
    high, high_inclusive = _marker(
        thrift_range.high, column_type, unbounded=idl.Bound.BELOW, open_=idl.Bound.BELOW
    )
    if _is_nan(low) or _is_nan(high):
        raise _UntranslatableError("NaN range bound")
    result = Range.between(low, low_inclusive, high, high_inclusive)
    if result is None:
        raise ThriftRequestError(f"empty range: low {echo(low)} is above high {echo(high)}")
    return result


def _marker(
    marker: idl.Marker, column_type: ColumnType, unbounded: int, open_: int
) -> tuple[EngineValue | None, bool]:
    """(value, inclusive) of a low or high marker; `unbounded` is the bound an absent value must
    have, `open_` the exclusive bound on that side (ABOVE for low markers, BELOW for high ones)."""
    bound = marker.bound
    if marker.value is None:
        if bound != unbounded:
            raise ThriftRequestError(f"a marker without a value must have bound {unbounded}, got {bound}")
        return None, False
    if bound not in (idl.Bound.EXACTLY, open_):
        raise ThriftRequestError(f"a marker on this side of a range cannot have bound {bound}")
    return _single_value(marker.value, column_type), bound == idl.Bound.EXACTLY


def _single_value(block: idl.Block, column_type: ColumnType) -> EngineValue:
    kind = block_connector_type(block)
    expected = connector_type(column_type)
    if kind is not expected:
        raise _UntranslatableError(f"{kind.sql} value for a {column_type} column (sent as {expected.sql})")
    rows = block_row_count(block)
    if rows != 1:
        raise ThriftRequestError(f"a marker or equatable value must be a one-row block, got {rows} rows")
    (value,) = decode_values(block, column_type)
    if value is None:
        raise ThriftRequestError("a marker or equatable value cannot be NULL")
    return value


def _is_nan(value: object) -> bool:
    return isinstance(value, float) and math.isnan(value)


# Column translation ---------------------------------------------------------------------------


def _range_translator(column_type: ColumnType) -> Callable[[Range], Range | None]:
    """The function taking an engine range to the column range holding every column value whose
    connector value lies in it (`None` if there is none)."""
    match column_type.kind:
        case TypeKind.TINYINT | TypeKind.SMALLINT | TypeKind.INT | TypeKind.BIGINT as kind:
            limits = kind.integer_bounds
            assert limits is not None, "an integer kind has bounds"
            return lambda r: _integer_range(*_inclusive_ints(r), limits, int)
        case TypeKind.DATE:
            return lambda r: _integer_range(*_inclusive_ints(r), (MIN_DAY, MAX_DAY), date_from_days)
        case TypeKind.TIMESTAMP:
            return _timestamp_range
        case TypeKind.FLOAT:
            return _float32_range
        case TypeKind.DECIMAL:
            return lambda r: _decimal_range(r, column_type)
        case TypeKind.BINARY:
            raise _UntranslatableError(
                "binary columns are sent as hex varchar; their varchar domains are not translated"
            )
        case TypeKind.DOUBLE | TypeKind.STRING | TypeKind.BOOLEAN:
            return lambda r: r  # the engine's values are the column's
        case unknown:
            assert_never(unknown)


def _inclusive_ints(r: Range) -> tuple[int | None, int | None]:
    """Inclusive bounds of a range of ints (`None` = unbounded): exact, the values are integers."""
    low = None if r.low is None else _int(r.low) + (0 if r.low_inclusive else 1)
    high = None if r.high is None else _int(r.high) - (0 if r.high_inclusive else 1)
    return low, high


def _int(value: Value) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise TypeError(f"expected an integer engine value, got {value!r}")


def _float(value: Value) -> float:
    if isinstance(value, float):
        return value
    raise TypeError(f"expected a double engine value, got {value!r}")


def _integer_range(
    low: int | None, high: int | None, limits: tuple[int, int], to_value: Callable[[int], Value]
) -> Range | None:
    """The inclusive integer range [low, high] clamped to `limits` (ends at or beyond a limit
    become unbounded), with its ends mapped by `to_value`; `None` if empty."""
    minimum, maximum = limits
    if (low is not None and low > maximum) or (high is not None and high < minimum):
        return None
    if low is not None and high is not None and low > high:
        return None
    low = None if low is None or low <= minimum else low
    high = None if high is None or high >= maximum else high
    return Range(
        None if low is None else to_value(low),
        low is not None,
        None if high is None else to_value(high),
        high is not None,
    )


def _timestamp_range(r: Range) -> Range | None:
    """Milliseconds to every microsecond that floors to them: [lo, hi] ms -> [lo*1000, hi*1000+999]."""
    low_ms, high_ms = _inclusive_ints(r)
    low = None if low_ms is None else low_ms * _MICROS_PER_MILLI
    high = None if high_ms is None else high_ms * _MICROS_PER_MILLI + _MICROS_PER_MILLI - 1
    return _integer_range(low, high, (MIN_MICROS, MAX_MICROS), timestamp_from_micros)


def _float32_range(r: Range) -> Range | None:
    """Double bounds rounded outward to float32. An inexact bound becomes exclusive: no float32
    lies between it and the bound, so the translation is exact."""
    low, low_inclusive = r.low, r.low_inclusive
    if low is not None:
        rounded = round_down(_float(low), bits=32)
        low, low_inclusive = rounded, low_inclusive if rounded == low else False
    high, high_inclusive = r.high, r.high_inclusive
    if high is not None:
        rounded = round_up(_float(high), bits=32)
        high, high_inclusive = rounded, high_inclusive if rounded == high else False
    return Range.between(low, low_inclusive, high, high_inclusive)


def _decimal_range(r: Range, column_type: ColumnType) -> Range | None:
    """Double bounds on a decimal column: one ulp outward, then outward to the scale, inclusive."""
    scale = column_type.scale
    limit = Decimal(10) ** (column_type.precision - scale) - Decimal(1).scaleb(-scale)
    low = _one_ulp_beyond(r.low, up=False)
    high = _one_ulp_beyond(r.high, up=True)
    if (low is not None and low > limit) or (high is not None and high < -limit):
        return None
    low = None if low is None or low <= -limit else quantize_outward(low, scale, up=False)
    high = None if high is None or high >= limit else quantize_outward(high, scale, up=True)
    return Range(low, low is not None, high, high is not None)


def _one_ulp_beyond(bound: Value | None, up: bool) -> Decimal | None:
    """The exact value of the double one ulp beyond `bound` (above it if `up`); `None`
    (unbounded) for no bound or an infinite one."""
    if bound is None:
        return None
    widened = one_ulp_beyond(_float(bound), up)
    return None if math.isinf(widened) else Decimal(widened)
