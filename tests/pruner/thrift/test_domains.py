"""pruner.thrift.domains: NONE / ALL, every value-set kind and nullAllowed; and the invariant that
matters for pruning, property-tested per lossy mapping: whenever the engine's predicate holds for
the value it sees (milliseconds, float32 as double, decimal as its nearest double), the translated
domain contains the column value. Untranslatable domains are dropped and reported; malformed ones
are refused."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.thrift import idl
from pruner.thrift.connector_types import to_connector_array
from pruner.thrift.domains import DroppedDomain, decode_tuple_domain, values_domain
from pruner.thrift.errors import ThriftRequestError
from pruner.types import ColumnType, TableSchema
from tests.pruner.thrift.support import (
    all_or_none_domain,
    block,
    equatable_domain,
    ranges_domain,
    thrift_range,
)

PROPERTY = settings(max_examples=300, deadline=None)
B = idl.Bound
SCHEMA = TableSchema.parse(
    "id bigint, small tinyint, f float, d double, amount decimal(10,2), big decimal(38,0), "
    "name string, raw binary, flag boolean, day date, ts timestamp"
)
I64, F64, STR, TS, DAY = pa.int64(), pa.float64(), pa.string(), pa.timestamp("ms"), pa.date32()
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def decode(**domains: idl.Domain) -> TupleDomain:
    return decode_tuple_domain(idl.TupleDomain(domains=domains), SCHEMA).tuple_domain


def between(low: Any, low_bound: int, high: Any, high_bound: int, arrow_type: pa.DataType) -> idl.Domain:
    return ranges_domain(thrift_range(low, low_bound, high, high_bound, arrow_type))


def engine_holds(value: Any, low: Any, low_bound: int, high: Any, high_bound: int) -> bool:
    """The engine's reading of one range on the value it sees."""
    above_low = low is None or (value >= low if low_bound == B.EXACTLY else value > low)
    below_high = high is None or (value <= high if high_bound == B.EXACTLY else value < high)
    return above_low and below_high


def ts(micros: int) -> datetime:
    return EPOCH + timedelta(microseconds=micros)


# Shape ------------------------------------------------------------------------------------------


def test_absent_domains_is_none_and_empty_is_all() -> None:
    assert decode_tuple_domain(idl.TupleDomain(domains=None), SCHEMA).tuple_domain.is_none()
    assert decode_tuple_domain(idl.TupleDomain(domains={}), SCHEMA).tuple_domain.is_all()


@pytest.mark.parametrize(
    ("all_", "null_allowed", "expected"),
    [
        (True, True, Domain.all()),
        (True, False, Domain.not_null()),
        (False, True, Domain.only_null()),
        (False, False, Domain.none()),
    ],
)
def test_all_or_none(all_: bool, null_allowed: bool, expected: Domain) -> None:
    # Type-independent, so it translates even on a binary column.
    assert decode(raw=all_or_none_domain(all_, null_allowed)).domain("raw") == expected


def test_equatable_sets() -> None:
    assert decode(id=equatable_domain([3, 1], I64)).domain("id") == Domain.multiple_values([1, 3])
    # Exclusive integer bounds become inclusive ones: the same integers.
    excluded = decode(id=equatable_domain([1], I64, inclusive=False, null_allowed=True)).domain("id")
    assert excluded == Domain(
        SortedRangeSet.of_ranges(Range(None, False, 0, True), Range(2, True, None, False)), True
    )
    assert decode(id=equatable_domain([], I64, inclusive=False)).domain("id") == Domain.not_null()


