"""The TCP server of the Thrift connector. Each connection has a reader thread that reads frames (a
4-byte big-endian length, at most `max_frame_size` bytes: a larger frame is logged and the
connection closed) and recognises both transports in use: FRAMED (Trino's default) and HEADER
(Presto's default, magic 0x0FFF after the length; unwrapped and rewrapped with Apache Thrift's
`THeaderTransport` on in-memory buffers, echoing the frame's sequence id and flags). Each request,
a strict binary-protocol message, goes to a shared thread pool, so several requests in flight on one
connection run concurrently (at most `max_in_flight_per_connection`; beyond that the reader waits);
each reply is written as one whole frame, in the request's transport, under the connection's write
lock, with the request's seqid. Method names lose their `trino` or `presto` prefix and go to a
`ConnectorService`. A failed call is answered as the sidecar's one error map
(`pruner.serving.errors.classify`) decides: UNAVAILABLE (storage trouble) becomes the method's
retryable `ServiceException`, any other request error a final one, and INTERNAL (a bug) is logged
with its traceback and answered with `INTERNAL_ERROR`, no internals included; an unknown method is
`TApplicationException(UNKNOWN_METHOD)` and a request that does not decode `PROTOCOL_ERROR`. The
server keeps serving in every case. Connections (`connections.Connection`) are bounded: at most
`limits.max_connections` are open (more are closed at once, counted, and logged at most once a
minute), an idle one or one whose frame stalls is closed, and a frame is read as its bytes arrive,
never reserved from its length. Text from the caller is shortened in every message and log line
(`pruner.serving.bounded`). `get_rows` may return the bytes of a `PageResult`
(`blocks.encode_page_result`), which are spliced into the reply as they are."""

from __future__ import annotations

import contextlib
import logging
import socket
import struct
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport.THeaderTransport import THeaderClientType, THeaderSubprotocolID, THeaderTransport
from thrift.transport.TTransport import HARD_MAX_FRAME_SIZE, TMemoryBuffer

from pruner.serving.bounded import MESSAGE_CHARS, shorten
from pruner.serving.errors import Failure, Status, classify
from pruner.thrift import idl
from pruner.thrift.connections import (
    Connection,
    ConnectionLimits,
    ConnectionStats,
    FrameTimeoutError,
    IdleTimeoutError,
    PeerError,
)
from pruner.thrift.errors import ThriftRequestError

_log = logging.getLogger(__name__)

DEFAULT_MAX_FRAME_SIZE = 16 * 1024 * 1024
"""Drift's default on both engines (`trino.thrift.client.max-frame-size`)."""

_LENGTH = struct.Struct(">i")
_HEADER_MAGIC = b"\x0f\xff"
_METHOD_PREFIXES = ("trino", "presto")
_ACCEPT_POLL_SECONDS = 0.2
_REFUSAL_LOG_SECONDS = 60.0  # at most one log line per minute about refused connections


class ConnectorService(Protocol):
    """What the server calls, one method per Thrift method, with the decoded (generated) argument
    structs. A `Nullable*` argument absent on the wire arrives as its empty wrapper (= null); any
    other absent argument is refused before the call. Methods are called concurrently from the
    server's worker threads. Raise `LakepruneError` for a request that cannot be served (or the
    method's `ServiceException` to choose the answer); `get_rows` may return
    `blocks.encode_page_result` bytes."""

    def list_schema_names(self) -> list[str]: ...

    def list_tables(self, schema_or_none: idl.NullableSchemaName, /) -> list[idl.SchemaTableName]: ...

    def get_table_metadata(self, schema_table_name: idl.SchemaTableName, /) -> idl.NullableTableMetadata: ...

    def get_splits(
        self,
        schema_table_name: idl.SchemaTableName,
        desired_columns: idl.NullableColumnSet,
        output_constraint: idl.TupleDomain,
        max_split_count: int,
        next_token: idl.NullableToken,
        /,
    ) -> idl.SplitBatch: ...

    def get_index_splits(
        self,
        schema_table_name: idl.SchemaTableName,
        index_column_names: list[str],
        output_column_names: list[str],
        keys: idl.PageResult,
        output_constraint: idl.TupleDomain,
        max_split_count: int,
        next_token: idl.NullableToken,
        /,
    ) -> idl.SplitBatch: ...

    def get_rows(
        self, split_id: idl.Id, columns: list[str], max_bytes: int, next_token: idl.NullableToken, /
    ) -> idl.PageResult | bytes: ...


