"""The table's writer lock (`.lakeprune/lock.json`): one writer, compaction or clean at a time.

The lock file is created with `Storage.put_if_absent` on every backend (a hard link on local disks,
a conditional PUT on S3), so of the writers that try at once exactly one gets it; the others fail
with `TableLockedError`, a `ConflictError`. A lock left by a process that died on this host is taken
over, by one taker only: it first creates a marker named after the dead lock's content
(`.lakeprune/lock_takeovers/<digest>`, put-if-absent; markers are kept, so a taker that read that
lock long ago can never remove a newer one), checks that the lock still is the dead one, deletes it
and creates its own, which fails if another writer got in between. A lock held by another host must
be removed by hand once no writer runs there (the error says so); removing a lock by hand while a
takeover of it is under way is the one way two writers could both hold it."""

from __future__ import annotations

import hashlib
import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from pruner.errors import TableLockedError
from pruner.format.layout import LOCK_FILE, LOCK_TAKEOVER_DIR
from pruner.storage import Storage

_READ_ATTEMPTS = 3


def _holder_is_dead(holder: dict[str, object]) -> bool:
    if holder.get("host") != socket.gethostname():
        return False
    try:
        pid = int(str(holder.get("pid")))
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, ValueError):
        return False
    return False


def _read_lock(storage: Storage) -> bytes | None:
    """The lock file's content; None when there is no lock file (any more). The holder may release
    (or a taker replace) the lock while it is read: on S3 that can surface as another read error
    (the object went between pyarrow's HEAD and GET), so a failed read is tried again."""
    attempt = 1
    while True:
        try:
            return storage.read_bytes(LOCK_FILE)
        except FileNotFoundError:
            return None
        except OSError:
            if attempt == _READ_ATTEMPTS:
                raise
            attempt += 1


def _parse(content: bytes) -> dict[str, object]:
    try:
        data = json.loads(content)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _locked_error(storage: Storage, holder: dict[str, object]) -> TableLockedError:
    return TableLockedError(
        f"table {storage.uri} is locked by {holder.get('operation', '?')} on host "
        f"{holder.get('host', '?')} pid {holder.get('pid', '?')} since {holder.get('since', '?')}; "
        f"if no writer is running there, delete {storage.full_uri(LOCK_FILE)}"
    )


def _just_now(storage: Storage) -> TableLockedError:
    return TableLockedError(f"table {storage.uri} was locked by another writer just now")


def _take_over(storage: Storage, dead: bytes, content: bytes) -> None:
    """Replace the dead holder's lock `dead` with ours, or raise if another writer wins."""
    marker = f"{LOCK_TAKEOVER_DIR}/{hashlib.sha256(dead).hexdigest()}"
    if not storage.put_if_absent(marker, content) or _read_lock(storage) != dead:
        raise _just_now(storage)
    storage.delete(LOCK_FILE)
    if not storage.put_if_absent(LOCK_FILE, content):
        raise _just_now(storage)


def _acquire(storage: Storage, content: bytes) -> None:
    if storage.put_if_absent(LOCK_FILE, content):
        return
    current = _read_lock(storage)
    if current is None:  # released since: one more try
        if storage.put_if_absent(LOCK_FILE, content):
            return
        raise _just_now(storage)
    holder = _parse(current)
    if not _holder_is_dead(holder):
        raise _locked_error(storage, holder)
    _take_over(storage, current, content)


@contextmanager
def table_lock(storage: Storage, operation: str) -> Iterator[None]:
    """Hold the table's writer lock for the duration of the block."""
    content = json.dumps(
        {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "operation": operation,
            "since": datetime.now(UTC).isoformat(),
        }
    ).encode()
    _acquire(storage, content)
    try:
        yield
    finally:
        storage.delete(LOCK_FILE)