def test_ranges_on_exact_types_pass_through() -> None:
    domain = ranges_domain(
        thrift_range(None, B.ABOVE, 0, B.BELOW, I64),
        thrift_range(5, B.EXACTLY, 5, B.EXACTLY, I64),
        thrift_range(10, B.ABOVE, None, B.BELOW, I64),
        null_allowed=True,
    )
    expected = SortedRangeSet.of_ranges(
        Range.less_than_or_equal(-1), Range.equal(5), Range.greater_than_or_equal(11)
    )
    assert decode(id=domain).domain("id") == Domain(expected, True)
    assert decode(name=between("a", B.EXACTLY, "b", B.BELOW, STR)).domain("name") == Domain(
        SortedRangeSet.of_ranges(Range("a", True, "b", False)), False
    )
    assert decode(d=between(-math.inf, B.ABOVE, math.inf, B.BELOW, F64)).domain("d") == Domain(
        SortedRangeSet.of_ranges(Range(-math.inf, False, math.inf, False)), False
    )
    flag = decode(flag=equatable_domain([True], pa.bool_())).domain("flag")
    assert flag == Domain.single_value(True)


def test_is_null_and_is_not_null() -> None:
    assert decode(id=ranges_domain(null_allowed=True)).domain("id") == Domain.only_null()
    not_null = ranges_domain(thrift_range(None, B.ABOVE, None, B.BELOW, I64))
    assert decode(id=not_null).domain("id") == Domain.not_null()


def test_integer_bounds_are_clamped_to_the_column() -> None:
    assert decode(small=between(200, B.EXACTLY, None, B.BELOW, pa.int32())).is_none()
    assert (
        decode(small=between(None, B.ABOVE, 1000, B.EXACTLY, pa.int32())).domain("small") == Domain.not_null()
    )
    clamped = decode(small=between(-1000, B.ABOVE, 5, B.BELOW, pa.int32())).domain("small")
    assert clamped == Domain(SortedRangeSet.of_ranges(Range(None, False, 4, True)), False)


def test_dates_beyond_python_dates_are_clamped() -> None:
    assert decode(day=between(3_000_000, B.EXACTLY, None, B.BELOW, DAY)).is_none()
    early = decode(day=between(-800_000, B.ABOVE, 0, B.EXACTLY, DAY)).domain("day")
    assert early == Domain(SortedRangeSet.of_ranges(Range(None, False, date(1970, 1, 1), True)), False)


def test_timestamp_equality_covers_the_whole_millisecond() -> None:
    domain = decode(ts=equatable_domain([-1], TS)).domain("ts")
    assert domain == Domain(SortedRangeSet.of_ranges(Range(ts(-1000), True, ts(-1), True)), False)


def test_untranslatable_domains_are_dropped_and_reported() -> None:
    constraint = idl.TupleDomain(
        domains={
            "raw": equatable_domain(["00ff"], STR),
            "nope": equatable_domain([1], I64),
            "id": equatable_domain(["1"], STR),  # a varchar value for a bigint column
            "d": between(math.nan, B.EXACTLY, None, B.BELOW, F64),
            "flag": equatable_domain([True], pa.bool_()),
        }
    )
    decoded = decode_tuple_domain(constraint, SCHEMA)
    assert decoded.tuple_domain == TupleDomain.with_domains({"flag": Domain.single_value(True)})
    assert [d.column for d in decoded.dropped] == ["d", "id", "nope", "raw"]
    assert all(isinstance(d, DroppedDomain) and d.reason for d in decoded.dropped)


def test_a_none_domain_on_a_known_column_makes_everything_none() -> None:
    assert decode(id=ranges_domain(), name=equatable_domain(["x"], STR)).is_none()


# Malformed --------------------------------------------------------------------------------------


def two_row_marker() -> idl.Domain:
    low = idl.Marker(value=block([1, 2], I64), bound=B.EXACTLY)
    high = idl.Marker(value=None, bound=B.BELOW)
    return ranges_domain(idl.Range(low=low, high=high))