# Methods ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Method:
    """A service method: its generated argument and result structs and how to call the handler."""

    args: type
    result: type
    call: Callable[[ConnectorService, Any], object]
    returns_page: bool = False

    @property
    def success_field(self) -> int:
        return idl.field(self.result, "success").id


def _arg(args: Any, name: str) -> Any:
    """A required argument; `ThriftRequestError` when the client left it out."""
    value = getattr(args, name)
    if value is None:
        raise ThriftRequestError(f"missing argument {name}")
    return value


def _nullable(args: Any, name: str, empty: type) -> Any:
    """A `Nullable*` argument, the empty wrapper (= null) when absent."""
    value = getattr(args, name)
    return empty() if value is None else value


_S = idl.Service
_METHODS: dict[str, _Method] = {
    "ListSchemaNames": _Method(
        _S.trinoListSchemaNames_args, _S.trinoListSchemaNames_result, lambda h, a: h.list_schema_names()
    ),
    "ListTables": _Method(
        _S.trinoListTables_args,
        _S.trinoListTables_result,
        lambda h, a: h.list_tables(_nullable(a, "schemaNameOrNull", idl.NullableSchemaName)),
    ),
    "GetTableMetadata": _Method(
        _S.trinoGetTableMetadata_args,
        _S.trinoGetTableMetadata_result,
        lambda h, a: h.get_table_metadata(_arg(a, "schemaTableName")),
    ),
    "GetSplits": _Method(
        _S.trinoGetSplits_args,
        _S.trinoGetSplits_result,
        lambda h, a: h.get_splits(
            _arg(a, "schemaTableName"),
            _nullable(a, "desiredColumns", idl.NullableColumnSet),
            _arg(a, "outputConstraint"),
            _arg(a, "maxSplitCount"),
            _nullable(a, "nextToken", idl.NullableToken),
        ),
    ),
    "GetIndexSplits": _Method(
        _S.trinoGetIndexSplits_args,
        _S.trinoGetIndexSplits_result,
        lambda h, a: h.get_index_splits(
            _arg(a, "schemaTableName"),
            _arg(a, "indexColumnNames"),
            _arg(a, "outputColumnNames"),
            _arg(a, "keys"),
            _arg(a, "outputConstraint"),
            _arg(a, "maxSplitCount"),
            _nullable(a, "nextToken", idl.NullableToken),
        ),
    ),
    "GetRows": _Method(
        _S.trinoGetRows_args,
        _S.trinoGetRows_result,
        lambda h, a: h.get_rows(
            _arg(a, "splitId"),
            _arg(a, "columns"),
            _arg(a, "maxBytes"),
            _nullable(a, "nextToken", idl.NullableToken),
        ),
        returns_page=True,
    ),
}


def _method(name: str) -> _Method | None:
    for prefix in _METHOD_PREFIXES:
        if name.startswith(prefix):
            return _METHODS.get(name[len(prefix) :])
    return None


# The engine whose call is being handled ("trino" or "presto", from the method prefix), for the few
# answers that differ between them (Presto 0.287 names Trino's timestamp(3) `timestamp`).
calling_engine: ContextVar[str] = ContextVar("calling_engine", default="trino")


# Messages --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _HeaderFrame:
    """What a HEADER reply must echo from its request's frame."""

    sequence_id: int
    flags: int


@dataclass(frozen=True)
class _Request:
    name: str
    seqid: int
    reader: TBinaryProtocolAccelerated  # positioned after the message header
    header: _HeaderFrame | None  # None: FRAMED


def _protocol(transport: TMemoryBuffer, limit: int) -> TBinaryProtocolAccelerated:
    return TBinaryProtocolAccelerated(
        transport, strictRead=True, string_length_limit=limit, container_length_limit=limit
    )


def _message_prefix(
    name: str, message_type: int, seqid: int
) -> tuple[TMemoryBuffer, TBinaryProtocolAccelerated]:
    buffer = TMemoryBuffer()
    writer = TBinaryProtocolAccelerated(buffer)
    writer.writeMessageBegin(name, message_type, seqid)
    return buffer, writer


