"""pruner.predicate.values: literal normalisation per column type, NaN detection, formatting."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.errors import InvalidInputError
from pruner.predicate.values import Value, format_value, is_nan, normalize
from pruner.types import ColumnType, parse_type

UTC_MIDNIGHT = datetime(2026, 1, 1, tzinfo=UTC)


def t(name: str) -> ColumnType:
    return parse_type(name)


@pytest.mark.parametrize(
    ("type_name", "literal", "expected"),
    [
        ("tinyint", -128, -128),
        ("tinyint", 127, 127),
        ("smallint", -(2**15), -(2**15)),
        ("smallint", 2**15 - 1, 2**15 - 1),
        ("int", -(2**31), -(2**31)),
        ("int", 2**31 - 1, 2**31 - 1),
        ("bigint", -(2**63), -(2**63)),
        ("bigint", 2**63 - 1, 2**63 - 1),
        ("float", 1, 1.0),
        ("float", 1.5, 1.5),
        ("float", math.inf, math.inf),
        ("double", -3, -3.0),
        ("double", 2**53, float(2**53)),
        ("double", -math.inf, -math.inf),
        ("decimal(10,2)", 3, Decimal("3.00")),
        ("decimal(10,2)", Decimal("1.5"), Decimal("1.50")),
        ("decimal(10,2)", "-1.25", Decimal("-1.25")),
        ("decimal(10,2)", 0.1, Decimal("0.10")),
        ("decimal(10,2)", "1e2", Decimal("100.00")),
        ("decimal(10,2)", Decimal("1.2300"), Decimal("1.23")),
        ("decimal(5,0)", 99999, Decimal(99999)),
        ("decimal(3,3)", "0.999", Decimal("0.999")),
        ("decimal(38,0)", 10**38 - 1, Decimal(10**38 - 1)),
        ("decimal(38,38)", "0." + "9" * 38, Decimal("0." + "9" * 38)),
        ("string", "", ""),
        ("string", "héllo", "héllo"),
        ("binary", b"\x00\xff", b"\x00\xff"),
        ("binary", bytearray(b"ab"), b"ab"),
        ("binary", "é", "é".encode()),
        ("boolean", True, True),
        ("boolean", False, False),
        ("date", date(2026, 2, 28), date(2026, 2, 28)),
        ("date", "2026-02-28", date(2026, 2, 28)),
        ("timestamp", datetime(2026, 1, 1), UTC_MIDNIGHT),
        ("timestamp", datetime(2026, 1, 1, 1, tzinfo=timezone(timedelta(hours=1))), UTC_MIDNIGHT),
        ("timestamp", date(2026, 1, 1), UTC_MIDNIGHT),
        ("timestamp", "2026-01-01", UTC_MIDNIGHT),
        ("timestamp", "2026-01-01T00:00:00Z", UTC_MIDNIGHT),
        ("timestamp", "2025-12-31T19:00:00-05:00", UTC_MIDNIGHT),
        ("timestamp", "2026-01-01 00:00:00.000001", UTC_MIDNIGHT + timedelta(microseconds=1)),
        ("timestamp", "2026-01-01T00:00:00.123456000Z", UTC_MIDNIGHT + timedelta(microseconds=123456)),
    ],
)
def test_normalize_accepts(type_name: str, literal: object, expected: Value) -> None:
    result = normalize(literal, t(type_name))
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("type_name", "literal"),
    [
        ("tinyint", 128),
        ("tinyint", -129),
        ("smallint", 2**15),
        ("int", -(2**31) - 1),
        ("bigint", 2**63),
        ("int", True),
        ("int", 1.0),
        ("int", "1"),
        ("bigint", Decimal(1)),
        ("float", True),
        ("double", "1.5"),
        ("double", Decimal("1.5")),
        ("double", 10**400),
        ("double", 2**53 + 1),
        ("decimal(10,2)", Decimal("1.234")),
        ("decimal(10,2)", 1.234),
        ("decimal(10,2)", "1.001"),
        ("decimal(3,0)", 1000),
        ("decimal(5,2)", "1000.00"),
        ("decimal(3,3)", 1),
        ("decimal(10,2)", "abc"),
        ("decimal(10,2)", "NaN"),
        ("decimal(10,2)", Decimal("Infinity")),
        ("decimal(10,2)", math.nan),
        ("decimal(10,2)", True),
        ("decimal(10,2)", None),
        ("string", b"a"),
        ("string", 1),
        ("string", None),
        ("binary", 1),
        ("boolean", 1),
        ("boolean", "true"),
        ("date", datetime(2026, 1, 1)),
        ("date", "2026-13-01"),
        ("date", "2026-01-01T00:00"),
        ("date", 20260101),
        ("timestamp", "not a time"),
        ("timestamp", "2026-01-01T00:00:00.1234567"),
        ("timestamp", 1767225600),
        ("timestamp", "0001-01-01T00:00:00+01:00"),
    ],
)
def test_normalize_rejects(type_name: str, literal: object) -> None:
    column_type = t(type_name)
    with pytest.raises(InvalidInputError) as info:
        normalize(literal, column_type)
    message = str(info.value)
    assert "\n" not in message
    assert str(column_type) in message
    assert repr(literal)[:20] in message


def test_normalize_error_message_is_short_for_long_values() -> None:
    with pytest.raises(InvalidInputError) as info:
        normalize("x" * 10_000, t("int"))
    assert len(str(info.value)) < 200


def test_normalize_keeps_nan_for_floating_columns() -> None:
    assert math.isnan(normalize(math.nan, t("double")))  # type: ignore[arg-type]
    assert math.isnan(normalize(math.nan, t("float")))  # type: ignore[arg-type]


def test_normalized_timestamps_are_utc_aware() -> None:
    result = normalize(datetime(2026, 6, 1, 12, 30, 0, 5), t("timestamp"))
    assert isinstance(result, datetime)
    assert result.utcoffset() == timedelta(0)
    assert result.microsecond == 5


@settings(max_examples=50, deadline=None)
@given(st.datetimes(timezones=st.sampled_from([UTC, timezone(timedelta(hours=-7)), None])))
def test_normalized_timestamps_order_like_instants(moment: datetime) -> None:
    reference = normalize(UTC_MIDNIGHT, t("timestamp"))
    value = normalize(moment, t("timestamp"))
    instant = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    assert (value < reference) == (instant < UTC_MIDNIGHT)  # type: ignore[operator]
    assert value == instant


@settings(max_examples=100, deadline=None)
@given(st.decimals(allow_nan=False, allow_infinity=False, places=2, min_value=-999, max_value=999))
def test_decimal_normalisation_is_exact(number: Decimal) -> None:
    result = normalize(number, t("decimal(5,2)"))
    assert result == number
    assert isinstance(result, Decimal)
    assert result.as_tuple().exponent == -2


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (math.nan, True),
        (-math.nan, True),
        (Decimal("NaN"), True),
        (math.inf, False),
        (0.0, False),
        (Decimal(1), False),
        (1, False),
        ("nan", False),
        (None, False),
    ],
)
def test_is_nan(value: object, expected: bool) -> None:
    assert is_nan(value) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, "true"),
        (3, "3"),
        (1.5, "1.5"),
        (math.nan, "NaN"),
        (-math.inf, "-Infinity"),
        (Decimal("1.50"), "1.50"),
        ("it's", "'it''s'"),
        (b"\x01\xab", "X'01ab'"),
        (date(2026, 1, 1), "2026-01-01"),
        (UTC_MIDNIGHT, "2026-01-01T00:00:00Z"),
    ],
)
def test_format_value(value: Value, expected: str) -> None:
    assert format_value(value) == expected


@pytest.mark.parametrize(
    ("type_name", "smaller", "larger"),
    [
        ("boolean", False, True),
        ("binary", b"a", b"ab"),
        ("binary", b"\x7f", b"\x80"),
        ("string", "Z", "a"),
        ("string", "a", "é"),
        ("decimal(10,2)", "-1", "0.5"),
        ("timestamp", "2026-01-01T00:00:00+01:00", "2026-01-01T00:00:00Z"),
        ("date", "2025-12-31", "2026-01-01"),
    ],
)
def test_normalized_values_order_with_python_operators(
    type_name: str, smaller: object, larger: object
) -> None:
    low, high = normalize(smaller, t(type_name)), normalize(larger, t(type_name))
    assert low < high  # type: ignore[operator]


def test_huge_decimal_is_an_input_error_not_an_arithmetic_one() -> None:
    from decimal import Decimal

    from pruner.errors import InvalidInputError
    from pruner.predicate.values import normalize
    from pruner.types import ColumnType

    for huge in (Decimal("1e200"), 10**200, "1e200", 1e200):
        with pytest.raises(InvalidInputError, match="needs more than 10 digits"):
            normalize(huge, ColumnType("decimal", 10, 2))