@pytest.mark.parametrize(
    ("domain", "message"),
    [
        (two_row_marker, "one-row block, got 2 rows"),
        (lambda: between(5, B.EXACTLY, 1, B.EXACTLY, I64), "empty range"),
        (lambda: between(5, B.ABOVE, 5, B.EXACTLY, I64), "empty range"),
        (lambda: between(5, B.BELOW, None, B.BELOW, I64), "cannot have bound 1"),
        (lambda: between(None, B.EXACTLY, None, B.BELOW, I64), "without a value must have bound 3"),
        (lambda: between(None, B.ABOVE, 5, B.ABOVE, I64), "cannot have bound 3"),
        (lambda: equatable_domain([None], I64), "cannot be NULL"),
        (lambda: idl.Domain(valueSet=idl.ValueSet(), nullAllowed=False), "exactly one of"),
        (lambda: idl.Domain(valueSet=None, nullAllowed=False), "no value set"),
        (lambda: ranges_domain(idl.Range(low=None, high=None)), "low and a high marker"),
    ],
)
def test_malformed_domains_are_refused(domain: Any, message: str) -> None:
    with pytest.raises(ThriftRequestError, match=message):
        decode(id=domain())


# The pruning invariant, per lossy mapping ---------------------------------------------------------

BOUNDS = st.sampled_from([B.EXACTLY, "open", None])


def _marker_args(value: Any, kind: Any, open_bound: int) -> tuple[Any, int]:
    if kind is None:
        return None, (B.ABOVE if open_bound == B.ABOVE else B.BELOW)
    return value, (B.EXACTLY if kind == B.EXACTLY else open_bound)


@PROPERTY
@given(
    st.integers(-(10**15), 10**15),
    st.integers(-(10**12), 10**12),
    st.integers(-(10**12), 10**12),
    BOUNDS,
    BOUNDS,
)
def test_timestamp_domains_hold_every_microsecond_the_engine_keeps(
    micros: int, a: int, b: int, low_kind: Any, high_kind: Any
) -> None:
    millis = micros // 1000  # what to_connector_array sends
    # Bounds often at or next to the row's own millisecond, where flooring matters.
    low_ms, high_ms = sorted((a % 3 - 1 + millis if a % 2 else a, b % 3 - 1 + millis if b % 2 else b))
    low, low_bound = _marker_args(low_ms, low_kind, B.ABOVE)
    high, high_bound = _marker_args(high_ms, high_kind, B.BELOW)
    assume(not (low is not None and high is not None and low == high and (low_bound, high_bound) != (2, 2)))
    domain = decode(ts=between(low, low_bound, high, high_bound, TS)).domain("ts")
    # Exact both ways: flooring to milliseconds is a function of the microsecond value.
    assert domain.contains_value(ts(micros)) == engine_holds(millis, low, low_bound, high, high_bound)


@PROPERTY
@given(
    st.floats(width=32),
    st.floats(allow_nan=False),
    st.floats(allow_nan=False),
    BOUNDS,
    BOUNDS,
    st.integers(0, 3),
)
def test_float_domains_hold_every_float_the_engine_keeps(
    value: float, a: float, b: float, low_kind: Any, high_kind: Any, near: int
) -> None:
    if near:  # bounds next to the value, in double steps
        a = math.nextafter(value, math.inf) if near == 1 else math.nextafter(value, -math.inf)
        b = value if near == 3 else b
    assume(not math.isnan(a) and not math.isnan(b))
    low_value, high_value = sorted((a, b))
    low, low_bound = _marker_args(low_value, low_kind, B.ABOVE)
    high, high_bound = _marker_args(high_value, high_kind, B.BELOW)
    assume(not (low is not None and high is not None and low == high and (low_bound, high_bound) != (2, 2)))
    domain = decode(f=between(low, low_bound, high, high_bound, F64)).domain("f")
    sent = to_connector_array(pa.array([value], pa.float32()), ColumnType("float")).to_pylist()[0]
    kept = not math.isnan(sent) and engine_holds(sent, low, low_bound, high, high_bound)
    if kept:
        assert domain.contains_value(float(np.float32(value)))


