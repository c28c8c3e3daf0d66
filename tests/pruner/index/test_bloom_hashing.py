"""pruner.index.bloom, hashing values: the canonical encoding of every column type hashed with
xxh64 (known answers, the vectorised hash against the xxhash package), the agreement of Arrow-array
hashes with Python-literal hashes across physical types, units, zones and layouts, and the values
that are skipped (nulls, NaN, literals no column can hold) or refused (wrong types)."""

from __future__ import annotations

import math
import struct
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.index.bloom import (
    MIN_BYTES,
    filter_for,
    hash_python_values,
    hash_values,
    might_contain,
)
from pruner.types import ColumnType
from tests.pruner.index.bloom_strategies import COLUMN_VALUES


def _hash_set(hashes: npt.NDArray[np.uint64]) -> set[int]:
    return {int(h) for h in hashes}


def _xxh(data: bytes) -> int:
    return xxhash.xxh64_intdigest(data)


def _int64(value: int) -> bytes:
    return value.to_bytes(8, "little", signed=True)


# ------------------------------------------------------------------------- known answers


def test_xxh64_of_empty_input_is_the_published_value() -> None:
    assert xxhash.xxh64_intdigest(b"") == 0xEF46DB3751D8E999
    assert hash_python_values([""], ColumnType("string")).tolist() == [0xEF46DB3751D8E999]
    assert hash_values(pa.array([""])).tolist() == [0xEF46DB3751D8E999]
    assert hash_values(pa.array([b""], pa.binary())).tolist() == [0xEF46DB3751D8E999]


def test_canonical_encodings_hash_the_documented_bytes() -> None:
    def one(value: object, type_name: str) -> int:
        from pruner.types import parse_type

        (h,) = hash_python_values([value], parse_type(type_name)).tolist()
        return int(h)

    assert one(1, "bigint") == _xxh(_int64(1))
    assert one(-5, "tinyint") == _xxh(_int64(-5))
    assert one(True, "boolean") == _xxh(_int64(1))
    assert one(False, "boolean") == _xxh(_int64(0))
    assert one(1.5, "double") == _xxh(struct.pack("<d", 1.5))
    assert one(-0.0, "double") == _xxh(struct.pack("<d", 0.0))
    assert one(0.25, "float") == _xxh(struct.pack("<d", 0.25))
    assert one(Decimal("1.5"), "decimal(10,2)") == _xxh(b"1.50")
    assert one(Decimal("-0.00"), "decimal(10,2)") == _xxh(b"0.00")
    assert one(Decimal(0), "decimal(20,10)") == _xxh(b"0.0000000000")
    assert one(Decimal("-1E-7"), "decimal(20,10)") == _xxh(b"-0.0000001000")
    assert one(7, "decimal(5,0)") == _xxh(b"7")
    assert one("héllo ✓", "string") == _xxh("héllo ✓".encode())
    assert one(b"\x00\xff", "binary") == _xxh(b"\x00\xff")
    assert one(date(1970, 1, 2), "date") == _xxh(_int64(1))
    assert one(date(1969, 12, 31), "date") == _xxh(_int64(-1))
    assert one(datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC), "timestamp") == _xxh(_int64(1))
    assert one(datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), "timestamp") == _xxh(_int64(-1))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=50))
def test_vectorised_xxh64_of_int64_equals_the_xxhash_package(values: list[int]) -> None:
    expected = {_xxh(_int64(v)) for v in values}
    assert _hash_set(hash_values(pa.array(values, pa.int64()))) == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(allow_nan=False), max_size=50))
def test_vectorised_xxh64_of_float64_equals_the_xxhash_package(values: list[float]) -> None:
    expected = {_xxh(struct.pack("<d", v + 0.0)) for v in values}
    assert _hash_set(hash_values(pa.array(values, pa.float64()))) == expected


# ------------------------------------------------------- Python literals agree with arrays


