"""The TCP server of the Thrift connector: it accepts connections, reads each connection's requests
on a reader thread of its own, and answers them on a shared thread pool, so several requests in
flight on one connection run concurrently (at most `max_in_flight_per_connection`; beyond that the
reader waits). Each reply is written as one whole frame, in the request's transport
(`transports`), under the connection's write lock, with the request's seqid; a reply that cannot be
encoded, or that is larger than `max_frame_size`, is answered with `INTERNAL_ERROR` instead. What a
call is answered with is `dispatch`'s. The server keeps serving in every case. Connections
(`connections.Connection`) are bounded: at most `limits.max_connections` are open (more are closed
at once, counted, and logged at most once a minute), an idle one or one whose frame stalls is
closed, a frame is read as its bytes arrive, never reserved from its length, and a peer that breaks
the protocol loses its connection. With `reuse_port` the port is bound with SO_REUSEPORT, so that
several processes (`lakeprune serve --workers N`) accept on it and the kernel spreads connections
over them; without it (the default) a port in use is an error."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from thrift.transport.TTransport import HARD_MAX_FRAME_SIZE

from pruner.serving.config import Limits
from pruner.serving.errors import Failure, classify
from pruner.thrift import idl, transports
from pruner.thrift.connections import (
    Connection,
    ConnectionLimits,
    ConnectionStats,
    FrameTimeoutError,
    IdleTimeoutError,
    PeerError,
)
from pruner.thrift.dispatch import reply
from pruner.thrift.messages import Request, application_error, read_call
from pruner.thrift.methods import ConnectorService

_log = logging.getLogger(__name__)

DEFAULT_MAX_FRAME_SIZE = Limits().max_frame_bytes
"""The sidecar's `limits.max_frame_bytes` default: Drift's on both engines
(`trino.thrift.client.max-frame-size`)."""

_ACCEPT_POLL_SECONDS = 0.2
_REFUSAL_LOG_SECONDS = 60.0  # at most one log line per minute about refused connections


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
        reuse_port: bool = False,
    ) -> None:
        if not 0 < max_frame_size < HARD_MAX_FRAME_SIZE:
            raise ValueError(f"max_frame_size must be between 1 and {HARD_MAX_FRAME_SIZE - 1}")
        self._handler = handler
        self._classify = classify_error
        self._host = host
        self._port = port
        self._reuse_port = reuse_port
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
            listener = socket.create_server(
                (self._host, self._port), backlog=128, reuse_port=self._reuse_port
            )
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

    def _read_request(self, connection: Connection) -> Request | None:
        deadline = connection.wait_for_frame()
        prefix = connection.receive(transports.LENGTH_PREFIX.size, deadline, frame_start=True)
        if prefix is None:
            return None
        size = transports.frame_size(prefix, self._max_frame_size)
        frame = connection.receive(size, deadline)
        assert frame is not None  # None only at a frame's start
        payload, header = transports.unwrap(prefix, frame, self._max_frame_size)
        return read_call(payload, header, self._max_frame_size)

    # Answering -------------------------------------------------------------------------------

    def _answer(self, connection: Connection, request: Request) -> None:
        """Run on a worker: compute the reply, frame it, write it whole."""
        try:
            frame = transports.wrap(reply(request, self._handler, self._classify), request.header)
        except Exception as exc:
            _log.exception("encoding the reply to %s failed", request.name)
            frame = _internal_error(request, self._classify(exc).message)
        size = len(frame) - transports.LENGTH_PREFIX.size
        if size > self._max_frame_size:
            message = (
                f"the reply to {request.name} is {size} bytes, "
                f"more than the maximum frame size of {self._max_frame_size}"
            )
            _log.error("%s (seqid %d, %s)", message, request.seqid, connection.peer)
            frame = _internal_error(request, message)
        try:
            connection.send(frame)
        except FrameTimeoutError as exc:
            self._count_close(idle=False)
            _log.warning("closing connection from %s: %s", connection.peer, exc)
            connection.close()
        except OSError as exc:
            _log.debug("reply to %s on %s not delivered: %s", request.name, connection.peer, exc)
            connection.close()


def _internal_error(request: Request, message: str) -> bytes:
    """A frame answering `request` with `INTERNAL_ERROR`, in its transport."""
    error = application_error(request.name, request.seqid, idl.TApplicationException.INTERNAL_ERROR, message)
    return transports.wrap(error, request.header)
