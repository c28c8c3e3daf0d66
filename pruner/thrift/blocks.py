"""Column blocks of the Thrift connector. `encode_block` turns an Arrow array of a connector type
(see `connector_types.to_connector_array`) into the binary-protocol bytes of a `Block` struct with
numpy, without a per-row Python loop: list bodies are `astype('>i4'/'>i8'/'>f8').tobytes()`,
booleans one byte each, varchar sizes plus the concatenated UTF-8 bytes straight from the Arrow
offsets and data buffers. Nulls follow the connector's rules: a `nulls` list only when there are
nulls, values at null positions still take a slot (written as 0 / empty), and an all-null column
sends only `nulls=[true]*n`. Every field id comes from the generated `thrift_spec`s, so this encoder
and the IDL cannot drift apart. `encode_page_result` wraps encoded blocks into a `PageResult`;
`rows_within` says how many leading rows of a set of columns fit a byte budget. In the other
direction `decode_block` / `decode_values` read generated `Block` objects (the keys page of an
index lookup, marker and equatable values of a constraint) as Arrow arrays or Python values of the
engine: ints for integer, bigint, date (days since the epoch) and timestamp (milliseconds since
the epoch, the engine's value: `domains` widens it to microseconds), floats, strs and bools."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.types as pat

from pruner.thrift import idl
from pruner.thrift.connector_types import ConnectorType, connector_type
from pruner.thrift.errors import ThriftRequestError
from pruner.types import ColumnType, TypeKind

EngineValue: TypeAlias = int | float | str | bool
"""A non-null value as the engine sent it (see the module docstring)."""

_FIELD = struct.Struct(">bh")
_LIST_FIELD = struct.Struct(">bhbi")
_BINARY_FIELD = struct.Struct(">bhi")
_I32_FIELD = struct.Struct(">bhi")
_STOP = b"\x00"
_MAX_I32 = 2**31 - 1

_WIRE_DTYPES: dict[int, str] = {
    idl.TType.I32: ">i4",
    idl.TType.I64: ">i8",
    idl.TType.DOUBLE: ">f8",
    idl.TType.BOOL: "u1",
}
_NATIVE_DTYPES: dict[ConnectorType, Any] = {
    ConnectorType.INTEGER: np.int32,
    ConnectorType.BIGINT: np.int64,
    ConnectorType.DOUBLE: np.float64,
    ConnectorType.BOOLEAN: np.bool_,
    ConnectorType.DATE: np.int32,
    ConnectorType.TIMESTAMP: np.int64,
}
# The Block member and the name of its values list (for varchar: the sizes) per connector type.
_MEMBERS: dict[ConnectorType, tuple[str, str]] = {
    ConnectorType.INTEGER: ("integerData", "ints"),
    ConnectorType.BIGINT: ("bigintData", "longs"),
    ConnectorType.DOUBLE: ("doubleData", "doubles"),
    ConnectorType.VARCHAR: ("varcharData", "sizes"),
    ConnectorType.BOOLEAN: ("booleanData", "booleans"),
    ConnectorType.DATE: ("dateData", "dates"),
    ConnectorType.TIMESTAMP: ("timestampData", "timestamps"),
}
_UNSUPPORTED_MEMBERS = ("jsonData", "hyperLogLogData", "bigintArrayData")


@dataclass(frozen=True)
class _Layout:
    """Field ids and element types of one connector type's Block member, read from the spec."""

    member: str
    values: str
    block_field: int
    nulls_field: int
    values_field: int
    values_ttype: int
    bytes_field: int | None

    @classmethod
    def of(cls, member: str, values: str) -> _Layout:
        member_spec = idl.field(idl.Block, member)
        member_struct: type = member_spec.type_args[0]
        values_spec = idl.field(member_struct, values)
        has_bytes = any(e is not None and e[2] == "bytes" for e in vars(member_struct)["thrift_spec"])
        return cls(
            member=member,
            values=values,
            block_field=member_spec.id,
            nulls_field=idl.field(member_struct, "nulls").id,
            values_field=values_spec.id,
            values_ttype=int(values_spec.type_args[0]),
            bytes_field=idl.field(member_struct, "bytes").id if has_bytes else None,
        )


