"""builder.instants rollback: an incomplete instant's files are deleted, then its timeline files; a
partition whose path cannot exist holds nothing and does not stop the rollback; any other storage
error stops it before the timeline is touched, so the next writer tries again. `run_instant` rolls
back a failed block, but not an instant another writer took from it."""

from __future__ import annotations

import dataclasses
import errno
from pathlib import Path
from typing import Any, cast

import pyarrow.fs as pafs
import pytest

from builder.instants import rollback, rollback_pending, run_instant
from pruner.errors import ConflictError
from pruner.format import timeline as tl
from pruner.format.layout import METADATA_DIR, TIMELINE_DIR, DataFileName, IndexFileName, data_file_path
from pruner.format.timeline import Action, Instant, Timeline
from pruner.storage import Storage

IMPOSSIBLE = "secondary_index_" + "a" * 300  # an index partition named past the 255-byte limit


def _crashed_write(storage: Storage, index_partitions: list[str]) -> tuple[Instant, list[str]]:
    """An inflight commit that wrote a data file and a `files` index log, then died."""
    instant = tl.request(storage, Action.COMMIT, {"operation": "upsert"})
    instant = tl.mark_inflight(
        storage, instant, {"data_partitions": ["city=ams"], "index_partitions": ["files", *index_partitions]}
    )
    written = [
        data_file_path("city=ams", DataFileName("0" * 32, "0-0", instant.timestamp)),
        f"{METADATA_DIR}/files/{IndexFileName(0, 'log', instant.timestamp)}",
    ]
    for rel in written:
        storage.write_bytes(rel, b"partial")
    return instant, written


def test_rollback_of_an_instant_whose_index_partition_cannot_exist(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    instant, written = _crashed_write(storage, [IMPOSSIBLE, "record_index"])
    assert rollback(storage, Timeline.load(storage), instant) == len(written)
    assert not any(storage.exists(rel) for rel in written)
    assert Timeline.load(storage).instants == ()


def test_rollback_pending_goes_on_after_an_impossible_partition(tmp_path: Path) -> None:
    """What every later write, compaction and clean does first (it used to fail here for ever)."""
    storage = Storage.from_uri(str(tmp_path))
    _, written = _crashed_write(storage, [IMPOSSIBLE])
    assert len(rollback_pending(storage)) == 1
    assert not any(storage.exists(rel) for rel in written)
    assert not Timeline.load(storage).pending()


class _FailingMetadataListing:
    """Delegates to a real filesystem, but listing the index partitions fails (a storage outage)."""

    def __init__(self, inner: pafs.FileSystem) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def get_file_info(self, what: object) -> Any:
        if isinstance(what, pafs.FileSelector) and METADATA_DIR in what.base_dir:
            raise OSError(errno.EIO, "Input/output error")
        return self._inner.get_file_info(what)


def test_other_storage_errors_stop_the_rollback_and_keep_the_instant_pending(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    instant, written = _crashed_write(storage, [IMPOSSIBLE])
    failing = dataclasses.replace(storage, fs=cast(pafs.FileSystem, _FailingMetadataListing(storage.fs)))
    with pytest.raises(OSError, match="Input/output error"):
        rollback(failing, Timeline.load(failing), instant)
    (pending,) = Timeline.load(storage).pending()
    assert pending.timestamp == instant.timestamp, "left for the next writer"
    assert storage.exists(written[1]), "the index log it could not list is still there"
    rollback_pending(storage)  # storage is back: the next attempt finishes the job
    assert not any(storage.exists(rel) for rel in written)
    assert Timeline.load(storage).instants == ()


def test_an_instant_lost_to_another_writer_is_not_rolled_back(tmp_path: Path) -> None:
    """If another writer completed the instant first, its files carry the same instant: the loser
    gets the conflict and must not delete them."""
    storage = Storage.from_uri(str(tmp_path))
    with (
        pytest.raises(ConflictError, match="another writer took instant"),
        run_instant(storage, Action.COMMIT, {"operation": "insert"}) as pending,
    ):
        pending.inflight(["city=ams"], ["files"])
        theirs = data_file_path("city=ams", DataFileName("1" * 32, "0-0", pending.timestamp))
        storage.write_bytes(theirs, b"the winner's")
        tl.complete(storage, pending.instant, {"operation": "insert"})  # the winner, first
        pending.complete({"operation": "insert"})
    assert storage.read_bytes(theirs) == b"the winner's"
    [winner] = Timeline.load(storage).instants
    assert winner.is_completed and winner.timestamp == pending.timestamp


def test_a_failed_instant_is_rolled_back(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    with (
        pytest.raises(RuntimeError, match="boom"),
        run_instant(storage, Action.COMMIT, {"operation": "insert"}) as pending,
    ):
        pending.inflight(["city=ams"], [])
        storage.write_bytes(
            data_file_path("city=ams", DataFileName("1" * 32, "0-0", pending.timestamp)), b"x"
        )
        raise RuntimeError("boom")
    assert Timeline.load(storage).instants == ()
    assert storage.list_files("city=ams") == []


def test_rollback_pending_deletes_temporary_timeline_files_of_a_killed_publish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = Storage.from_uri(str(tmp_path))
    with monkeypatch.context() as killed:  # each state linked, its temporary file never unlinked
        killed.setattr(Storage, "delete", lambda self, rel: None)
        instant = tl.request(storage, Action.COMMIT, {"operation": "upsert"})
        instant = tl.mark_inflight(storage, instant, {"data_partitions": [], "index_partitions": []})
        instant = tl.complete(storage, instant, {"operation": "upsert"})
    states = [f"{TIMELINE_DIR}/{instant.file_name(state)}" for state in tl.State]
    storage.write_bytes(f"{TIMELINE_DIR}/.keep", b"not a temporary file of lakeprune's")
    assert len(storage.list_files(TIMELINE_DIR)) == len(states) * 2 + 1

    assert rollback_pending(storage) == []
    assert sorted(e.rel for e in storage.list_files(TIMELINE_DIR)) == sorted(
        [f"{TIMELINE_DIR}/.keep", *states]
    )
    assert Timeline.load(storage).instants == (instant,)
