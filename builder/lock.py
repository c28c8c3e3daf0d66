"""The table's writer lock (`.lakeprune/lock.json`): one writer, compaction or clean at a time.

On a local filesystem the lock file is created exclusively (O_EXCL). Object stores offer no
put-if-absent through pyarrow, so there the check is best effort and one writer per table must be
ensured by the deployment. A lock left by a process that died on this host is taken over; a lock
held by another host must be removed by hand once no writer runs there (the error says so)."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from pruner.errors import TableLockedError
from pruner.format.layout import LOCK_FILE
from pruner.storage import Storage


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


def _read_holder(storage: Storage) -> dict[str, object]:
    try:
        data = json.loads(storage.read_bytes(LOCK_FILE))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _try_create(storage: Storage, content: bytes) -> bool:
    if storage.is_local:
        path = storage.path(LOCK_FILE)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
        return True
    if storage.exists(LOCK_FILE):
        return False
    storage.write_bytes(LOCK_FILE, content)
    return True


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
    if not _try_create(storage, content):
        holder = _read_holder(storage)
        if not _holder_is_dead(holder):
            raise TableLockedError(
                f"table {storage.uri} is locked by {holder.get('operation', '?')} on host "
                f"{holder.get('host', '?')} pid {holder.get('pid', '?')} since {holder.get('since', '?')}; "
                f"if no writer is running there, delete {storage.full_uri(LOCK_FILE)}"
            )
        storage.delete(LOCK_FILE)
        if not _try_create(storage, content):
            raise TableLockedError(f"table {storage.uri} was locked by another writer just now")
    try:
        yield
    finally:
        storage.delete(LOCK_FILE)
