"""Counting the requests that reads make to storage, per kind: `list` (a directory listing, one
LIST per page on an object store), `head` (a metadata request: a file's info, or the size lookup
that opening a file for random access makes) and `get` (one read of a byte range: one ranged GET on
an object store), with the bytes those reads returned. `pruner.storage.Storage` records every read
it makes here, in one place; nothing else counts.

Counts go to the process-wide `TOTALS` (the sidecar's `/metrics`) and to every `counting()` scope
open in the calling context (scopes nest: a request's scope and the prune's inside it both see the
prune's reads). Scopes live in a `contextvars.ContextVar`, so concurrent prunes in different
threads each count only their own requests. A file opened inside a scope keeps counting into that
scope whichever thread reads it later (Arrow reads row groups from its own I/O threads)."""

from __future__ import annotations

import contextvars
import errno
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum

import pyarrow as pa


class RequestKind(StrEnum):
    LIST = "list"
    HEAD = "head"
    GET = "get"


@dataclass(frozen=True)
class StorageRequests:
    """How many requests of each kind some reads made, and how many bytes the GETs returned."""

    lists: int = 0
    heads: int = 0
    gets: int = 0
    bytes_read: int = 0

    @property
    def requests(self) -> int:
        return self.lists + self.heads + self.gets

    def count(self, kind: RequestKind) -> int:
        match kind:
            case RequestKind.LIST:
                return self.lists
            case RequestKind.HEAD:
                return self.heads
            case RequestKind.GET:
                return self.gets

    def to_json(self) -> dict[str, int]:
        return {"list": self.lists, "head": self.heads, "get": self.gets, "bytes_read": self.bytes_read}

    def __str__(self) -> str:
        return f"{self.lists} list, {self.heads} head, {self.gets} get ({self.bytes_read:,} bytes read)"


class RequestCounter:
    """A running, thread-safe count; `value()` is what it has counted so far."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts = dict.fromkeys(RequestKind, 0)
        self._bytes = 0

    def add(self, kind: RequestKind, nbytes: int = 0) -> None:
        with self._lock:
            self._counts[kind] += 1
            self._bytes += nbytes

    def value(self) -> StorageRequests:
        with self._lock:
            counts = dict(self._counts)
            nbytes = self._bytes
        return StorageRequests(
            counts[RequestKind.LIST], counts[RequestKind.HEAD], counts[RequestKind.GET], nbytes
        )


TOTALS = RequestCounter()
"""Every request this process made through `Storage`, since it started."""

_scopes: contextvars.ContextVar[tuple[RequestCounter, ...]] = contextvars.ContextVar(
    "storage_request_scopes", default=()
)


@contextmanager
def counting() -> Iterator[RequestCounter]:
    """Count the storage requests made in this context until the block ends (and by files opened
    in it, until they are closed)."""
    counter = RequestCounter()
    token = _scopes.set((*_scopes.get(), counter))
    try:
        yield counter
    finally:
        _scopes.reset(token)


def current() -> tuple[RequestCounter, ...]:
    """Where a request made now is counted: the totals and every open scope."""
    return (TOTALS, *_scopes.get())


def record(kind: RequestKind, nbytes: int = 0, into: tuple[RequestCounter, ...] | None = None) -> None:
    """Count one request (into the current scopes, or into `into`)."""
    for counter in current() if into is None else into:
        counter.add(kind, nbytes)


class _CountedReads:
    """A readable file that counts each read as one GET, into the scopes open when it was opened.
    `pa.PythonFile` turns it back into an Arrow file (Arrow's random-access reads become `seek` +
    `read` here, under the file's lock). The position is kept here and every read is a positioned
    read of the bytes that exist (`read_at`), so the inner file is never asked to seek: pyarrow's
    Cloud Storage file turns a seek to the end (how `PythonFile` finds the size) into a ranged GET
    that the server refuses with 416. A read at the end asks for nothing and counts nothing."""

    def __init__(self, inner: pa.NativeFile, into: tuple[RequestCounter, ...]) -> None:
        self._inner = inner
        self._into = into
        self._size = int(inner.size())
        self._position = 0
        self.closed = False

    def read(self, nbytes: int | None = None) -> bytes:
        remaining = max(self._size - self._position, 0)
        wanted = remaining if nbytes is None or nbytes < 0 else min(nbytes, remaining)
        if wanted == 0:
            return b""
        data = bytes(self._inner.read_at(wanted, self._position))
        record(RequestKind.GET, len(data), self._into)
        self._position += len(data)
        return data

    def seek(self, position: int, whence: int = 0) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._position, os.SEEK_END: self._size}[whence]
        if base + position < 0:
            raise OSError(errno.EINVAL, f"cannot seek to {base + position}")
        self._position = base + position
        return self._position

    def tell(self) -> int:
        return self._position

    def size(self) -> int:
        return self._size

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True
        self._inner.close()


def counted(inner: pa.NativeFile) -> pa.NativeFile:
    """`inner` (a random-access file just opened) with each read counted as one GET."""
    return pa.PythonFile(_CountedReads(inner, current()), mode="r")