@pytest.mark.parametrize("type_key", sorted(COLUMN_VALUES))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_python_literal_hashes_equal_array_hashes(type_key: str, data: st.DataObject) -> None:
    column_type, values = COLUMN_VALUES[type_key]
    literals = data.draw(st.lists(st.none() | values, max_size=30))
    array = pa.array(literals, type=column_type.to_arrow())
    from_array = hash_values(array)
    from_literals = hash_python_values(literals, column_type)
    assert _hash_set(from_array) == _hash_set(from_literals)
    assert len(from_array) == len(_hash_set(from_array))  # one hash per distinct value
    non_null = [v for v in literals if v is not None and not (isinstance(v, float) and math.isnan(v))]
    assert len(from_literals) == len(non_null)


def test_same_logical_value_hashes_alike_across_physical_types() -> None:
    five = _hash_set(hash_values(pa.array([5], pa.int64())))
    for dt in (pa.int8(), pa.int16(), pa.int32()):
        assert _hash_set(hash_values(pa.array([5], dt))) == five
    assert _hash_set(hash_values(pa.array([True], pa.bool_()))) == _hash_set(
        hash_values(pa.array([1], pa.int64()))
    )
    assert _hash_set(hash_values(pa.array([0.5], pa.float32()))) == _hash_set(
        hash_values(pa.array([0.5], pa.float64()))
    )
    text = _hash_set(hash_values(pa.array(["ü", "x"], pa.string())))
    assert _hash_set(hash_values(pa.array(["ü", "x"], pa.large_string()))) == text
    assert _hash_set(hash_values(pa.array(["ü".encode(), b"x"], pa.large_binary()))) == text
    assert _hash_set(hash_values(pa.array(["ü", "x"]).dictionary_encode())) == text
    assert _hash_set(hash_values(pa.chunked_array([["ü"], [], ["x", None]]))) == text
    scaled = _hash_set(hash_values(pa.array([Decimal("1.5")], pa.decimal128(10, 2))))
    assert scaled == _hash_set(hash_python_values([Decimal("1.50")], ColumnType("decimal", 10, 2)))
    assert scaled == _hash_set(hash_python_values([Decimal("1.5")], ColumnType("decimal", 10, 2)))
    assert scaled != _hash_set(hash_python_values([Decimal("1.5")], ColumnType("decimal", 10, 3)))


def test_negative_zero_is_zero() -> None:
    zero = _hash_set(hash_python_values([0.0], ColumnType("double")))
    assert _hash_set(hash_python_values([-0.0], ColumnType("double"))) == zero
    assert _hash_set(hash_values(pa.array([-0.0], pa.float64()))) == zero
    assert _hash_set(hash_values(pa.array([-0.0], pa.float32()))) == zero
    assert len(hash_values(pa.array([-0.0, 0.0, -0.0], pa.float64()))) == 1
    decimal_zero = _hash_set(hash_values(pa.array([Decimal("0.00")], pa.decimal128(4, 2))))
    assert _hash_set(hash_python_values([Decimal("-0")], ColumnType("decimal", 4, 2))) == decimal_zero


