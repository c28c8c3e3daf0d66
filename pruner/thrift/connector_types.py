"""The one mapping from lakeprune column types to the Thrift connector's types. Trino's Thrift
connector (368 and 476 alike; the end-to-end suite runs on 476) and Presto's decode only integer,
bigint, double, varchar, boolean, date and timestamp(3) (plus json, HyperLogLog and array(bigint),
which lakeprune never produces; lakeprune has no nested or array columns), so every column type
maps onto one of those:

| lakeprune              | connector      | values                                                |
|------------------------|----------------|-------------------------------------------------------|
| tinyint, smallint, int | `integer`      | exact                                                 |
| bigint                 | `bigint`       | exact                                                 |
| float                  | `double`       | exact widening of the float32 value                   |
| double                 | `double`       | exact                                                 |
| decimal(p,s)           | `double`       | the nearest double (correctly rounded): digits beyond |
|                        |                | ~15-17 significant digits are lost                    |
| string                 | `varchar`      | exact                                                 |
| binary                 | `varchar`      | the bytes as lowercase hex (`X'0aff'` -> `'0aff'`)     |
| boolean                | `boolean`      | exact                                                 |
| date                   | `date`         | exact (days since 1970-01-01)                         |
| timestamp (UTC, µs)    | `timestamp(3)` | milliseconds, floored toward -infinity; Trino's       |
|                        |                | timestamp(3) has no time zone, so the engine shows    |
|                        |                | the UTC wall-clock time                               |

`to_connector_array` converts an Arrow column to the Arrow type of its connector type
(`ConnectorType.arrow_type`), vectorised, which is exactly what `blocks.encode_block` takes;
`from_connector_array` is its inverse for the exact mappings (`is_exact`), e.g. for the keys of an
index lookup, and `comment` explains a changed representation in the column metadata. Where
the mapping loses precision (decimal, timestamp) or changes the representation (binary), an engine
predicate on the connector value does not translate exactly back to the column: `domains` widens
those, so pruning never loses a row the engine would have kept."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto
from typing import assert_never

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.types as pat

from pruner.errors import InvalidSchemaError, SchemaMismatchError
from pruner.types import ColumnType, TypeKind, can_write, from_arrow


class ConnectorType(Enum):
    """A type of the Thrift connector; the value is its SQL type name."""

    INTEGER = "integer"
    BIGINT = "bigint"
    DOUBLE = "double"
    VARCHAR = "varchar"
    BOOLEAN = "boolean"
    DATE = "date"
    TIMESTAMP = "timestamp(3)"

    @property
    def sql(self) -> str:
        """The SQL type string sent in `ColumnMetadata.type`."""
        return self.value

    @property
    def arrow_type(self) -> pa.DataType:
        """The Arrow type of a `to_connector_array` result (varchar may also be `large_string`
        for a column holding 2 GiB or more)."""
        return _ARROW_TYPES[self]


_ARROW_TYPES: dict[ConnectorType, pa.DataType] = {
    ConnectorType.INTEGER: pa.int32(),
    ConnectorType.BIGINT: pa.int64(),
    ConnectorType.DOUBLE: pa.float64(),
    ConnectorType.VARCHAR: pa.string(),
    ConnectorType.BOOLEAN: pa.bool_(),
    ConnectorType.DATE: pa.date32(),
    ConnectorType.TIMESTAMP: pa.timestamp("ms"),
}

_HEX_DIGITS = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
# Row i holds the two lowercase hex digits of byte value i.
_HEX_TABLE = np.stack([_HEX_DIGITS[np.arange(256) >> 4], _HEX_DIGITS[np.arange(256) & 15]], axis=1)
_MAX_INT32_OFFSET = 2**31 - 1
# Value of each lowercase hex digit by its ASCII code (other codes never reach the lookup).
_NIBBLES = np.zeros(256, dtype=np.uint8)
_NIBBLES[_HEX_DIGITS] = np.arange(16, dtype=np.uint8)


class _Conversion(Enum):
    """How `to_connector_array` turns column values into connector values."""

    CAST = auto()  # an Arrow cast: the connector value is the column value
    NEAREST_DOUBLE = auto()  # decimal: the correctly rounded double (lossy)
    HEX = auto()  # binary: lowercase hex digits
    MILLIS = auto()  # timestamp: microseconds floored to milliseconds (lossy)

    @property
    def exact(self) -> bool:
        """Whether the connector value determines the column value."""
        match self:
            case _Conversion.CAST | _Conversion.HEX:
                return True
            case _Conversion.NEAREST_DOUBLE | _Conversion.MILLIS:
                return False
            case unknown:
                assert_never(unknown)


@dataclass(frozen=True)
class _Sent:
    """How a column of one kind travels to the engine (a row of the module's table)."""

    connector: ConnectorType
    conversion: _Conversion
    comment: str | None  # the engine column's comment, `{type}` standing for the column type


def _sent(kind: TypeKind) -> _Sent:
    match kind:
        case TypeKind.TINYINT | TypeKind.SMALLINT:
            return _Sent(ConnectorType.INTEGER, _Conversion.CAST, "lakeprune {type}")
        case TypeKind.INT:
            return _Sent(ConnectorType.INTEGER, _Conversion.CAST, None)
        case TypeKind.BIGINT:
            return _Sent(ConnectorType.BIGINT, _Conversion.CAST, None)
        case TypeKind.FLOAT:
            return _Sent(ConnectorType.DOUBLE, _Conversion.CAST, "lakeprune {type}")
        case TypeKind.DOUBLE:
            return _Sent(ConnectorType.DOUBLE, _Conversion.CAST, None)
        case TypeKind.DECIMAL:
            comment = "lakeprune {type}, sent as the nearest double"
            return _Sent(ConnectorType.DOUBLE, _Conversion.NEAREST_DOUBLE, comment)
        case TypeKind.STRING:
            return _Sent(ConnectorType.VARCHAR, _Conversion.CAST, None)
        case TypeKind.BINARY:
            return _Sent(ConnectorType.VARCHAR, _Conversion.HEX, "lakeprune binary, sent as lowercase hex")
        case TypeKind.BOOLEAN:
            return _Sent(ConnectorType.BOOLEAN, _Conversion.CAST, None)
        case TypeKind.DATE:
            return _Sent(ConnectorType.DATE, _Conversion.CAST, None)
        case TypeKind.TIMESTAMP:
            comment = "lakeprune timestamp (UTC, microseconds), sent as UTC milliseconds"
            return _Sent(ConnectorType.TIMESTAMP, _Conversion.MILLIS, comment)
        case unknown:
            assert_never(unknown)


_SENT = {kind: _sent(kind) for kind in TypeKind}


def connector_type(column_type: ColumnType) -> ConnectorType:
    """The connector type that represents `column_type` (the table above)."""
    return _SENT[column_type.kind].connector


def sql_type(column_type: ColumnType, engine: str = "trino") -> str:
    """The SQL type string `engine` ("trino" or "presto") sees for a column of `column_type`:
    Presto 0.287 has no timestamp precision and calls timestamp(3) `timestamp`."""
    kind = connector_type(column_type)
    return "timestamp" if engine == "presto" and kind is ConnectorType.TIMESTAMP else kind.sql


def is_exact(column_type: ColumnType) -> bool:
    """Whether a connector value determines the column value (all but decimal and timestamp)."""
    return _SENT[column_type.kind].conversion.exact


def comment(column_type: ColumnType) -> str | None:
    """A column comment for the engine when the connector type is not the column's own type."""
    text = _SENT[column_type.kind].comment
    return None if text is None else text.format(type=column_type)


def to_connector_array(arr: pa.Array, column_type: ColumnType) -> pa.Array:
    """`arr` (values of `column_type`, or of a narrower type that `can_write` into it) as an array
    of `connector_type(column_type).arrow_type`, with the same nulls; vectorised throughout.
    `SchemaMismatchError` if the array's type does not fit the column type."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not pat.is_null(arr.type):
        _check_fits(arr.type, column_type)
    target = connector_type(column_type)
    if pat.is_null(arr.type) or len(arr) == 0:
        return pa.nulls(len(arr), target.arrow_type)
    match _SENT[column_type.kind].conversion:
        case _Conversion.NEAREST_DOUBLE:
            # Through the shortest decimal string: Arrow's string-to-double parser rounds correctly,
            # its direct decimal-to-double cast can be off by 2 ulps. `domains` relies on correct
            # rounding when it widens double bounds on decimal columns.
            return pc.cast(pc.cast(arr, pa.string()), pa.float64())
        case _Conversion.HEX:
            return _lowercase_hex(arr)
        case _Conversion.MILLIS:
            return _timestamp_millis(arr)
        case _Conversion.CAST:
            if target is ConnectorType.VARCHAR and pat.is_large_string(arr.type):
                return arr
            return pc.cast(arr, target.arrow_type)
        case unknown:
            assert_never(unknown)


def _check_fits(arrow_type: pa.DataType, column_type: ColumnType) -> None:
    try:
        source = from_arrow(arrow_type)
    except InvalidSchemaError as exc:  # nested and unsigned types
        raise SchemaMismatchError(f"cannot send Arrow type {arrow_type} as a {column_type} column") from exc
    if not can_write(source, column_type):
        raise SchemaMismatchError(f"cannot send {source} values as a {column_type} column")


def _validity(arr: pa.Array) -> pa.Buffer | None:
    """A validity bitmap for `arr` starting at bit 0, or `None` when it has no nulls."""
    if arr.null_count == 0:
        return None
    valid: pa.Buffer = arr.is_valid().buffers()[1]
    return valid


def _timestamp_millis(arr: pa.Array) -> pa.Array:
    unit = arr.type.unit
    raw = np.frombuffer(arr.buffers()[1], dtype=np.int64, count=len(arr), offset=arr.offset * 8)
    if unit == "ns":
        millis = np.floor_divide(raw, 1_000_000)
    elif unit == "us":
        millis = np.floor_divide(raw, 1_000)
    elif unit == "ms":
        millis = raw
    else:  # seconds
        millis = raw * 1_000
    return pa.Array.from_buffers(
        pa.timestamp("ms"),
        len(arr),
        [_validity(arr), pa.py_buffer(np.ascontiguousarray(millis))],
        arr.null_count,
    )


def _lowercase_hex(arr: pa.Array) -> pa.Array:
    if not (pat.is_binary(arr.type) or pat.is_large_binary(arr.type)):
        arr = pc.cast(arr, pa.large_binary())
    offset_type = np.int64 if pat.is_large_binary(arr.type) else np.int32
    _, offsets_buffer, data_buffer = arr.buffers()
    offsets = np.frombuffer(
        offsets_buffer,
        dtype=offset_type,
        count=len(arr) + 1,
        offset=arr.offset * np.dtype(offset_type).itemsize,
    ).astype(np.int64)
    start, end = int(offsets[0]), int(offsets[-1])
    data = (
        np.frombuffer(data_buffer, dtype=np.uint8, count=end - start, offset=start)
        if end > start
        else np.empty(0, dtype=np.uint8)
    )
    hex_data = _HEX_TABLE[data].reshape(-1)
    hex_offsets = (offsets - start) * 2
    large = int(hex_offsets[-1]) > _MAX_INT32_OFFSET
    out_type = pa.large_string() if large else pa.string()
    out_offsets = hex_offsets if large else hex_offsets.astype(np.int32)
    return pa.Array.from_buffers(
        out_type,
        len(arr),
        [_validity(arr), pa.py_buffer(out_offsets), pa.py_buffer(hex_data)],
        arr.null_count,
    )


def from_connector_array(arr: pa.Array, column_type: ColumnType) -> pa.Array:
    """The column values whose connector values are `arr` (of `connector_type(column_type)`), as
    an array of `column_type.to_arrow()`; null where no column value maps to the engine's value (an
    integer out of the column's range, a double that is no float32, a string that is no lowercase
    hex). Only for exact mappings (`is_exact`): `ValueError` for decimal and timestamp."""
    if not is_exact(column_type):
        raise ValueError(f"{column_type} is sent with loss of precision; translate its values with domains")
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    target = column_type.to_arrow()
    if (bounds := column_type.kind.integer_bounds) is not None:
        outside = pc.or_(pc.less(arr, bounds[0]), pc.greater(arr, bounds[1]))
        return pc.cast(pc.if_else(outside, pa.scalar(None, arr.type), arr), target)
    if column_type.kind is TypeKind.FLOAT:
        narrowed = pc.cast(arr, pa.float32(), safe=False)
        exact = pc.equal(pc.cast(narrowed, pa.float64()), arr)
        return pc.if_else(exact, narrowed, pa.scalar(None, pa.float32()))
    if _SENT[column_type.kind].conversion is _Conversion.HEX:
        return _from_lowercase_hex(arr)
    return pc.cast(arr, target)


def _from_lowercase_hex(arr: pa.Array) -> pa.Array:
    valid = pc.fill_null(pc.match_substring_regex(arr, "^(?:[0-9a-f]{2})*$"), False)
    text = pc.cast(pc.if_else(valid, arr, pa.scalar(None, arr.type)), pa.large_string())
    offsets = np.frombuffer(text.buffers()[1], dtype=np.int64, count=len(text) + 1, offset=text.offset * 8)
    sizes = np.diff(offsets)
    keep = np.asarray(valid.to_numpy(zero_copy_only=False), dtype=bool)
    start, end = int(offsets[0]), int(offsets[-1])
    digits = (
        np.frombuffer(text.buffers()[2], dtype=np.uint8, count=end - start, offset=start)
        if end > start
        else np.empty(0, dtype=np.uint8)
    )
    digits = digits[np.repeat(keep, sizes)]  # drop bytes behind rows that are not valid hex
    nibbles = _NIBBLES[digits]
    data = (nibbles[0::2] << 4) | nibbles[1::2]
    byte_offsets = np.concatenate([[0], np.cumsum(np.where(keep, sizes, 0) // 2)]).astype(np.int64)
    return pa.Array.from_buffers(
        pa.large_binary(),
        len(text),
        [_validity(text), pa.py_buffer(byte_offsets), pa.py_buffer(data.astype(np.uint8))],
        text.null_count,
    ).cast(pa.binary())
