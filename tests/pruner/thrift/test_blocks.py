"""pruner.thrift.blocks: the fast encoder's bytes decode with the generated classes (accelerated
and pure-Python protocol) to the same values, follow the null-slot rules, and are byte-identical
to what the generated encoder writes; page results; the row-size estimate is an upper bound; and
generated blocks decode back to Arrow, with malformed blocks refused."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.thrift import idl
from pruner.thrift.blocks import (
    arrow_connector_type,
    block_connector_type,
    block_row_count,
    decode_block,
    decode_values,
    encode_block,
    encode_page_result,
    encoded_row_sizes,
    rows_within,
)
from pruner.thrift.connector_types import ConnectorType, to_connector_array
from pruner.thrift.errors import ThriftRequestError
from pruner.types import ColumnType
from tests.pruner.thrift.support import thrift_decode, thrift_encode

PROPERTY = settings(max_examples=60, deadline=None)
I32, I64 = (-(2**31), 2**31 - 1), (-(2**63), 2**63 - 1)

# Per connector type: a column type sent as it, and a strategy of raw values (ints for date and
# timestamp: days and milliseconds, so that any i32 / i64 is covered, far past and future too).
KINDS: dict[ConnectorType, tuple[ColumnType, st.SearchStrategy[Any]]] = {
    ConnectorType.INTEGER: (ColumnType("int"), st.integers(*I32) | st.sampled_from(I32)),
    ConnectorType.BIGINT: (ColumnType("bigint"), st.integers(*I64) | st.sampled_from(I64)),
    ConnectorType.DOUBLE: (
        ColumnType("double"),
        st.floats() | st.sampled_from([math.nan, math.inf, -math.inf, -0.0]),
    ),
    ConnectorType.VARCHAR: (
        ColumnType("string"),
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=8) | st.just(""),
    ),
    ConnectorType.BOOLEAN: (ColumnType("boolean"), st.booleans()),
    ConnectorType.DATE: (ColumnType("date"), st.integers(*I32) | st.sampled_from([-719162, 2932896, -1])),
    ConnectorType.TIMESTAMP: (ColumnType("timestamp"), st.integers(*I64) | st.sampled_from([-1, -1001, 0])),
}
_STORAGE = {ConnectorType.DATE: pa.int32(), ConnectorType.TIMESTAMP: pa.int64()}


def connector_array(kind: ConnectorType, values: list[Any]) -> pa.Array:
    if kind in _STORAGE:
        return pa.array(values, _STORAGE[kind]).cast(kind.arrow_type)
    return pa.array(values, kind.arrow_type)


@st.composite
def arrays(draw: st.DrawFn, kind: ConnectorType | None = None) -> pa.Array:
    kind = kind or draw(st.sampled_from(list(ConnectorType)))
    values = draw(st.lists(st.none() | KINDS[kind][1], max_size=40))
    skip = draw(st.integers(0, 3))  # a sliced array has a non-zero offset
    return connector_array(kind, values)[skip:]


def comparable(arr: pa.Array) -> list[Any]:
    """Values as plain Python, dates and timestamps as ints, NaN as a string (NaN != NaN)."""
    kind = arrow_connector_type(arr.type)
    if kind in _STORAGE:
        arr = arr.cast(_STORAGE[kind])
    return ["nan" if isinstance(v, float) and math.isnan(v) else v for v in arr.to_pylist()]


def member(block: idl.Block) -> Any:
    return next(
        getattr(block, name) for name in vars(idl.Block)["__slots__"] if getattr(block, name) is not None
    )


@PROPERTY
@given(arrays(), st.booleans())
def test_encoded_block_decodes_to_the_same_values(arr: pa.Array, accelerated: bool) -> None:
    encoded = encode_block(arr)
    block = thrift_decode(encoded, idl.Block, accelerated)
    kind = arrow_connector_type(arr.type)
    assert block_connector_type(block) is kind
    assert block_row_count(block) == len(arr)
    assert comparable(decode_block(block, KINDS[kind][0])) == comparable(arr)
    assert thrift_encode(block) == encoded  # what the generated encoder would write


@PROPERTY
@given(arrays())
def test_null_slot_rules(arr: pa.Array) -> None:
    data = member(thrift_decode(encode_block(arr), idl.Block))
    values_name = next(name for name in vars(type(data))["__slots__"] if name not in ("nulls", "bytes"))
    values = getattr(data, values_name)
    nulls = arr.is_null().to_pylist()
    if not any(nulls):
        assert data.nulls is None
        assert len(values) == len(arr)
    elif all(nulls):
        assert data.nulls == [True] * len(arr)
        assert values is None and getattr(data, "bytes", None) is None
    else:
        assert data.nulls == nulls
        assert len(values) == len(arr)  # null rows still take a slot ...
        assert all(not values[i] for i, null in enumerate(nulls) if null)  # ... holding 0 / empty


@pytest.mark.parametrize("kind", list(ConnectorType))
def test_empty_and_all_null_arrays(kind: ConnectorType) -> None:
    column_type = KINDS[kind][0]
    for arr in (pa.array([], kind.arrow_type), pa.nulls(0, kind.arrow_type), pa.nulls(3, kind.arrow_type)):
        block = thrift_decode(encode_block(arr), idl.Block)
        assert decode_block(block, column_type).equals(arr)
    untyped = to_connector_array(pa.nulls(2), column_type)
    assert member(thrift_decode(encode_block(untyped), idl.Block)).nulls == [True, True]


def test_varchar_bytes_behind_null_slots_are_not_sent() -> None:
    dense = pa.array(["ab", "cde", "f"])
    validity = pa.array([False, True, True]).buffers()[1]
    arr = pa.Array.from_buffers(pa.string(), 3, [validity, *dense.buffers()[1:]], 1)
    data = thrift_decode(encode_block(arr), idl.Block).varcharData
    assert (data.nulls, data.sizes, data.bytes) == ([True, False, False], [0, 3, 1], b"cdef")


def test_empty_and_unicode_strings() -> None:
    arr = pa.array(["", "ü€𝄞", None, ""])
    data = thrift_decode(encode_block(arr), idl.Block).varcharData
    assert data.sizes == [0, 9, 0, 0] and data.bytes == "ü€𝄞".encode()
    assert decode_block(idl.Block(varcharData=data), ColumnType("string")).equals(arr)


def test_converted_columns_encode() -> None:
    arr = to_connector_array(pa.array([b"\x00\x10", None]), ColumnType("binary"))
    data = thrift_decode(encode_block(arr), idl.Block).varcharData
    assert (data.nulls, data.sizes, data.bytes) == ([False, True], [4, 0], b"0010")


def test_large_string_is_varchar() -> None:
    arr = pa.array(["x", None], pa.large_string())
    assert thrift_decode(encode_block(arr), idl.Block).varcharData.bytes == b"x"


def test_unknown_arrow_type_is_refused() -> None:
    with pytest.raises(TypeError, match="to_connector_array"):
        encode_block(pa.array([1], pa.int8()))


@given(st.lists(arrays(ConnectorType.BIGINT), max_size=3), st.integers(0, 2**31 - 1), st.none() | st.binary())
def test_page_result(blocks: list[pa.Array], row_count: int, token: bytes | None) -> None:
    encoded = [encode_block(b) for b in blocks]
    page = thrift_decode(encode_page_result(encoded, row_count, token), idl.PageResult)
    assert page.rowCount == row_count
    assert [thrift_encode(b) for b in page.columnBlocks] == encoded
    assert (page.nextToken.id if page.nextToken else None) == token


def test_page_result_refuses_bad_row_counts() -> None:
    with pytest.raises(ValueError):
        encode_page_result([], -1, None)


# Sizing -----------------------------------------------------------------------------------------

SIZED_TYPES = [
    ColumnType(n) for n in ("tinyint", "bigint", "double", "string", "binary", "boolean", "timestamp")
]


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[pa.Array], list[ColumnType]]:
    types = draw(st.lists(st.sampled_from(SIZED_TYPES), min_size=1, max_size=4))
    rows = draw(st.integers(0, 30))
    columns = []
    for column_type in types:
        strategy = {
            "tinyint": st.integers(-128, 127),
            "bigint": st.integers(*I64),
            "double": st.floats(),
            "string": st.text(st.characters(blacklist_categories=("Cs",)), max_size=6),
            "binary": st.binary(max_size=6),
            "boolean": st.booleans(),
            "timestamp": st.integers(-(10**15), 10**15),
        }[column_type.name]
        values = draw(st.lists(st.none() | strategy, min_size=rows, max_size=rows))
        arrow_type = column_type.to_arrow()
        if column_type.name == "timestamp":
            columns.append(pa.array(values, pa.int64()).cast(arrow_type))
        else:
            columns.append(pa.array(values, arrow_type))
    return columns, types


@PROPERTY
@given(tables(), st.integers(0, 3000))
def test_rows_within_never_exceeds_the_budget(
    table: tuple[list[pa.Array], list[ColumnType]], budget: int
) -> None:
    columns, types = table
    reserve = 64
    count = rows_within(columns, types, budget, reserve_bytes=reserve)
    encoded = [encode_block(to_connector_array(c[:count], t)) for c, t in zip(columns, types, strict=True)]
    if count:
        assert len(encode_page_result(encoded, count, None)) + reserve <= budget


def test_rows_within_takes_everything_under_a_large_budget() -> None:
    columns = [pa.array(range(1000), pa.int64()), pa.array(["x" * 10] * 1000)]
    types = [ColumnType("bigint"), ColumnType("string")]
    assert rows_within(columns, types, 16 * 1024 * 1024) == 1000
    assert rows_within(columns, types, 100) == 0
    assert list(encoded_row_sizes(columns, types)[:2]) == [8 + 4 + 10, 8 + 4 + 10]


def test_row_sizes_accept_chunked_columns() -> None:
    chunked = pa.chunked_array([[b"ab"], [None]], pa.binary())
    assert list(encoded_row_sizes([chunked], [ColumnType("binary")])) == [1 + 4 + 4, 1 + 4]


# Decoding ---------------------------------------------------------------------------------------


def test_decode_values_are_the_engines() -> None:
    ms = thrift_decode(encode_block(pa.array([-1, None], pa.int64()).cast(pa.timestamp("ms"))), idl.Block)
    assert decode_values(ms, ColumnType("timestamp")) == [-1, None]
    days = thrift_decode(encode_block(pa.array([-800000], pa.int32()).cast(pa.date32())), idl.Block)
    assert decode_values(days, ColumnType("date")) == [-800000]  # before year 1: still a value


def test_absent_value_lists_mean_zeros_as_in_trino() -> None:
    block = idl.Block(bigintData=idl.Bigint(nulls=[False, True], longs=None))
    assert decode_values(block, ColumnType("bigint")) == [0, None]
    varchar = idl.Block(varcharData=idl.Varchar(nulls=[False], sizes=None, bytes=None))
    assert decode_values(varchar, ColumnType("string")) == [""]


@pytest.mark.parametrize(
    ("block", "message"),
    [
        (idl.Block(), "exactly one data member"),
        (idl.Block(bigintData=idl.Bigint(longs=[1]), integerData=idl.Integer(ints=[1])), "exactly one"),
        (idl.Block(jsonData=idl.Json(sizes=[0])), "jsonData"),
        (idl.Block(bigintData=idl.Bigint(nulls=[False], longs=[1, 2])), "1 nulls but 2 values"),
        (idl.Block(varcharData=idl.Varchar(sizes=[2], bytes=b"abc")), "add up to 2 bytes but it holds 3"),
        (idl.Block(varcharData=idl.Varchar(sizes=[-1, 1], bytes=b"")), "negative size"),
        (idl.Block(varcharData=idl.Varchar(sizes=[2], bytes=b"\xff\xfe")), "UTF-8"),
        (idl.Block(integerData=idl.Integer(ints=[1])), "expected a bigint block"),
    ],
)
def test_malformed_blocks_are_refused(block: idl.Block, message: str) -> None:
    with pytest.raises(ThriftRequestError, match=message):
        decode_block(block, ColumnType("string" if block.varcharData else "bigint"))


def test_a_million_bigints_are_one_body() -> None:
    arr = pa.array(np.arange(1_000_000, dtype=np.int64))
    encoded = encode_block(arr)
    assert len(encoded) == 3 + 8 + 8_000_000 + 2
    assert encoded[11:19] == (0).to_bytes(8, "big") and encoded[-10:-2] == (999_999).to_bytes(8, "big")
