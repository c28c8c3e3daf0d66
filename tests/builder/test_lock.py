"""builder.lock: the table's writer lock on a local filesystem."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from builder.lock import table_lock
from pruner.errors import TableLockedError
from pruner.format.layout import LOCK_FILE
from pruner.storage import Storage


@pytest.fixture
def storage(tmp_path: Path) -> Storage:
    return Storage.from_uri(str(tmp_path))


def _dead_pid() -> int:
    """The pid of a child process that has exited and been reaped."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    try:
        os.kill(child.pid, 0)
    except ProcessLookupError:
        return child.pid
    pytest.skip(f"pid {child.pid} was reused at once")


def _write_lock(storage: Storage, host: str, pid: int) -> bytes:
    content = json.dumps(
        {"host": host, "pid": pid, "operation": "upsert", "since": "2024-01-01T00:00:00+00:00"}
    ).encode()
    storage.write_bytes(LOCK_FILE, content)
    return content


def _holder(storage: Storage) -> dict[str, object]:
    data = json.loads(storage.read_bytes(LOCK_FILE))
    assert isinstance(data, dict)
    return data


def test_lock_is_held_for_the_block_and_released_after(storage: Storage) -> None:
    with table_lock(storage, "insert"):
        holder = _holder(storage)
        assert holder["host"] == socket.gethostname()
        assert holder["pid"] == os.getpid()
        assert holder["operation"] == "insert"
    assert not storage.exists(LOCK_FILE)
    with table_lock(storage, "compaction"):  # free again
        assert _holder(storage)["operation"] == "compaction"


def test_second_acquire_fails_and_leaves_the_first_lock(storage: Storage) -> None:
    with table_lock(storage, "upsert"):
        before = storage.read_bytes(LOCK_FILE)
        with pytest.raises(TableLockedError) as info, table_lock(storage, "clean"):
            pytest.fail("acquired a held lock")
        assert storage.read_bytes(LOCK_FILE) == before
    message = str(info.value)
    assert (
        f"table {storage.uri} is locked by upsert on host {socket.gethostname()} pid {os.getpid()}" in message
    )
    assert f"delete {storage.full_uri(LOCK_FILE)}" in message
    assert not storage.exists(LOCK_FILE)


def test_lock_is_released_after_an_exception(storage: Storage) -> None:
    with pytest.raises(RuntimeError, match="boom"), table_lock(storage, "delete"):
        raise RuntimeError("boom")
    assert not storage.exists(LOCK_FILE)


def test_lock_of_a_dead_process_on_this_host_is_taken_over(storage: Storage) -> None:
    dead = _dead_pid()
    _write_lock(storage, socket.gethostname(), dead)
    with table_lock(storage, "insert"):
        holder = _holder(storage)
        assert holder["pid"] == os.getpid()
        assert holder["operation"] == "insert"
    assert not storage.exists(LOCK_FILE)


def test_lock_of_a_live_process_on_this_host_is_kept(storage: Storage) -> None:
    content = _write_lock(storage, socket.gethostname(), os.getppid())
    with (
        pytest.raises(TableLockedError, match=f"pid {os.getppid()} since 2024-01-01"),
        table_lock(storage, "insert"),
    ):
        pass
    assert storage.read_bytes(LOCK_FILE) == content


def test_lock_from_another_host_is_not_taken_over(storage: Storage) -> None:
    content = _write_lock(storage, "elsewhere.example", _dead_pid())
    with (
        pytest.raises(TableLockedError, match=r"on host elsewhere\.example") as info,
        table_lock(storage, "insert"),
    ):
        pass
    assert "if no writer is running there, delete" in str(info.value)
    assert storage.read_bytes(LOCK_FILE) == content


@pytest.mark.parametrize("content", [b"", b"{broken", b"[1]", b'{"host": "%s", "pid": "x"}'])
def test_unreadable_lock_is_not_taken_over(storage: Storage, content: bytes) -> None:
    content = content.replace(b"%s", socket.gethostname().encode())
    storage.write_bytes(LOCK_FILE, content)
    with pytest.raises(TableLockedError, match="is locked by"), table_lock(storage, "insert"):
        pass
    assert storage.read_bytes(LOCK_FILE) == content