@PROPERTY
@given(
    st.decimals(
        min_value=Decimal("-99999999.99"), max_value=Decimal("99999999.99"), places=2, allow_nan=False
    ),
    st.floats(allow_nan=False),
    st.floats(allow_nan=False),
    BOUNDS,
    BOUNDS,
    st.integers(0, 3),
)
def test_decimal_domains_hold_every_decimal_the_engine_keeps(
    value: Decimal, a: float, b: float, low_kind: Any, high_kind: Any, near: int
) -> None:
    sent = to_connector_array(
        pa.array([value], pa.decimal128(10, 2)), ColumnType("decimal", 10, 2)
    ).to_pylist()[0]
    if near:  # bounds at or one ulp next to the double the engine sees
        a = sent if near == 1 else math.nextafter(sent, math.inf if near == 2 else -math.inf)
    low_value, high_value = sorted((a, b))
    low, low_bound = _marker_args(low_value, low_kind, B.ABOVE)
    high, high_bound = _marker_args(high_value, high_kind, B.BELOW)
    assume(not (low is not None and high is not None and low == high and (low_bound, high_bound) != (2, 2)))
    domain = decode(amount=between(low, low_bound, high, high_bound, F64)).domain("amount")
    if engine_holds(sent, low, low_bound, high, high_bound):
        assert domain.contains_value(value)


@PROPERTY
@given(st.integers(-(10**37), 10**37), st.integers(-3, 3))
def test_decimal_equality_with_many_digits_keeps_the_value(value: int, steps: int) -> None:
    """decimal(38,0) values share doubles: `= double(v)` must keep every one of them."""
    sent = float(Decimal(value))
    domain = decode(big=equatable_domain([sent], F64)).domain("big")
    assert domain.contains_value(Decimal(value))
    neighbour = Decimal(value + steps)
    if float(neighbour) == sent:
        assert domain.contains_value(neighbour)


def test_decimal_bounds_beyond_the_column_are_clamped() -> None:
    assert decode(amount=between(1e300, B.EXACTLY, None, B.BELOW, F64)).is_none()
    assert decode(amount=between(math.inf, B.EXACTLY, None, B.BELOW, F64)).is_none()
    assert decode(amount=between(-1e300, B.ABOVE, None, B.BELOW, F64)).domain("amount") == Domain.not_null()


# Index keys -------------------------------------------------------------------------------------


def test_values_domain_widens_like_a_constraint() -> None:
    assert values_domain(block([1, None, 3], I64), ColumnType("bigint")) == Domain.multiple_values([1, 3])
    stamps = values_domain(block([0], TS), ColumnType("timestamp"))
    assert stamps == Domain(SortedRangeSet.of_ranges(Range(ts(0), True, ts(999), True)), False)
    assert values_domain(block(["00"], STR), ColumnType("binary")) == Domain.all()
    assert values_domain(block([math.nan, 1.5], F64), ColumnType("double")) == Domain.single_value(1.5)
    with pytest.raises(ThriftRequestError):
        values_domain(block(["x"], STR), ColumnType("bigint"))


@pytest.mark.parametrize("column", ["d", "f"])
def test_floating_ranges_unbounded_above_allow_nan_because_the_engine_orders_nan_last(column: str) -> None:
    # NOT (x <= 5) reaches the connector as (5, +unbounded), which holds NaN for Trino and Presto.
    nan_row = {column: math.nan}
    above = decode(**{column: between(5.0, B.ABOVE, None, B.BELOW, F64)})
    assert above.matches(nan_row) and above.matches({column: 6.0}) and not above.matches({column: 4.0})
    other = decode(**{column: equatable_domain([5.0], F64, inclusive=False)})
    assert other.matches(nan_row) and other.matches({column: 4.0}) and not other.matches({column: 5.0})
    bounded = decode(**{column: between(5.0, B.ABOVE, math.inf, B.EXACTLY, F64)})
    assert not bounded.is_all() and not bounded.matches(nan_row)
