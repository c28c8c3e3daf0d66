"""Thrift messages in the strict binary protocol, the unit inside a frame: reading a call's message
header (a message that is not strict binary, or not a CALL, is the peer's error, `PeerError`) and
encoding what goes back: a REPLY or EXCEPTION carrying a generated struct, a REPLY whose `success`
field is a `PageResult` already encoded (`blocks.encode_page_result`) and spliced in as it is, and a
`TApplicationException` whose message is one bounded line (`pruner.bounded`). An encoded
message is a list of byte strings, so that spliced bytes are never copied before the frame is
built (`transports.wrap`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport.TTransport import TMemoryBuffer

from pruner.bounded import MESSAGE_CHARS, shorten
from pruner.thrift import idl
from pruner.thrift.connections import PeerError
from pruner.thrift.transports import HeaderFrame


@dataclass(frozen=True)
class Request:
    """A call read off a connection, its arguments not yet decoded."""

    name: str
    seqid: int
    reader: TBinaryProtocolAccelerated  # positioned after the message header
    header: HeaderFrame | None  # None: FRAMED


def read_call(payload: bytes, header: HeaderFrame | None, limit: int) -> Request:
    """The call a frame's message holds; strings and containers in it are at most `limit` long."""
    reader = TBinaryProtocolAccelerated(
        TMemoryBuffer(payload), strictRead=True, string_length_limit=limit, container_length_limit=limit
    )
    try:
        name, message_type, seqid = reader.readMessageBegin()
    except Exception as exc:  # TProtocolException, EOFError, UnicodeDecodeError, ...
        raise PeerError(f"not a strict binary-protocol message: {shorten(exc)}") from exc
    if message_type != idl.TMessageType.CALL:
        raise PeerError(f"message type {message_type} for {shorten(name)!r}; only calls are served")
    return Request(name, seqid, reader, header)


def _message_prefix(
    name: str, message_type: int, seqid: int
) -> tuple[TMemoryBuffer, TBinaryProtocolAccelerated]:
    buffer = TMemoryBuffer()
    writer = TBinaryProtocolAccelerated(buffer)
    writer.writeMessageBegin(name, message_type, seqid)
    return buffer, writer


def encode_struct(name: str, message_type: int, seqid: int, value: Any) -> list[bytes]:
    """A message carrying one generated struct (a method's result, an exception)."""
    buffer, writer = _message_prefix(name, message_type, seqid)
    value.write(writer)
    writer.writeMessageEnd()
    return [buffer.getvalue()]


def encode_page_reply(name: str, seqid: int, success_field: int, page: bytes) -> list[bytes]:
    """A REPLY whose result field `success` (id `success_field`) holds pre-encoded `PageResult`
    bytes."""
    buffer, writer = _message_prefix(name, idl.TMessageType.REPLY, seqid)
    writer.writeStructBegin("result")
    writer.writeFieldBegin("success", idl.TType.STRUCT, success_field)
    prefix = buffer.getvalue()
    suffix = TMemoryBuffer()
    TBinaryProtocolAccelerated(suffix).writeFieldStop()
    return [prefix, page, suffix.getvalue()]


def application_error(name: str, seqid: int, kind: int, message: str) -> list[bytes]:
    """A `TApplicationException` of `kind` (one of its constants), with the first line of `message`."""
    error = idl.TApplicationException(kind, one_line(message))
    return encode_struct(name, idl.TMessageType.EXCEPTION, seqid, error)


def one_line(text: str) -> str:
    """The first line of a message for the engine, bounded."""
    return shorten(text.strip().partition("\n")[0], MESSAGE_CHARS)