def _encode_struct(name: str, message_type: int, seqid: int, value: Any) -> list[bytes]:
    buffer, writer = _message_prefix(name, message_type, seqid)
    value.write(writer)
    writer.writeMessageEnd()
    return [buffer.getvalue()]


def _encode_page_reply(name: str, seqid: int, method: _Method, page: bytes) -> list[bytes]:
    """A REPLY whose result field `success` holds pre-encoded `PageResult` bytes."""
    buffer, writer = _message_prefix(name, idl.TMessageType.REPLY, seqid)
    writer.writeStructBegin("result")
    writer.writeFieldBegin("success", idl.TType.STRUCT, method.success_field)
    prefix = buffer.getvalue()
    suffix = TMemoryBuffer()
    TBinaryProtocolAccelerated(suffix).writeFieldStop()
    return [prefix, page, suffix.getvalue()]


def _application_error(name: str, seqid: int, kind: int, message: str) -> list[bytes]:
    error = idl.TApplicationException(kind, _one_line(message))
    return _encode_struct(name, idl.TMessageType.EXCEPTION, seqid, error)


def _one_line(text: str) -> str:
    """The first line of a message for the engine, bounded."""
    return shorten(text.strip().partition("\n")[0], MESSAGE_CHARS)


# Server ----------------------------------------------------------------------------------------


