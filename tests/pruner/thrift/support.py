"""Helpers for the Thrift tests: decode bytes with the generated classes (pure-Python or
accelerated binary protocol), build the engine's blocks, markers, ranges and domains, and speak the
framed protocol on a raw socket (a message, a frame, a reply)."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

import pyarrow as pa
from thrift.protocol.TBinaryProtocol import TBinaryProtocol, TBinaryProtocolAccelerated
from thrift.Thrift import TApplicationException
from thrift.transport.TSocket import TSocket
from thrift.transport.TTransport import TFramedTransport, TMemoryBuffer

from pruner.thrift import idl
from pruner.thrift.blocks import encode_block
from pruner.thrift.endpoint import ThriftEndpoint

T = TypeVar("T")
_LIMIT = 1 << 30
SOCKET_TIMEOUT = 5.0


def thrift_decode(data: bytes, struct: type[T], accelerated: bool = True) -> T:
    """`data` read as one `struct` with the generated code; every byte must be consumed."""
    transport = TMemoryBuffer(data)
    protocol = (
        TBinaryProtocolAccelerated(transport, string_length_limit=_LIMIT, container_length_limit=_LIMIT)
        if accelerated
        else TBinaryProtocol(transport)
    )
    value: Any = struct()
    value.read(protocol)
    assert transport.cstringio_buf.read() == b"", "trailing bytes after the struct"
    decoded: T = value
    return decoded


def thrift_encode(value: Any) -> bytes:
    transport = TMemoryBuffer()
    value.write(TBinaryProtocolAccelerated(transport))
    encoded: bytes = transport.getvalue()
    return encoded


def block(values: list[Any], arrow_type: pa.DataType) -> idl.Block:
    """A generated `Block` holding `values` of a connector Arrow type."""
    return thrift_decode(encode_block(pa.array(values, arrow_type)), idl.Block)


def marker(value: Any, arrow_type: pa.DataType, bound: int) -> idl.Marker:
    return idl.Marker(value=None if value is None else block([value], arrow_type), bound=bound)


def thrift_range(low: Any, low_bound: int, high: Any, high_bound: int, arrow_type: pa.DataType) -> idl.Range:
    return idl.Range(low=marker(low, arrow_type, low_bound), high=marker(high, arrow_type, high_bound))


def ranges_domain(*ranges: idl.Range, null_allowed: bool = False) -> idl.Domain:
    return idl.Domain(
        valueSet=idl.ValueSet(rangeValueSet=idl.RangeValueSet(ranges=list(ranges))), nullAllowed=null_allowed
    )


def equatable_domain(
    values: list[Any], arrow_type: pa.DataType, inclusive: bool = True, null_allowed: bool = False
) -> idl.Domain:
    value_set = idl.EquatableValueSet(inclusive=inclusive, values=[block([v], arrow_type) for v in values])
    return idl.Domain(valueSet=idl.ValueSet(equatableValueSet=value_set), nullAllowed=null_allowed)


def all_or_none_domain(all_: bool, null_allowed: bool) -> idl.Domain:
    value_set = idl.ValueSet(allOrNoneValueSet=idl.AllOrNoneValueSet(all=all_))
    return idl.Domain(valueSet=value_set, nullAllowed=null_allowed)


@contextmanager
def sidecar_client(warehouses: Mapping[str, str]) -> Iterator[Any]:
    """A generated Thrift client over framed TCP to the Thrift endpoint of a sidecar serving
    `warehouses` (schema -> root), as `lakeprune serve` runs it; stopped on exit."""
    with thrift_sidecar(warehouses) as (client, _):
        yield client


@contextmanager
def thrift_sidecar(warehouses: Mapping[str, str]) -> Iterator[tuple[Any, ThriftEndpoint]]:
    """`sidecar_client`, and the endpoint it talks to (for tests that look inside)."""
    from pruner.metadata.cache import IndexCache
    from pruner.serving.catalog import Catalog
    from pruner.serving.config import ServeConfig
    from pruner.serving.metrics import Metrics

    config = ServeConfig(warehouses, grpc_port=None, thrift_port=0, metrics_port=None)
    cache = IndexCache(config.cache_bytes)
    endpoint = ThriftEndpoint(config, Catalog(config.warehouses, cache), Metrics(cache))
    transport = TFramedTransport(TSocket("127.0.0.1", endpoint.start()))
    transport.open()
    try:
        yield idl.Service.Client(TBinaryProtocolAccelerated(transport)), endpoint
    finally:
        transport.close()
        endpoint.stop(1)


# Raw framed protocol ----------------------------------------------------------------------------


def raw_socket(port: int, timeout: float = SOCKET_TIMEOUT) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)


def message(name: str, seqid: int, args: Any, message_type: int = idl.TMessageType.CALL) -> bytes:
    buffer = TMemoryBuffer()
    protocol = TBinaryProtocol(buffer)
    protocol.writeMessageBegin(name, message_type, seqid)
    args.write(protocol)
    protocol.writeMessageEnd()
    body: bytes = buffer.getvalue()
    return body


def framed(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


def read_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def read_reply(sock: socket.socket) -> tuple[str, int, int, Any]:
    """The next reply on `sock`: method name, message type, seqid and the decoded result struct
    (a `TApplicationException` for an EXCEPTION message)."""
    (size,) = struct.unpack(">i", read_exactly(sock, 4))
    protocol = TBinaryProtocol(TMemoryBuffer(read_exactly(sock, size)))
    name, message_type, seqid = protocol.readMessageBegin()
    method = name.removeprefix("presto").removeprefix("trino")
    value: Any = (
        TApplicationException()
        if message_type == idl.TMessageType.EXCEPTION
        else getattr(idl.Service, f"trino{method}_result")()
    )
    value.read(protocol)
    return name, message_type, seqid, value


def args(method: str, **fields: Any) -> Any:
    return getattr(idl.Service, f"trino{method}_args")(**fields)


# Reading what the connector serves -----------------------------------------------------------


def rows(
    client: Any, split: idl.Split, columns: list[str], max_bytes: int = 1 << 20
) -> tuple[list[list[Any]], int]:
    """Decoded column values of every page of a split, and the number of pages."""
    values: list[list[Any]] = [[] for _ in columns]
    token, pages = None, 0
    while True:
        page = client.trinoGetRows(split.splitId, columns, max_bytes, idl.NullableToken(token))
        pages += 1
        for i, block in enumerate(page.columnBlocks):
            values[i] += decode(block, page.rowCount)
        if page.nextToken is None:
            return values, pages
        token = page.nextToken


FIXED = {
    "integerData": "ints",
    "bigintData": "longs",
    "doubleData": "doubles",
    "booleanData": "booleans",
    "dateData": "dates",
    "timestampData": "timestamps",
}


def decode(block: idl.Block, count: int) -> list[Any]:
    """Python values of a block (the test's own reading of the wire format)."""
    for member, field in FIXED.items():
        data = getattr(block, member)
        if data is not None:
            nulls = data.nulls or [False] * count
            values = getattr(data, field) or [None] * count
            return [None if n else v for n, v in zip(nulls, values, strict=True)]
    data = block.varcharData
    nulls, sizes, raw = data.nulls or [False] * count, data.sizes or [0] * count, data.bytes or b""
    out, offset = [], 0
    for is_null, size in zip(nulls, sizes, strict=True):
        out.append(None if is_null else raw[offset : offset + size].decode())
        offset += 0 if is_null else size
    return out


def bigint_range(column: str, low: int, high: int) -> idl.TupleDomain:
    def marker(value: int) -> idl.Marker:
        return idl.Marker(idl.Block(bigintData=idl.Bigint(None, [value])), idl.Bound.EXACTLY)

    value_set = idl.ValueSet(rangeValueSet=idl.RangeValueSet([idl.Range(marker(low), marker(high))]))
    return idl.TupleDomain({column: idl.Domain(value_set, False)})
