"""The two Thrift transports the connector serves, as frames of bytes: FRAMED (Trino's default: a
4-byte big-endian length, then the message) and HEADER (Presto's default: the same length, then the
magic 0x0FFF and a header around the message). A HEADER frame is unwrapped, and its reply wrapped,
with Apache Thrift's `THeaderTransport` on in-memory buffers, echoing the request's sequence id
and flags; only the binary protocol is accepted inside it. A frame longer than the server's maximum,
an empty one, a negative length (an unframed client) or a HEADER frame that does not decode is the
peer's error (`PeerError`), which costs the peer its connection. Reading the bytes off a socket is
`connections`'; this module only looks at them."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from thrift.transport.THeaderTransport import THeaderClientType, THeaderSubprotocolID, THeaderTransport
from thrift.transport.TTransport import HARD_MAX_FRAME_SIZE, TMemoryBuffer

from pruner.bounded import shorten
from pruner.thrift.connections import PeerError

LENGTH_PREFIX = struct.Struct(">i")
"""The length word in front of every frame, of either transport."""

_HEADER_MAGIC = b"\x0f\xff"


@dataclass(frozen=True)
class HeaderFrame:
    """What a HEADER reply must echo from its request's frame."""

    sequence_id: int
    flags: int


def frame_size(prefix: bytes, max_frame_size: int) -> int:
    """The size a frame's length prefix announces; `PeerError` unless 0 < size <= `max_frame_size`."""
    size: int
    (size,) = LENGTH_PREFIX.unpack(prefix)
    if size < 0:
        raise PeerError("not a framed message (unframed transports are not supported; use FRAMED or HEADER)")
    if size > max_frame_size:
        raise PeerError(f"frame of {size} bytes exceeds the maximum frame size of {max_frame_size}")
    if size == 0:
        raise PeerError("empty frame")
    return size


def unwrap(prefix: bytes, frame: bytes, max_frame_size: int) -> tuple[bytes, HeaderFrame | None]:
    """The message in a frame (`frame`, read after its length `prefix`), and what its reply must echo
    when it came in a HEADER frame (None: FRAMED)."""
    if not frame.startswith(_HEADER_MAGIC):
        return frame, None
    transport = THeaderTransport(TMemoryBuffer(prefix + frame), [THeaderClientType.HEADERS])
    transport.set_max_frame_size(max_frame_size)
    try:
        transport.readFrame(0)
    except Exception as exc:  # TTransportException, TApplicationException (unknown transform)
        raise PeerError(f"bad HEADER frame: {shorten(exc)}") from exc
    if transport.protocol_id != THeaderSubprotocolID.BINARY:
        raise PeerError(f"HEADER frame with protocol {transport.protocol_id}; only binary is served")
    payload: bytes = transport.cstringio_buf.read()
    return payload, HeaderFrame(transport.sequence_id, transport.flags)


def wrap(message: list[bytes], header: HeaderFrame | None) -> bytes:
    """One whole frame holding the message (its parts joined), in the transport its request came in.
    The size is not checked here: the caller compares it with the maximum."""
    if header is None:
        return b"".join([LENGTH_PREFIX.pack(sum(len(part) for part in message)), *message])
    buffer = TMemoryBuffer()
    transport = THeaderTransport(buffer, [THeaderClientType.HEADERS])
    transport.set_max_frame_size(HARD_MAX_FRAME_SIZE - 1)  # the size is checked by the caller
    transport.sequence_id = header.sequence_id
    transport.flags = header.flags
    for part in message:
        transport.write(part)
    transport.flush()
    framed: bytes = buffer.getvalue()
    return framed