def test_timestamps_of_every_unit_and_zone_are_utc_microseconds() -> None:
    instant = datetime(2024, 2, 29, 12, 30, 45, 123000, tzinfo=UTC)
    expected = _hash_set(hash_python_values([instant], ColumnType("timestamp")))
    micros = 1709209845123000
    assert expected == {_xxh(_int64(micros))}
    for unit, value in (("ms", micros // 1000), ("us", micros), ("ns", micros * 1000)):
        assert _hash_set(hash_values(pa.array([value], pa.timestamp(unit, tz="UTC")))) == expected
        assert _hash_set(hash_values(pa.array([value], pa.timestamp(unit)))) == expected
    seconds = _hash_set(hash_values(pa.array([micros // 10**6], pa.timestamp("s", tz="UTC"))))
    assert seconds == {_xxh(_int64(micros // 10**6 * 10**6))}
    # Nanoseconds below a microsecond are dropped.
    assert _hash_set(hash_values(pa.array([micros * 1000 + 999], pa.timestamp("ns", tz="UTC")))) == expected
    # The same instant given in another zone, or naive (read as UTC).
    plus_two = instant.astimezone(timezone(timedelta(hours=2)))
    assert _hash_set(hash_python_values([plus_two], ColumnType("timestamp"))) == expected
    naive = instant.replace(tzinfo=None)
    assert _hash_set(hash_python_values([naive], ColumnType("timestamp"))) == expected


def test_dates_are_days_since_epoch() -> None:
    days = [date(1970, 1, 1), date(2000, 3, 1), date(1, 1, 1), date(9999, 12, 31)]
    expected = {_xxh(_int64((d - date(1970, 1, 1)).days)) for d in days}
    assert _hash_set(hash_values(pa.array(days, pa.date32()))) == expected
    assert _hash_set(hash_values(pa.array(days, pa.date64()))) == expected
    assert _hash_set(hash_python_values(days, ColumnType("date"))) == expected


def test_nulls_and_nan_are_skipped() -> None:
    nan = float("nan")
    assert len(hash_values(pa.array([None, nan, 1.0, nan, None], pa.float64()))) == 1
    assert len(hash_values(pa.array([nan], pa.float32()))) == 0
    assert len(hash_values(pa.array([None, None], pa.string()))) == 0
    assert len(hash_values(pa.array([], pa.int32()))) == 0
    assert len(hash_values(pa.chunked_array([], pa.timestamp("us", tz="UTC")))) == 0
    assert len(hash_python_values([None, nan], ColumnType("double"))) == 0
    assert len(hash_python_values([None], ColumnType("string"))) == 0
    assert hash_values(pa.array([None], pa.int64())).dtype == np.uint64
    assert hash_python_values([], ColumnType("binary")).dtype == np.uint64
    empty_filter = filter_for(pa.array([None, nan], pa.float64()), 0.01)
    assert len(empty_filter) == MIN_BYTES
    assert not might_contain(empty_filter, hash_python_values([1.0, 0.0], ColumnType("double"))).any()


def test_literals_no_column_can_hold_are_skipped() -> None:
    assert len(hash_python_values([2**63, -(2**63) - 1, 5], ColumnType("bigint"))) == 1
    decimal = ColumnType("decimal", 5, 2)
    assert len(hash_python_values([Decimal("1000"), Decimal("1E+40"), Decimal("999.99")], decimal)) == 1


@pytest.mark.parametrize(
    ("value", "type_name"),
    [
        ("1", "bigint"),
        (1.0, "int"),
        (1, "string"),
        ("x", "binary"),
        (datetime(2020, 1, 1, tzinfo=UTC), "date"),
        (date(2020, 1, 1), "timestamp"),
        (1.5, "decimal(10,2)"),
        (Decimal("NaN"), "decimal(10,2)"),
        ("1.0", "double"),
    ],
)
def test_literals_of_the_wrong_type_are_refused(value: object, type_name: str) -> None:
    from pruner.types import parse_type

    with pytest.raises(TypeError):
        hash_python_values([value], parse_type(type_name))


def test_unsupported_arrow_types_are_refused() -> None:
    with pytest.raises(TypeError):
        hash_values(pa.array([[1]]))
    with pytest.raises(TypeError):
        hash_values(pa.array([1], pa.uint32()))


def test_view_and_fixed_size_layouts_hash_like_the_plain_ones() -> None:
    text = _hash_set(hash_values(pa.array(["a", "bb", None], pa.string())))
    assert _hash_set(hash_values(pa.array(["a", "bb", None], pa.string_view()))) == text
    assert _hash_set(hash_values(pa.array([b"a", b"bb"], pa.binary_view()))) == text
    assert _hash_set(hash_values(pa.array([b"ab", b"cd"], pa.binary(2)))) == {_xxh(b"ab"), _xxh(b"cd")}
