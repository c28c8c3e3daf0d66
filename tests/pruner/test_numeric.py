"""pruner.numeric: the laws of outward rounding, once, for every input kind (decimals, doubles,
ints, infinities) and both widths, with extra weight on the hard cases (ties between two float32s,
the edges of float32's range, subnormals); and the epoch constants and conversions."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pruner.numeric import (
    EPOCH,
    EPOCH_DATE,
    MAX_DAY,
    MAX_MICROS,
    MIN_DAY,
    MIN_MICROS,
    Bits,
    Number,
    date_from_days,
    days_since_epoch,
    micros_since_epoch,
    nearest_float32,
    one_ulp_beyond,
    quantize_outward,
    round_down,
    round_outward,
    round_up,
    timestamp_from_micros,
)

F32_MAX = float(np.finfo(np.float32).max)
F32_TINY = float(np.finfo(np.float32).smallest_subnormal)
WIDTHS = st.sampled_from([32, 64])


def exact(x: Number) -> Decimal:
    return x if isinstance(x, Decimal) else Decimal(x)


def representable(value: float, bits: Bits) -> bool:
    return bits == 64 or math.isinf(value) or nearest_float32(value) == value


@st.composite
def float32_ties(draw: st.DrawFn) -> Decimal:
    """The exact midpoint between two adjacent float32s: where double rounding could go wrong."""
    low = draw(st.floats(width=32, allow_nan=False, allow_infinity=False))
    high = one_ulp_beyond(low, up=True, bits=32)
    if math.isinf(high):
        high = F32_MAX + (F32_MAX - one_ulp_beyond(F32_MAX, up=False, bits=32))  # the next "float32"
    with localcontext() as context:
        context.prec = 200
        return (Decimal(low) + Decimal(high)) / 2


numbers = st.one_of(
    st.decimals(allow_nan=False, allow_infinity=False),
    st.decimals(min_value=Decimal("-1e40"), max_value=Decimal("1e40"), allow_nan=False, places=60),
    st.floats(allow_nan=False),
    st.floats(width=32, allow_nan=False),
    st.integers(),
    st.integers(-(2**64), 2**64),
    float32_ties(),
    st.sampled_from([F32_MAX, -F32_MAX, F32_TINY, 0.0, -0.0, 5e-324, 2**128, -(2**128), 2**128 - 2**103]),
)


@settings(max_examples=1000)
@given(x=numbers, bits=WIDTHS)
@example(x=Decimal("0.1"), bits=32)
@example(x=Decimal(F32_MAX) + 1, bits=32)
@example(x=Decimal("1e400"), bits=64)
@example(x=-(10**400), bits=64)
def test_rounding_brackets_x_with_representable_neighbours(x: Number, bits: Bits) -> None:
    low, high = round_down(x, bits), round_up(x, bits)
    assert Decimal(low) <= exact(x) <= Decimal(high)
    assert representable(low, bits) and representable(high, bits)
    # Tight: nothing representable lies strictly between x and its rounding.
    if Decimal(low) != exact(x):
        assert Decimal(one_ulp_beyond(low, up=True, bits=bits)) > exact(x)
    if Decimal(high) != exact(x):
        assert Decimal(one_ulp_beyond(high, up=False, bits=bits)) < exact(x)
    assert round_outward(x, up=False, bits=bits) == low and round_outward(x, up=True, bits=bits) == high


@settings(max_examples=500)
@given(x=numbers, y=numbers, bits=WIDTHS)
def test_rounding_is_monotonic(x: Number, y: Number, bits: Bits) -> None:
    if exact(x) > exact(y):
        x, y = y, x
    assert round_down(x, bits) <= round_down(y, bits)
    assert round_up(x, bits) <= round_up(y, bits)


@given(x=numbers, bits=WIDTHS)
def test_rounding_is_idempotent_and_exact_on_representable_values(x: Number, bits: Bits) -> None:
    for rounded in (round_down(x, bits), round_up(x, bits)):
        assert round_down(rounded, bits) == rounded == round_up(rounded, bits)


@given(value=st.floats(width=32, allow_nan=False))
def test_a_float32_value_rounds_to_itself_in_both_widths(value: float) -> None:
    assert round_down(value, 32) == value == round_up(value, 32)
    assert round_down(value) == value == round_up(value)


def test_nan_has_no_outward_rounding() -> None:
    with pytest.raises(ValueError, match="NaN"):
        round_down(math.nan)
    with pytest.raises(ValueError, match="NaN"):
        round_up(Decimal("NaN"), 32)


@given(value=st.floats(allow_nan=False, allow_infinity=False), up=st.booleans(), bits=WIDTHS)
def test_one_ulp_beyond_is_the_adjacent_representable_value(value: float, up: bool, bits: Bits) -> None:
    if bits == 32:
        value = nearest_float32(value)
        if math.isinf(value):
            return
    beyond = one_ulp_beyond(value, up, bits)
    assert representable(beyond, bits)
    assert (beyond > value) if up else (beyond < value)
    if not math.isinf(beyond):
        assert one_ulp_beyond(beyond, not up, bits) == value


def test_one_ulp_beyond_the_largest_value_is_infinite() -> None:
    assert one_ulp_beyond(F32_MAX, up=True, bits=32) == math.inf
    assert one_ulp_beyond(-F32_MAX, up=False, bits=32) == -math.inf
    assert one_ulp_beyond(1.7976931348623157e308, up=True) == math.inf
    assert one_ulp_beyond(math.inf, up=True) == math.inf


@given(
    x=st.decimals(min_value=-(10**40), max_value=10**40, allow_nan=False, allow_infinity=False),
    scale=st.integers(0, 38),
    up=st.booleans(),
)
@example(x=Decimal("5E-29"), scale=0, up=True)  # 1 - x rounds to 1 at Decimal's default precision
def test_quantize_outward(x: Decimal, scale: int, up: bool) -> None:
    step = Decimal(1).scaleb(-scale)
    result = quantize_outward(x, scale, up)
    assert (result >= x) if up else (result <= x)
    assert abs(Fraction(result) - Fraction(x)) < step  # exactly: Decimal would round the difference
    assert result.as_tuple().exponent == -scale
    assert not (result.is_zero() and result.is_signed())
    assert quantize_outward(result, scale, up) == result == quantize_outward(result, scale, not up)


@given(x=st.decimals(-1000, 1000, allow_nan=False, places=6), y=st.decimals(-1000, 1000, places=6))
def test_quantize_outward_is_monotonic(x: Decimal, y: Decimal) -> None:
    if x > y:
        x, y = y, x
    for up in (False, True):
        assert quantize_outward(x, 2, up) <= quantize_outward(y, 2, up)


def test_epoch_constants() -> None:
    assert datetime(1970, 1, 1, tzinfo=UTC) == EPOCH and date(1970, 1, 1) == EPOCH_DATE
    assert (MIN_DAY, MAX_DAY) == (-719_162, 2_932_896)
    assert (MIN_MICROS, MAX_MICROS) == (-62_135_596_800_000_000, 253_402_300_799_999_999)
    assert date_from_days(MIN_DAY) == date.min and date_from_days(MAX_DAY) == date.max
    assert timestamp_from_micros(MIN_MICROS) == datetime.min.replace(tzinfo=UTC)
    assert timestamp_from_micros(MAX_MICROS) == datetime.max.replace(tzinfo=UTC)
    for days in (MIN_DAY - 1, MAX_DAY + 1, 10**12):
        with pytest.raises(OverflowError):
            date_from_days(days)
    for micros in (MIN_MICROS - 1, MAX_MICROS + 1, 2**70):
        with pytest.raises(OverflowError):
            timestamp_from_micros(micros)


@given(day=st.dates())
def test_days_round_trip(day: date) -> None:
    assert date_from_days(days_since_epoch(day)) == day


@given(moment=st.datetimes(timezones=st.just(UTC)))
def test_micros_round_trip_and_naive_is_utc(moment: datetime) -> None:
    micros = micros_since_epoch(moment)
    assert timestamp_from_micros(micros) == moment
    assert micros_since_epoch(moment.replace(tzinfo=None)) == micros
    assert micros == (moment - EPOCH) // timedelta(microseconds=1)