_LAYOUTS = {kind: _Layout.of(member, values) for kind, (member, values) in _MEMBERS.items()}
_PAGE_BLOCKS = idl.field(idl.PageResult, "columnBlocks")
_PAGE_ROW_COUNT = idl.field(idl.PageResult, "rowCount")
_PAGE_NEXT_TOKEN = idl.field(idl.PageResult, "nextToken")
_ID_BYTES = idl.field(idl.Id, "id")

# A block's bytes besides its per-row bodies: member field header, nulls and values list headers,
# bytes field header, two stops.
_BLOCK_OVERHEAD = _FIELD.size + 2 * _LIST_FIELD.size + _BINARY_FIELD.size + 2
# A PageResult's bytes besides its blocks and token: blocks list header, row count, stop.
_PAGE_OVERHEAD = _LIST_FIELD.size + _I32_FIELD.size + 1


# Encoding -------------------------------------------------------------------------------------


def arrow_connector_type(arrow_type: pa.DataType) -> ConnectorType:
    """The connector type whose values an Arrow array of `arrow_type` holds (the types that
    `to_connector_array` produces; `large_string` is varchar too)."""
    if pat.is_large_string(arrow_type):
        return ConnectorType.VARCHAR
    for kind in ConnectorType:
        if arrow_type == kind.arrow_type:
            return kind
    raise TypeError(f"Arrow type {arrow_type} is not a connector type; convert with to_connector_array")


def encode_block(arr: pa.Array) -> bytes:
    """The binary-protocol bytes of a `Block` struct holding `arr` (a connector-typed array)."""
    kind = arrow_connector_type(arr.type)
    layout = _LAYOUTS[kind]
    rows = len(arr)
    nulls = _null_mask(arr)
    parts: list[Any] = [_FIELD.pack(idl.TType.STRUCT, layout.block_field)]
    if nulls is not None:
        parts += [
            _LIST_FIELD.pack(idl.TType.LIST, layout.nulls_field, idl.TType.BOOL, rows),
            nulls.view(np.uint8),
        ]
    all_null = rows > 0 and arr.null_count == rows
    if not all_null:
        header = _LIST_FIELD.pack(idl.TType.LIST, layout.values_field, layout.values_ttype, rows)
        if kind is ConnectorType.VARCHAR:
            sizes, data = _varchar_body(arr, nulls)
            assert layout.bytes_field is not None
            if len(data) > _MAX_I32:
                raise ValueError(f"a varchar block of {len(data)} bytes does not fit one Thrift binary field")
            parts += [
                header,
                sizes.astype(_WIRE_DTYPES[layout.values_ttype]),
                _BINARY_FIELD.pack(idl.TType.STRING, layout.bytes_field, len(data)),
                data,
            ]
        else:
            parts += [header, _fixed_body(arr, kind, nulls).astype(_WIRE_DTYPES[layout.values_ttype])]
    parts.append(_STOP + _STOP)  # end of the member struct, end of the Block
    return b"".join(parts)


def encode_page_result(blocks: list[bytes], row_count: int, next_token: bytes | None) -> bytes:
    """The binary-protocol bytes of a `PageResult` struct: `blocks` (from `encode_block`, one per
    requested column, each with `row_count` rows), the row count, and the paging token if any."""
    if not 0 <= row_count <= _MAX_I32:
        raise ValueError(f"row count {row_count} is out of range")
    parts: list[bytes] = [
        _LIST_FIELD.pack(idl.TType.LIST, _PAGE_BLOCKS.id, idl.TType.STRUCT, len(blocks)),
        *blocks,
        _I32_FIELD.pack(idl.TType.I32, _PAGE_ROW_COUNT.id, row_count),
    ]
    if next_token is not None:
        parts += [
            _FIELD.pack(idl.TType.STRUCT, _PAGE_NEXT_TOKEN.id),
            _BINARY_FIELD.pack(idl.TType.STRING, _ID_BYTES.id, len(next_token)),
            next_token,
            _STOP,
        ]
    parts.append(_STOP)
    return b"".join(parts)


