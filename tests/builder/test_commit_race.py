"""Racing committers: two processes, started together, contend 20 rounds for one table, on a local
disk, on S3 and on Cloud Storage (the session's SeaweedFS and fake-gcs-server servers). For the
writer lock (`builder.lock`), for the takeover of a lock a dead process left, and for one instant
on the timeline (`pruner.format.timeline.request`, both with the same timestamp), every round
exactly one wins and commits; the other fails with `ConflictError` and leaves nothing behind; the
timeline stays readable and holds exactly the winners' commits, each with its data file."""

from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import pytest

from builder.instants import rollback_pending, run_instant
from builder.lock import table_lock
from pruner.errors import ConflictError
from pruner.format import timeline as tl
from pruner.format.instant import format_instant
from pruner.format.layout import LOCK_FILE, LOCK_TAKEOVER_DIR, TIMELINE_DIR, DataFileName, data_file_path
from pruner.format.timeline import Action, Timeline
from pruner.storage import Storage
from tests.support_racing import racing, reported

ROUNDS = 20
WAIT_S = 60.0
PARTITION = "p=0"
FIRST_INSTANT = datetime(2030, 1, 1, tzinfo=UTC)


def _data_file(storage: Storage, timestamp: str, writer: str, round_no: int) -> str:
    """What a commit writes between inflight and completed: one data file named with its instant."""
    rel = data_file_path(PARTITION, DataFileName(f"{round_no:032x}", writer, timestamp))
    storage.write_bytes(rel, f"{writer} {round_no}".encode())
    return rel


def _by_lock(storage: Storage, writer: str, round_no: int, attempted: Barrier) -> None:
    """Take the lock and hold it until the rival has tried too; then commit as every writer does."""
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(table_lock(storage, f"{writer} round {round_no}"))
        finally:
            attempted.wait(WAIT_S)
        rollback_pending(storage)
        with run_instant(storage, Action.COMMIT, {"writer": writer}) as pending:
            pending.inflight([PARTITION], [])
            rel = _data_file(storage, pending.timestamp, writer, round_no)
            pending.complete({"writer": writer, "round": round_no, "file": rel})


def _by_instant(storage: Storage, writer: str, round_no: int, attempted: Barrier) -> None:
    """Request the round's instant, the same timestamp for both, without a lock; the winner
    commits it."""
    stamp = format_instant(FIRST_INSTANT + timedelta(seconds=round_no))
    try:
        instant = tl.request(storage, Action.COMMIT, {"writer": writer}, timestamp=stamp)
    finally:
        attempted.wait(WAIT_S)
    touched = {"data_partitions": [PARTITION], "index_partitions": []}
    instant = tl.mark_inflight(storage, instant, touched)
    rel = _data_file(storage, instant.timestamp, writer, round_no)
    tl.complete(storage, instant, {**touched, "writer": writer, "round": round_no, "file": rel})


CONTENDERS: dict[str, Callable[[Storage, str, int, Barrier], None]] = {
    "lock": _by_lock,
    "instant": _by_instant,
    "takeover": _by_lock,  # ... of a lock that a dead process left, placed before every round
}


def contender(
    uri: str, how: str, writer: str, start: Barrier, attempted: Barrier, done: Barrier, results: Any
) -> None:
    """One racing process: each round waits for the start, attempts, reports, waits for the end."""
    storage = Storage.from_uri(uri)
    attempt = CONTENDERS[how]
    for round_no in range(ROUNDS):
        start.wait(WAIT_S)
        try:
            attempt(storage, writer, round_no, attempted)
            outcome = "won"
        except ConflictError as exc:
            outcome = f"conflict: {exc}"
        except BaseException as exc:  # reported to the test, which fails on it
            outcome = f"error: {type(exc).__name__}: {exc}"
        results.put((round_no, writer, outcome))
        done.wait(WAIT_S)


@pytest.fixture(
    params=["local", pytest.param("s3", marks=pytest.mark.s3), pytest.param("gcs", marks=pytest.mark.gcs)]
)
def table_uri(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "s3":
        yield request.getfixturevalue("s3_root") + "/table"
    elif request.param == "gcs":
        yield request.getfixturevalue("gcs_storage").uri + "/table"
    else:
        yield str(tmp_path / "table")


@pytest.mark.parametrize("how", sorted(CONTENDERS))
def test_two_writers_started_together_one_wins_each_round(table_uri: str, how: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    start, attempted, done = (ctx.Barrier(3) for _ in range(3))
    results = ctx.Queue()
    writers = [
        ctx.Process(target=contender, args=(table_uri, how, name, start, attempted, done, results))
        for name in ("w0", "w1")
    ]
    storage = Storage.from_uri(table_uri)
    dead_locks: list[bytes] = []
    with racing(writers, (start, attempted, done), WAIT_S):
        for round_no in range(ROUNDS):
            if how == "takeover":
                dead_locks.append(_leave_dead_lock(storage, round_no))
            start.wait(WAIT_S)
            attempted.wait(WAIT_S)
            outcomes = dict(reported(results, round_no, WAIT_S) for _ in writers)
            done.wait(WAIT_S)
            _check_round(storage, round_no, outcomes, dead_locks)


def _leave_dead_lock(storage: Storage, round_no: int) -> bytes:
    """A lock held by a process of this host that has exited (a crashed writer)."""
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], check=True, capture_output=True
    )
    pid = int(child.stdout)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, 0)
        pytest.skip(f"pid {pid} was reused at once")
    content = json.dumps(
        {"host": socket.gethostname(), "pid": pid, "operation": "crashed", "since": f"round {round_no}"}
    ).encode()
    assert storage.put_if_absent(LOCK_FILE, content)
    return content


def _check_round(storage: Storage, round_no: int, outcomes: dict[str, str], dead_locks: list[bytes]) -> None:
    winners = [w for w, outcome in outcomes.items() if outcome == "won"]
    losers = [outcome for outcome in outcomes.values() if outcome != "won"]
    assert len(winners) == 1, f"round {round_no}: {outcomes}"
    assert len(losers) == 1 and losers[0].startswith("conflict: "), f"round {round_no}: {outcomes}"
    assert "\n" not in losers[0]
    timeline = Timeline.load(storage)
    assert timeline.pending() == []
    commits = timeline.commits()
    assert len(commits) == round_no + 1
    latest = timeline.read(commits[-1])
    assert (latest["writer"], latest["round"]) == (winners[0], round_no)
    # Nothing of the losers: the winners' data files, their timeline files, no lock, no temp file;
    # one marker per dead lock taken over.
    expected = sorted(
        [timeline.read(c)["file"] for c in commits]
        + [f"{TIMELINE_DIR}/{c.file_name(state)}" for c in commits for state in tl.State]
        + [f"{LOCK_TAKEOVER_DIR}/{hashlib.sha256(dead).hexdigest()}" for dead in dead_locks]
    )
    assert sorted(e.rel for e in storage.list_files("", recursive=True)) == expected
    assert not storage.exists(LOCK_FILE)
