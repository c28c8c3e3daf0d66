"""One client connection of the Thrift wire server, and the limits that keep hostile clients from
holding the server's memory and threads. The socket is non-blocking and every wait is a `poll` with
a timeout: a connection with no request in flight and no byte for `idle_timeout` seconds is closed
(`IdleTimeoutError`), and a frame — a request coming in or a reply going out — must move completely
within `frame_timeout` seconds of its first byte (`FrameTimeoutError`), so a client that announces a
frame and stalls, or stops reading replies, loses its connection instead of a thread. A frame is
read into a buffer that grows as bytes actually arrive, so a length prefix announcing 16 MB costs
nothing until 16 MB are sent. Replies are written whole under `write_lock`; `slots` bounds the
requests in flight so a pipelining client cannot queue unbounded work."""

from __future__ import annotations

import contextlib
import math
import select
import socket
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass

from pruner.serving.config import Limits

_SIDECAR = Limits()  # the defaults of the sidecar's `limits:`, declared there

_CHUNK_BYTES = 64 * 1024  # the most one receive asks for
_WAKE_SECONDS = 0.2  # how often waits for requests in flight look at the connection again


@dataclass(frozen=True)
class ConnectionLimits:
    """A Thrift port's connection limits; by default the sidecar's (`limits.thrift_*`)."""

    max_connections: int = _SIDECAR.thrift_max_connections
    idle_timeout: float = _SIDECAR.thrift_idle_timeout_seconds
    frame_timeout: float = _SIDECAR.thrift_frame_timeout_seconds


@dataclass(frozen=True)
class ConnectionStats:
    """Counts since the server started (`open`: now)."""

    open: int = 0
    refused: int = 0  # closed at once: `max_connections` were open
    closed_idle: int = 0
    closed_stalled: int = 0


class PeerError(Exception):
    """The peer broke the framing or the message format: the connection is closed."""


class IdleTimeoutError(PeerError):
    """No request came for the idle timeout."""


class FrameTimeoutError(PeerError):
    """A frame did not move completely within the frame timeout."""


class Connection:
    def __init__(self, sock: socket.socket, peer: str, max_in_flight: int, limits: ConnectionLimits) -> None:
        sock.setblocking(False)
        self.sock = sock
        self.peer = peer
        self.limits = limits
        self.write_lock = threading.Lock()
        self.slots = threading.BoundedSemaphore(max_in_flight)
        self._in_flight: set[Future[None]] = set()
        self._idle = threading.Condition()
        self._closed = threading.Event()
        self._last_active = time.monotonic()

    # Reading ---------------------------------------------------------------------------------

    def wait_for_frame(self) -> float:
        """Wait until the next frame's first byte (or the end of the stream) can be read; the time
        by which the whole frame must have arrived. `IdleTimeoutError` when nothing came for the idle
        timeout while no request was in flight."""
        while True:
            with self._idle:
                busy = bool(self._in_flight)
                quiet_until = self._last_active + self.limits.idle_timeout
            timeout = self.limits.idle_timeout if busy else quiet_until - time.monotonic()
            if timeout <= 0:
                raise IdleTimeoutError(f"no request for {self.limits.idle_timeout:g} s")
            if self._wait(select.POLLIN, timeout):
                return time.monotonic() + self.limits.frame_timeout

    def receive(self, size: int, deadline: float, *, frame_start: bool = False) -> bytes | None:
        """`size` bytes, all by `deadline`; None at a clean end of stream before the first byte of
        a frame (`frame_start`)."""
        data = bytearray()
        while len(data) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._wait(select.POLLIN, remaining):
                raise FrameTimeoutError(
                    f"frame incomplete after {self.limits.frame_timeout:g} s ({len(data)} of {size} bytes)"
                )
            try:
                chunk = self.sock.recv(min(size - len(data), _CHUNK_BYTES))
            except (BlockingIOError, InterruptedError):
                continue
            if not chunk:
                if frame_start and not data:
                    return None
                raise PeerError(f"connection closed inside a frame ({len(data)} of {size} bytes)")
            data += chunk
        self._last_active = time.monotonic()
        return bytes(data)

    # Writing ---------------------------------------------------------------------------------

    def send(self, frame: bytes) -> None:
        """Write `frame` whole; `FrameTimeoutError` (the frame is cut: close the connection) when the
        client does not take it within the frame timeout."""
        with self.write_lock:
            deadline = time.monotonic() + self.limits.frame_timeout
            view = memoryview(frame)
            while view:
                try:
                    view = view[self.sock.send(view) :]
                    continue
                except (BlockingIOError, InterruptedError):
                    pass
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._wait(select.POLLOUT, remaining):
                    raise FrameTimeoutError(
                        f"the client took {len(frame) - len(view)} of {len(frame)} reply bytes "
                        f"in {self.limits.frame_timeout:g} s"
                    )

    # Requests in flight ----------------------------------------------------------------------

    def track(self, future: Future[None]) -> None:
        with self._idle:
            self._in_flight.add(future)
        future.add_done_callback(self._finished)

    def _finished(self, future: Future[None]) -> None:
        self.slots.release()
        with self._idle:
            self._in_flight.discard(future)
            self._last_active = time.monotonic()
            self._idle.notify_all()

    def wait_idle(self) -> None:
        """Wait until no request is in flight, or the connection is closed under them."""
        with self._idle:
            while self._in_flight and not self._closed.is_set():
                self._idle.wait(_WAKE_SECONDS)

    # Closing ---------------------------------------------------------------------------------

    def stop_reading(self) -> None:
        """No more requests: the reader sees end-of-stream; replies can still be written."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RD)

    def close(self) -> None:
        """Close; the shutdown comes first and outside the lock, so a reply waiting in `send` on a
        client that stopped reading fails at once instead of holding the lock."""
        if self._closed.is_set():
            return
        self._closed.set()
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        with self.write_lock:
            self.sock.close()

    def _wait(self, events: int, timeout: float) -> bool:
        """Whether the socket became ready for `events` (or failed) within `timeout` seconds."""
        poller = select.poll()
        try:
            poller.register(self.sock, events)
        except ValueError as exc:  # closed under us: no file descriptor any more
            raise OSError(f"connection from {self.peer} is closed") from exc
        return bool(poller.poll(math.ceil(max(timeout, 0.0) * 1000)))