class ThriftServer:
    """Serves a `ConnectorService` on a TCP port: `start()` binds (port 0 picks a free port) and
    returns the port, `stop(grace_seconds)` stops accepting, lets requests in flight finish and
    closes every connection. Everything it uses belongs to the instance."""

    def __init__(
        self,
        handler: ConnectorService,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        workers: int = 16,
        max_in_flight_per_connection: int = 64,
        executor: ThreadPoolExecutor | None = None,
        classify_error: Callable[[BaseException], Failure] = classify,
        limits: ConnectionLimits | None = None,
    ) -> None:
        if not 0 < max_frame_size < HARD_MAX_FRAME_SIZE:
            raise ValueError(f"max_frame_size must be between 1 and {HARD_MAX_FRAME_SIZE - 1}")
        self._handler = handler
        self._classify = classify_error
        self._host = host
        self._port = port
        self._max_frame_size = max_frame_size
        self._max_in_flight = max_in_flight_per_connection
        self._limits = limits or ConnectionLimits()
        self._owns_executor = executor is None
        self._executor = executor or ThreadPoolExecutor(workers, thread_name_prefix="thrift-worker")
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._bound_port: int | None = None
        self._acceptor: threading.Thread | None = None
        self._readers: dict[Connection, threading.Thread] = {}
        self._stopping = threading.Event()
        self._refused = self._closed_idle = self._closed_stalled = 0
        self._refusal_logged_at: float | None = None

    @property
    def port(self) -> int:
        """The bound port (after `start`)."""
        if self._bound_port is None:
            raise RuntimeError("the server is not started")
        return self._bound_port

    def stats(self) -> ConnectionStats:
        """Connections open now, and refused and closed (idle, stalled) since the start."""
        with self._lock:
            return ConnectionStats(len(self._readers), self._refused, self._closed_idle, self._closed_stalled)

    def start(self) -> int:
        """Bind, listen and start accepting; the bound port."""
        with self._lock:
            if self._listener is not None:
                raise RuntimeError("the server is already started")
            listener = socket.create_server((self._host, self._port), backlog=128, reuse_port=False)
            listener.settimeout(_ACCEPT_POLL_SECONDS)
            self._listener = listener
            self._bound_port = int(listener.getsockname()[1])
            self._acceptor = threading.Thread(target=self._accept_loop, name="thrift-acceptor", daemon=True)
            self._acceptor.start()
        _log.info("Thrift connector service listening on %s:%d", self._host, self.port)
        return self.port

    def stop(self, grace_seconds: float = 5.0) -> None:
        """Stop accepting, finish the requests in flight (up to `grace_seconds`), close."""
        deadline = time.monotonic() + grace_seconds
        self._stopping.set()
        if self._acceptor is not None:
            self._acceptor.join()
        if self._listener is not None:
            self._listener.close()
        with self._lock:
            readers = dict(self._readers)
        for connection in readers:
            connection.stop_reading()
        for connection, thread in readers.items():
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                _log.warning("closing connection from %s with requests still in flight", connection.peer)
                connection.close()
                thread.join(1.0)
        if self._owns_executor:
            self._executor.shutdown(wait=False, cancel_futures=True)

    # Accepting and reading -------------------------------------------------------------------

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                sock, address = self._listener.accept()
            except TimeoutError:
                continue
            except OSError as exc:
                if self._stopping.is_set():
                    return
                _log.warning("accept failed: %s", exc)
                time.sleep(_ACCEPT_POLL_SECONDS)
                continue
            peer = f"{address[0]}:{address[1]}"
            with self._lock:
                full = len(self._readers) >= self._limits.max_connections
                if full:
                    self._refused += 1
            if full:
                self._refuse(sock, peer)
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            connection = Connection(sock, peer, self._max_in_flight, self._limits)
            thread = threading.Thread(
                target=self._read_loop,
                args=(connection,),
                name=f"thrift-reader-{connection.peer}",
                daemon=True,
            )
            with self._lock:
                self._readers[connection] = thread
            thread.start()

    def _refuse(self, sock: socket.socket, peer: str) -> None:
        """Close a connection beyond the limit at once; logged at most once a minute."""
        with contextlib.suppress(OSError):
            sock.close()
        now = time.monotonic()
        if self._refusal_logged_at is None or now - self._refusal_logged_at >= _REFUSAL_LOG_SECONDS:
            self._refusal_logged_at = now
            _log.warning(
                "refusing Thrift connections: %d are open (limits.thrift_max_connections); "
                "%d refused since start, the latest from %s",
                self._limits.max_connections,
                self.stats().refused,
                peer,
            )

    def _read_loop(self, connection: Connection) -> None:
        try:
            while not self._stopping.is_set():
                request = self._read_request(connection)
                if request is None:
                    break
                connection.slots.acquire()
                try:
                    future = self._executor.submit(self._answer, connection, request)
                except RuntimeError:  # the executor is shut down
                    connection.slots.release()
                    break
                connection.track(future)
        except IdleTimeoutError as exc:
            self._count_close(idle=True)
            _log.debug("closing connection from %s: %s", connection.peer, exc)
        except FrameTimeoutError as exc:
            self._count_close(idle=False)
            _log.warning("closing connection from %s: %s", connection.peer, exc)
        except PeerError as exc:
            _log.error("closing connection from %s: %s", connection.peer, exc)
        except OSError as exc:
            _log.debug("connection from %s ended: %s", connection.peer, exc)
        finally:
            connection.wait_idle()
            connection.close()
            with self._lock:
                self._readers.pop(connection, None)

    def _count_close(self, *, idle: bool) -> None:
        with self._lock:
            if idle:
                self._closed_idle += 1
            else:
                self._closed_stalled += 1

    def _read_request(self, connection: Connection) -> _Request | None:
        deadline = connection.wait_for_frame()
        prefix = connection.receive(_LENGTH.size, deadline, frame_start=True)
        if prefix is None:
            return None
        (size,) = _LENGTH.unpack(prefix)
        if size < 0:
            raise PeerError(
                "not a framed message (unframed transports are not supported; use FRAMED or HEADER)"
            )
        if size > self._max_frame_size:
            raise PeerError(f"frame of {size} bytes exceeds the maximum frame size of {self._max_frame_size}")
        if size == 0:
            raise PeerError("empty frame")
        frame = connection.receive(size, deadline)
        assert frame is not None  # None only at a frame's start
        header = None
        if frame.startswith(_HEADER_MAGIC):
            frame, header = self._unwrap_header(prefix + frame)
        reader = _protocol(TMemoryBuffer(frame), self._max_frame_size)
        try:
            name, message_type, seqid = reader.readMessageBegin()
        except Exception as exc:  # TProtocolException, EOFError, UnicodeDecodeError, ...
            raise PeerError(f"not a strict binary-protocol message: {shorten(exc)}") from exc
        if message_type != idl.TMessageType.CALL:
            raise PeerError(f"message type {message_type} for {shorten(name)!r}; only calls are served")
        return _Request(name, seqid, reader, header)

    def _unwrap_header(self, framed: bytes) -> tuple[bytes, _HeaderFrame]:
        transport = THeaderTransport(TMemoryBuffer(framed), [THeaderClientType.HEADERS])
        transport.set_max_frame_size(self._max_frame_size)
        try:
            transport.readFrame(0)
        except Exception as exc:  # TTransportException, TApplicationException (unknown transform)
            raise PeerError(f"bad HEADER frame: {shorten(exc)}") from exc
        if transport.protocol_id != THeaderSubprotocolID.BINARY:
            raise PeerError(f"HEADER frame with protocol {transport.protocol_id}; only binary is served")
        payload: bytes = transport.cstringio_buf.read()
        return payload, _HeaderFrame(transport.sequence_id, transport.flags)

    # Answering -------------------------------------------------------------------------------

    def _answer(self, connection: Connection, request: _Request) -> None:
        """Run on a worker: compute the reply, frame it, write it whole."""
        try:
            frame = self._frame(self._reply(request), request.header)
        except Exception as exc:
            _log.exception("encoding the reply to %s failed", request.name)
            frame = self._frame(
                _application_error(
                    request.name,
                    request.seqid,
                    idl.TApplicationException.INTERNAL_ERROR,
                    self._classify(exc).message,
                ),
                request.header,
            )
        if len(frame) - _LENGTH.size > self._max_frame_size:
            message = (
                f"the reply to {request.name} is {len(frame) - _LENGTH.size} bytes, "
                f"more than the maximum frame size of {self._max_frame_size}"
            )
            _log.error("%s (seqid %d, %s)", message, request.seqid, connection.peer)
            frame = self._frame(
                _application_error(
                    request.name, request.seqid, idl.TApplicationException.INTERNAL_ERROR, message
                ),
                request.header,
            )
        try:
            connection.send(frame)
        except FrameTimeoutError as exc:
            self._count_close(idle=False)
            _log.warning("closing connection from %s: %s", connection.peer, exc)
            connection.close()
        except OSError as exc:
            _log.debug("reply to %s on %s not delivered: %s", request.name, connection.peer, exc)
            connection.close()

    def _reply(self, request: _Request) -> list[bytes]:
        name, seqid = request.name, request.seqid
        method = _method(name)
        if method is None:
            _log.warning("unknown method %r called", shorten(name))
            return _application_error(
                name, seqid, idl.TApplicationException.UNKNOWN_METHOD, f"unknown method {shorten(name)}"
            )
        args = method.args()
        try:
            args.read(request.reader)
            request.reader.readMessageEnd()
        except Exception as exc:
            _log.warning("cannot decode the arguments of %s: %s", name, shorten(exc))
            return _application_error(
                name,
                seqid,
                idl.TApplicationException.PROTOCOL_ERROR,
                f"cannot decode the arguments of {name}: {shorten(exc)}",
            )
        result = method.result()
        engine = calling_engine.set(next(p for p in _METHOD_PREFIXES if name.startswith(p)))
        try:
            value = method.call(self._handler, args)
        except idl.ServiceException as exc:
            result.ex1 = exc
        except Exception as exc:
            failure = self._classify(exc)
            if failure.status == Status.INTERNAL:
                _log.exception("%s failed", name)
                return _application_error(
                    name, seqid, idl.TApplicationException.INTERNAL_ERROR, f"{name} failed: {failure.message}"
                )
            retryable = failure.status == Status.UNAVAILABLE
            if retryable:
                _log.warning("%s failed, the engine may retry: %s", name, failure.message)
            else:
                _log.info("%s refused (%s): %s", name, failure.status, failure.message)
            result.ex1 = idl.ServiceException(message=_one_line(failure.message), retryable=retryable)
        else:
            if value is None:
                raise TypeError(f"the handler returned no result for {name}")
            if isinstance(value, bytes):
                if not method.returns_page:
                    raise TypeError(f"the handler returned bytes for {name}")
                return _encode_page_reply(name, seqid, method, value)
            result.success = value
        finally:
            calling_engine.reset(engine)
        return _encode_struct(name, idl.TMessageType.REPLY, seqid, result)

    def _frame(self, message: list[bytes], header: _HeaderFrame | None) -> bytes:
        if header is None:
            return b"".join([_LENGTH.pack(sum(len(part) for part in message)), *message])
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
