"""Where values change representation: outward rounding, and the epoch. Pruning may only ever
widen, so a conversion that cannot be exact rounds *outward*, away from the values it must keep:
`round_down(x)` is the greatest double (or float32, `bits=32`) that is <= x and `round_up(x)` the
least that is >= x (for a decimal, an int or a double x, compared exactly); `one_ulp_beyond` steps
one unit in the last place further out; `quantize_outward` snaps a decimal to a scale. Their laws
(round_down(x) <= x <= round_up(x), the results are representable, monotonic, idempotent on
representable values, and nothing representable lies between x and its rounding) are
property-tested once, in `tests/pruner/test_numeric.py`, so that the sites using them (stats,
the SQL and Thrift translations, stats evaluation) need not re-derive them. Dates and timestamps
travel as days and microseconds since the Unix epoch: `EPOCH`, `EPOCH_DATE` and the range that
Python, Spark and Trino share (0001-01-01 .. 9999-12-31) are defined here, once."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal, localcontext
from typing import Literal

import numpy as np

Bits = Literal[32, 64]
"""The width of a binary floating-point format: 64 for double, 32 for float32 (real)."""

Number = Decimal | float | int

# Wide enough that quantizing any decimal(38, s) value (or a bound clamped to one) is exact.
_WIDE = Context(prec=200)


# Floating point -------------------------------------------------------------------------------


def nearest_float32(value: float) -> float:
    """The float32 nearest to a double (ties to even), ±inf beyond float32's range."""
    with np.errstate(all="ignore"):
        return float(np.float32(value))


def one_ulp_beyond(value: float, up: bool, bits: Bits = 64) -> float:
    """The next representable value above (`up`) or below `value` (a double, or for `bits=32` a
    float32): one unit in the last place further out. ±inf stays where it is going."""
    target = math.inf if up else -math.inf
    if bits == 64:
        return math.nextafter(value, target)
    with np.errstate(all="ignore"):
        return float(np.nextafter(np.float32(value), np.float32(target)))


def round_outward(x: Number, up: bool, bits: Bits = 64) -> float:
    """`round_up(x, bits)` if `up`, else `round_down(x, bits)`."""
    exact = x if isinstance(x, Decimal) else Decimal(x)
    if exact.is_nan():
        raise ValueError("NaN has no outward rounding")
    # float(Decimal) is correctly rounded; a second rounding to float32 still lands on one of the
    # two float32s around x (both are doubles, and rounding is monotonic), so one step suffices.
    nearest = float(exact)
    if bits == 32:
        nearest = nearest_float32(nearest)
    wrong_side = Decimal(nearest) < exact if up else Decimal(nearest) > exact
    return one_ulp_beyond(nearest, up, bits) if wrong_side else nearest


def round_down(x: Number, bits: Bits = 64) -> float:
    """The greatest double (float32 for `bits=32`) <= x; -inf if no finite one is."""
    return round_outward(x, up=False, bits=bits)


def round_up(x: Number, bits: Bits = 64) -> float:
    """The least double (float32 for `bits=32`) >= x; +inf if no finite one is."""
    return round_outward(x, up=True, bits=bits)


# Decimals -------------------------------------------------------------------------------------


def quantize_outward(x: Decimal, scale: int, up: bool) -> Decimal:
    """The least multiple of 10**-scale >= x (`up`) or the greatest <= x, without a negative zero.
    `x` must be finite and below 10**150 in magnitude (callers clamp to the column's range)."""
    with localcontext(_WIDE):
        result = x.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_CEILING if up else ROUND_FLOOR)
    return result.copy_abs() if result == 0 else result


# The epoch ------------------------------------------------------------------------------------

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
EPOCH_DATE = date(1970, 1, 1)
_MICROSECOND = timedelta(microseconds=1)
MIN_DAY = (date.min - EPOCH_DATE).days  # 0001-01-01
MAX_DAY = (date.max - EPOCH_DATE).days  # 9999-12-31
MIN_MICROS = (datetime.min.replace(tzinfo=UTC) - EPOCH) // _MICROSECOND  # 0001-01-01T00:00:00Z
MAX_MICROS = (datetime.max.replace(tzinfo=UTC) - EPOCH) // _MICROSECOND  # 9999-12-31T23:59:59.999999Z
MICROS_PER_SECOND = 1_000_000


def days_since_epoch(value: date) -> int:
    return (value - EPOCH_DATE).days


def date_from_days(days: int) -> date:
    """The date `days` after 1970-01-01; `OverflowError` outside MIN_DAY..MAX_DAY."""
    return EPOCH_DATE + timedelta(days=days)


def micros_since_epoch(value: datetime) -> int:
    """Microseconds since 1970-01-01T00:00:00Z; a naive datetime is read as UTC."""
    moment = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return (moment - EPOCH) // _MICROSECOND


def timestamp_from_micros(micros: int) -> datetime:
    """The UTC instant `micros` after the epoch; `OverflowError` outside MIN_MICROS..MAX_MICROS."""
    return EPOCH + timedelta(microseconds=micros)
