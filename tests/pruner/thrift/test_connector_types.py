"""pruner.thrift.connector_types: the SQL type of every column type, and the vectorised conversion
to (and, for exact mappings, from) the connector's Arrow types: nulls kept, sliced arrays, decimals
rounded correctly, timestamps floored to milliseconds (before 1970 too), binary as lowercase hex."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from decimal import Decimal

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.errors import SchemaMismatchError
from pruner.thrift.connector_types import (
    ConnectorType,
    comment,
    connector_type,
    from_connector_array,
    is_exact,
    sql_type,
    to_connector_array,
)
from pruner.types import ColumnType, parse_type

PROPERTY = settings(max_examples=80, deadline=None)


@pytest.mark.parametrize(
    ("column", "sql"),
    [
        ("tinyint", "integer"),
        ("smallint", "integer"),
        ("int", "integer"),
        ("bigint", "bigint"),
        ("float", "double"),
        ("double", "double"),
        ("decimal(38,10)", "double"),
        ("string", "varchar"),
        ("binary", "varchar"),
        ("boolean", "boolean"),
        ("date", "date"),
        ("timestamp", "timestamp(3)"),
    ],
)
def test_sql_type(column: str, sql: str) -> None:
    column_type = parse_type(column)
    assert sql_type(column_type) == sql
    assert to_connector_array(pa.array([None], column_type.to_arrow()), column_type).type == (
        connector_type(column_type).arrow_type
    )


def test_exactness_and_comments() -> None:
    assert [t.name for t in map(parse_type, ("decimal(5,2)", "timestamp")) if not is_exact(t)] == [
        "decimal",
        "timestamp",
    ]
    assert is_exact(ColumnType("binary")) and is_exact(ColumnType("float"))
    assert comment(ColumnType("bigint")) is None
    assert "hex" in (comment(ColumnType("binary")) or "")
    assert "milliseconds" in (comment(ColumnType("timestamp")) or "")


def test_integers_widen_to_integer_and_keep_nulls() -> None:
    arr = pa.array([-128, None, 127], pa.int8())
    assert to_connector_array(arr, ColumnType("tinyint")).to_pylist() == [-128, None, 127]
    assert to_connector_array(arr, ColumnType("tinyint")).type == pa.int32()


def test_narrower_source_types_are_accepted_and_wider_refused() -> None:
    assert to_connector_array(pa.array([1], pa.int16()), ColumnType("bigint")).to_pylist() == [1]
    with pytest.raises(SchemaMismatchError):
        to_connector_array(pa.array([1], pa.int64()), ColumnType("int"))
    with pytest.raises(SchemaMismatchError):
        to_connector_array(pa.array(["x"]), ColumnType("bigint"))


def test_float_widens_exactly() -> None:
    arr = pa.array([0.1, float("nan"), float("-inf"), None], pa.float32())
    out = to_connector_array(arr, ColumnType("float")).to_pylist()
    assert out[0] == float(pa.scalar(0.1, pa.float32()).as_py())
    assert math.isnan(out[1]) and out[2] == -math.inf and out[3] is None


@PROPERTY
@given(
    st.lists(
        st.none() | st.decimals(min_value=-(10**18) + 1, max_value=10**18 - 1, places=10, allow_nan=False),
        max_size=30,
    )
)
def test_decimals_round_to_the_nearest_double(values: list[Decimal | None]) -> None:
    column_type = ColumnType("decimal", 28, 10)
    out = to_connector_array(pa.array(values, pa.decimal128(28, 10)), column_type).to_pylist()
    assert out == [None if v is None else float(v) for v in values]


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_timestamps_floor_to_milliseconds(unit: str) -> None:
    per_second = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[unit]
    raw = [-1, 0, 1, per_second - 1, -per_second - 1, None]
    arr = pa.array(raw, pa.timestamp(unit, tz="UTC"))
    out = to_connector_array(arr, ColumnType("timestamp")).cast(pa.int64()).to_pylist()
    assert out == [None if v is None else (v * 1000) // per_second for v in raw]


def test_timestamp_far_past_and_future() -> None:
    moments = [datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)]
    out = to_connector_array(pa.array(moments, pa.timestamp("us", tz="UTC")), ColumnType("timestamp"))
    assert out.to_pylist() == [
        m.replace(tzinfo=None, microsecond=m.microsecond // 1000 * 1000) for m in moments
    ]


def test_dates_are_days() -> None:
    arr = pa.array([date(1, 1, 1), None, date(9999, 12, 31)])
    assert to_connector_array(arr, ColumnType("date")).equals(arr)


@PROPERTY
@given(st.lists(st.none() | st.binary(max_size=12), max_size=20), st.integers(0, 5))
def test_binary_is_lowercase_hex_and_back(values: list[bytes | None], skip: int) -> None:
    arr = pa.array(values, pa.binary())[skip:]
    hexed = to_connector_array(arr, ColumnType("binary"))
    assert hexed.to_pylist() == [None if v is None else v.hex() for v in values[skip:]]
    assert from_connector_array(hexed, ColumnType("binary")).to_pylist() == values[skip:]


def test_large_and_view_binary_are_hexed() -> None:
    for arrow_type in (pa.large_binary(), pa.binary_view()):
        arr = pa.array([b"\x01\xab", None], arrow_type)
        assert to_connector_array(arr, ColumnType("binary")).to_pylist() == ["01ab", None]


def test_strings_pass_through() -> None:
    arr = pa.array(["é", None, ""], pa.large_string())
    assert to_connector_array(arr, ColumnType("string")).to_pylist() == ["é", None, ""]
    view = pa.array(["x", None], pa.string_view())
    assert to_connector_array(view, ColumnType("string")).type == pa.string()


def test_chunked_arrays_are_combined() -> None:
    chunked = pa.chunked_array([[1, 2], [3]], pa.int32())
    assert to_connector_array(chunked, ColumnType("int")).to_pylist() == [1, 2, 3]


def test_inverse_nulls_values_without_a_column_value() -> None:
    ints = pa.array([1, 200, -129, None], pa.int32())
    assert from_connector_array(ints, ColumnType("tinyint")).to_pylist() == [1, None, None, None]
    doubles = pa.array([0.5, 0.1, float("nan"), None])
    assert from_connector_array(doubles, ColumnType("float")).to_pylist() == [0.5, None, None, None]
    hexes = pa.array(["0aff", "0AFF", "abc", "zz", ""])
    assert from_connector_array(hexes, ColumnType("binary")).to_pylist() == [
        b"\x0a\xff",
        None,
        None,
        None,
        b"",
    ]
    assert from_connector_array(pa.array(["x"]), ColumnType("string")).to_pylist() == ["x"]


@pytest.mark.parametrize("lossy", ["decimal(10,2)", "timestamp"])
def test_inverse_refuses_lossy_mappings(lossy: str) -> None:
    column_type = parse_type(lossy)
    with pytest.raises(ValueError, match="loss of precision"):
        from_connector_array(pa.array([1.0]), column_type)


def test_connector_type_values_are_the_sql_names() -> None:
    assert [t.sql for t in ConnectorType] == [
        "integer",
        "bigint",
        "double",
        "varchar",
        "boolean",
        "date",
        "timestamp(3)",
    ]
