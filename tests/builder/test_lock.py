"""builder.lock: the table's writer lock on a local filesystem, on S3, on Azure Blob and on Cloud
Storage (the session's SeaweedFS, Azurite and fake-gcs-server servers); the race of writers
started together is in test_commit_race.py."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from builder.lock import _take_over, table_lock
from pruner.errors import TableLockedError
from pruner.format.layout import LOCK_FILE, LOCK_TAKEOVER_DIR
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


def test_takeover_of_a_dead_lock_happens_once(storage: Storage) -> None:
    """Two writers that both read the same dead lock: the first takes it over; the second, whose
    takeover marker for that lock exists, fails instead of deleting the first one's lock."""
    _write_lock(storage, socket.gethostname(), _dead_pid())
    dead = storage.read_bytes(LOCK_FILE)
    with table_lock(storage, "insert"):
        ours = storage.read_bytes(LOCK_FILE)
        with pytest.raises(TableLockedError, match="locked by another writer just now"):
            _take_over(storage, dead, b'{"operation": "late taker"}')
        assert storage.read_bytes(LOCK_FILE) == ours
    assert [e.rel.rpartition("/")[0] for e in storage.list_files(LOCK_TAKEOVER_DIR)] == [LOCK_TAKEOVER_DIR]


def test_takeover_stops_when_the_lock_changed_since_it_was_read(storage: Storage) -> None:
    _write_lock(storage, socket.gethostname(), _dead_pid())
    dead = storage.read_bytes(LOCK_FILE)
    storage.delete(LOCK_FILE)  # removed by hand ...
    current = _write_lock(storage, socket.gethostname(), os.getpid())  # ... and taken by a live writer
    with pytest.raises(TableLockedError, match="just now"):
        _take_over(storage, dead, b"{}")
    assert storage.read_bytes(LOCK_FILE) == current


def test_lock_released_between_the_two_reads_is_taken(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first create fails on a lock that is then released before it is read: one more try."""
    _write_lock(storage, "elsewhere.example", 1)
    real = Storage.put_if_absent
    calls: list[str] = []

    def put_then_release(self: Storage, rel: str, data: bytes) -> bool:
        calls.append(rel)
        created = real(self, rel, data)
        if not created and len(calls) == 1:
            storage.delete(LOCK_FILE)
        return created

    monkeypatch.setattr(Storage, "put_if_absent", put_then_release)
    with table_lock(storage, "insert"):
        assert _holder(storage)["pid"] == os.getpid()
    assert calls == [LOCK_FILE, LOCK_FILE]


def _assert_lock_refuses_a_second_holder(storage: Storage) -> None:
    with table_lock(storage, "upsert"):
        before = storage.read_bytes(LOCK_FILE)
        assert _holder(storage)["operation"] == "upsert"
        with pytest.raises(TableLockedError, match="is locked by upsert"), table_lock(storage, "clean"):
            pytest.fail("acquired a held lock")
        assert storage.read_bytes(LOCK_FILE) == before
    assert not storage.exists(LOCK_FILE)
    dead = _write_lock(storage, socket.gethostname(), _dead_pid())
    with table_lock(storage, "compaction"):
        assert _holder(storage)["operation"] == "compaction"
        with pytest.raises(TableLockedError, match="just now"):
            _take_over(storage, dead, b"{}")
    assert not storage.exists(LOCK_FILE)


def test_lock_on_s3_refuses_a_second_holder(s3_root: str) -> None:
    _assert_lock_refuses_a_second_holder(Storage.from_uri(s3_root))


def test_lock_on_azure_refuses_a_second_holder(azure_storage: Storage) -> None:
    _assert_lock_refuses_a_second_holder(azure_storage)


def test_lock_on_gcs_refuses_a_second_holder(gcs_storage: Storage) -> None:
    _assert_lock_refuses_a_second_holder(gcs_storage)
