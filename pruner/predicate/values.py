"""Literal values of the predicate algebra. `normalize` turns a Python literal into the one
representation that lakeprune uses for a column type (an `int` for the integer types, a `float` for
float and double, a `Decimal` quantized to the column's scale, `str`, `bytes`, `bool`, `date`, and a
UTC-aware `datetime` with microsecond precision for timestamps), or raises `InvalidInputError` when
the literal cannot be represented exactly. Conversions never round: a literal that would lose
digits is an error, because a rounded bound could make a pruning predicate narrower than the query
and prune a file that holds a matching row. After `normalize`, values of one column type compare
with the ordinary Python operators; the algebra modules rely on that and nothing else."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import UTC, date, datetime
from decimal import Context, Decimal, InvalidOperation, localcontext
from typing import TypeAlias, assert_never

from pruner.bounded import echo
from pruner.errors import InvalidInputError
from pruner.types import ColumnType, TypeKind

Value: TypeAlias = bool | int | float | Decimal | str | bytes | date | datetime

# Wide enough that quantizing a decimal(38, s) value never rounds or traps.
_DECIMAL_CONTEXT = Context(prec=100)
_FRACTION_RE = re.compile(r"[T ][0-9]{2}:[0-9]{2}:[0-9]{2}[.,]([0-9]+)")
_SHOWN_CHARS = 60


def normalize(value: object, column_type: ColumnType) -> Value:
    """The value of `value` as a literal of `column_type`; `InvalidInputError` if impossible."""
    match column_type.kind:
        case TypeKind.TINYINT | TypeKind.SMALLINT | TypeKind.INT | TypeKind.BIGINT:
            return _integer(value, column_type)
        case TypeKind.FLOAT | TypeKind.DOUBLE:
            return _floating(value, column_type)
        case TypeKind.DECIMAL:
            return _decimal(value, column_type)
        case TypeKind.STRING:
            if isinstance(value, str):
                return value
            raise _error(value, column_type, "expected a str")
        case TypeKind.BINARY:
            if isinstance(value, bytes | bytearray):
                return bytes(value)
            if isinstance(value, str):
                return value.encode("utf-8")
            raise _error(value, column_type, "expected bytes or a str")
        case TypeKind.BOOLEAN:
            if isinstance(value, bool):
                return value
            raise _error(value, column_type, "expected a bool")
        case TypeKind.DATE:
            return _date(value, column_type)
        case TypeKind.TIMESTAMP:
            return _timestamp(value, column_type)
        case unknown:
            assert_never(unknown)


def normalize_all(values: Sequence[object], column_type: ColumnType) -> list[Value]:
    """`normalize` of each of `values` (an IN list): integers in range and strings are checked in
    bulk, any other list value by value (which raises for the first that does not fit)."""
    bounds = column_type.kind.integer_bounds
    if bounds is not None:
        integers = [v for v in values if type(v) is int]
        low, high = bounds
        if integers and len(integers) == len(values) and low <= min(integers) and max(integers) <= high:
            checked: list[Value] = list(integers)
            return checked
    elif column_type.kind is TypeKind.STRING:
        strings = [v for v in values if type(v) is str]
        if len(strings) == len(values):
            checked = list(strings)
            return checked
    return [normalize(v, column_type) for v in values]


def is_nan(value: object) -> bool:
    """Whether `value` is a floating-point (or decimal) NaN."""
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, Decimal):
        return value.is_nan()
    return False


def format_value(value: Value) -> str:
    """A short, readable rendering of a value for explain output (strings quoted SQL-style,
    binary as `X'hex'`, timestamps as ISO-8601 with a `Z` suffix when in UTC)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bytes):
        return f"X'{value.hex()}'"
    if isinstance(value, datetime):
        if value.tzinfo is not None and value.utcoffset() == UTC.utcoffset(None):
            return value.replace(tzinfo=None).isoformat() + "Z"
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    return str(value)


def _integer(value: object, column_type: ColumnType) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _error(value, column_type, "expected an int")
    bounds = column_type.kind.integer_bounds
    assert bounds is not None, "an integer kind has bounds"
    low, high = bounds
    if not low <= value <= high:
        raise _error(value, column_type, f"out of range {low}..{high}")
    return value


def _floating(value: object, column_type: ColumnType) -> float:
    if isinstance(value, float):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise _error(value, column_type, "expected a float or an int")
    try:
        result = float(value)
    except OverflowError:
        raise _error(value, column_type, "too large for a float") from None
    if result != value:
        raise _error(value, column_type, "not exactly representable as a float")
    return result


def _decimal(value: object, column_type: ColumnType) -> Decimal:
    if isinstance(value, Decimal):
        number = value
    elif isinstance(value, bool):
        raise _error(value, column_type, "expected a Decimal, an int, a float or a numeric str")
    elif isinstance(value, int):
        number = Decimal(value)
    elif isinstance(value, float):
        # The shortest repr round-trips, so 0.1 becomes Decimal('0.1'), not its binary expansion.
        number = Decimal(repr(value))
    elif isinstance(value, str):
        try:
            number = Decimal(value)
        except InvalidOperation:
            raise _error(value, column_type, "not a decimal number") from None
    else:
        raise _error(value, column_type, "expected a Decimal, an int, a float or a numeric str")
    if not number.is_finite():
        raise _error(value, column_type, "not a finite number")
    with localcontext(_DECIMAL_CONTEXT):
        # Range first: quantizing a huge value would overflow the context's precision.
        if abs(number) >= Decimal(10) ** (column_type.precision - column_type.scale):
            raise _error(value, column_type, f"needs more than {column_type.precision} digits")
        quantized = number.quantize(Decimal(1).scaleb(-column_type.scale))
        if quantized != number:
            raise _error(value, column_type, f"has more than {column_type.scale} fractional digits")
    return quantized


def _date(value: object, column_type: ColumnType) -> date:
    if isinstance(value, datetime):
        raise _error(value, column_type, "expected a date, not a datetime")
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            raise _error(value, column_type, "not an ISO-8601 date") from None
    raise _error(value, column_type, "expected a date or an ISO-8601 str")


def _timestamp(value: object, column_type: ColumnType) -> datetime:
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip()
        fraction = _FRACTION_RE.search(text)
        if fraction and fraction.group(1)[6:].strip("0"):
            raise _error(value, column_type, "has more than microsecond precision")
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise _error(value, column_type, "not an ISO-8601 timestamp") from None
    else:
        raise _error(value, column_type, "expected a datetime, a date or an ISO-8601 str")
    if moment.tzinfo is None or moment.utcoffset() is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise _error(value, column_type, "out of range in UTC") from None


def _error(value: object, column_type: ColumnType, reason: str) -> InvalidInputError:
    return InvalidInputError(f"cannot use {echo(value, _SHOWN_CHARS)} as a {column_type} value: {reason}")