def _null_mask(arr: pa.Array) -> np.ndarray | None:
    if arr.null_count == 0:
        return None
    mask: np.ndarray = arr.is_null().to_numpy(zero_copy_only=False)
    return mask


def _fixed_body(arr: pa.Array, kind: ConnectorType, nulls: np.ndarray | None) -> np.ndarray:
    rows = len(arr)
    if rows == 0:  # Arrow may leave the buffers of an empty array out
        return np.empty(0, dtype=_NATIVE_DTYPES[kind])
    if kind is ConnectorType.BOOLEAN:
        bits = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
        values = np.unpackbits(bits, bitorder="little", count=arr.offset + rows)[arr.offset :]
    else:
        dtype = np.dtype(_NATIVE_DTYPES[kind])
        values = np.frombuffer(arr.buffers()[1], dtype=dtype, count=rows, offset=arr.offset * dtype.itemsize)
    if nulls is not None:
        values = np.where(nulls, 0, values).astype(values.dtype, copy=False)
    return values


def _varchar_body(arr: pa.Array, nulls: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Sizes (0 at null positions) and the UTF-8 bytes of the non-null rows, concatenated."""
    if len(arr) == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.uint8)
    offsets = _offsets(arr)
    sizes = np.diff(offsets)
    start, end = int(offsets[0]), int(offsets[-1])
    data_buffer = arr.buffers()[2]
    data = (
        np.frombuffer(data_buffer, dtype=np.uint8, count=end - start, offset=start)
        if end > start
        else np.empty(0, dtype=np.uint8)
    )
    if nulls is not None:
        if sizes[nulls].any():  # Arrow allows bytes behind a null slot; they must not be sent
            data = data[np.repeat(~nulls, sizes)]
        sizes = np.where(nulls, 0, sizes)
    return sizes, data


def _offsets(arr: pa.Array) -> np.ndarray:
    dtype = np.dtype(np.int64 if pat.is_large_string(arr.type) else np.int32)
    return np.frombuffer(
        arr.buffers()[1], dtype=dtype, count=len(arr) + 1, offset=arr.offset * dtype.itemsize
    )


# Sizing ---------------------------------------------------------------------------------------


def encoded_row_sizes(
    arrays: Sequence[pa.Array | pa.ChunkedArray], column_types: Sequence[ColumnType]
) -> np.ndarray:
    """Per row, an upper bound of the bytes its values add to the encoded blocks of `arrays`,
    columns of `column_types` as read from storage (before `to_connector_array`): the value slot
    of the connector type, or a varchar's size and bytes (binary counts twice, as hex), plus a
    `nulls` byte in columns that have nulls. Vectorised over the Arrow buffers."""
    if not arrays or len(arrays) != len(column_types):
        raise ValueError("need one column type per array, and at least one array")
    total = np.zeros(len(arrays[0]), dtype=np.int64)
    for arr, column_type in zip(arrays, column_types, strict=True):
        if len(arr) != len(total):
            raise ValueError("columns differ in length")
        kind = connector_type(column_type)
        if kind is ConnectorType.VARCHAR:
            lengths = pc.fill_null(pc.binary_length(arr), 0).to_numpy().astype(np.int64)
            total += 4 + lengths * (2 if column_type.kind is TypeKind.BINARY else 1)
        else:
            total += np.dtype(_WIRE_DTYPES[_LAYOUTS[kind].values_ttype]).itemsize
        if arr.null_count:
            total += 1
    return total


def rows_within(
    arrays: Sequence[pa.Array | pa.ChunkedArray],
    column_types: Sequence[ColumnType],
    max_bytes: int,
    reserve_bytes: int = 4096,
) -> int:
    """How many leading rows of `arrays` (as for `encoded_row_sizes`) fit a reply of `max_bytes`,
    keeping `reserve_bytes` for the frame, the message header and the paging token. 0 when not
    even the first row fits."""
    budget = max_bytes - reserve_bytes - _PAGE_OVERHEAD - _BLOCK_OVERHEAD * len(arrays)
    if budget <= 0:
        return 0
    cumulative = np.cumsum(encoded_row_sizes(arrays, column_types))
    return int(np.searchsorted(cumulative, budget, side="right"))


# Decoding -------------------------------------------------------------------------------------


def block_connector_type(block: idl.Block) -> ConnectorType:
    """The connector type of a generated `Block`; `ThriftRequestError` unless exactly one member
    is set, or if it is a member lakeprune does not decode (json, HyperLogLog, array(bigint))."""
    present = [kind for kind, layout in _LAYOUTS.items() if getattr(block, layout.member) is not None]
    unsupported = [name for name in _UNSUPPORTED_MEMBERS if getattr(block, name) is not None]
    if len(present) + len(unsupported) != 1:
        raise ThriftRequestError(
            f"a block must have exactly one data member, got {len(present) + len(unsupported)}"
        )
    if unsupported:
        raise ThriftRequestError(f"lakeprune does not decode {unsupported[0]} blocks")
    return present[0]


def block_row_count(block: idl.Block) -> int:
    """The number of rows of a generated `Block` (nulls count if present, else values)."""
    layout = _LAYOUTS[block_connector_type(block)]
    member = getattr(block, layout.member)
    return _row_count(member.nulls, getattr(member, layout.values))


def decode_block(block: idl.Block, column_type: ColumnType) -> pa.Array:
    """A generated `Block` holding values of `column_type`'s connector type as an Arrow array of
    that type; `ThriftRequestError` for another type or for inconsistent lists."""
    kind = block_connector_type(block)
    expected = connector_type(column_type)
    if kind is not expected:
        raise ThriftRequestError(
            f"expected a {expected.sql} block for a {column_type} column, got {kind.sql}"
        )
    layout = _LAYOUTS[kind]
    member = getattr(block, layout.member)
    values = getattr(member, layout.values)
    rows = _row_count(member.nulls, values)
    nulls = np.zeros(rows, dtype=bool) if member.nulls is None else np.asarray(member.nulls, dtype=bool)
    mask = nulls if nulls.any() else None
    if kind is ConnectorType.VARCHAR:
        return _decode_varchar(nulls, values, member.bytes, rows, mask)
    dtype = _NATIVE_DTYPES[kind]
    body = np.zeros(rows, dtype=dtype) if values is None else np.asarray(values, dtype=dtype)
    return pa.array(body, type=kind.arrow_type, mask=mask)


def decode_values(block: idl.Block, column_type: ColumnType) -> list[EngineValue | None]:
    """The rows of a generated `Block` as the engine's Python values (`None` for NULL)."""
    arr = decode_block(block, column_type)
    kind = arrow_connector_type(arr.type)
    if kind in (ConnectorType.DATE, ConnectorType.TIMESTAMP):
        arr = arr.cast(pa.int32() if kind is ConnectorType.DATE else pa.int64())
    values: list[EngineValue | None] = arr.to_pylist()
    return values


def _row_count(nulls: list[bool] | None, values: list[Any] | None) -> int:
    if nulls is not None and values is not None and len(nulls) != len(values):
        raise ThriftRequestError(f"block has {len(nulls)} nulls but {len(values)} values")
    if nulls is not None:
        return len(nulls)
    return 0 if values is None else len(values)


def _decode_varchar(
    nulls: np.ndarray, sizes: list[int] | None, data: bytes | None, rows: int, mask: np.ndarray | None
) -> pa.Array:
    lengths = np.zeros(rows, dtype=np.int64) if sizes is None else np.asarray(sizes, dtype=np.int64)
    if (lengths < 0).any():
        raise ThriftRequestError("varchar block has a negative size")
    lengths = np.where(nulls, 0, lengths)
    payload = data or b""
    if int(lengths.sum()) != len(payload):
        raise ThriftRequestError(
            f"varchar block sizes add up to {int(lengths.sum())} bytes but it holds {len(payload)}"
        )
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    validity = None if mask is None else pa.array(~mask).buffers()[1]
    arr = pa.Array.from_buffers(
        pa.large_string(),
        rows,
        [validity, pa.py_buffer(offsets), pa.py_buffer(payload)],
        0 if mask is None else int(mask.sum()),
    )
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid as exc:
        raise ThriftRequestError(f"varchar block is not valid UTF-8: {exc}") from exc
    return arr.cast(pa.string()) if len(payload) <= _MAX_I32 else arr
