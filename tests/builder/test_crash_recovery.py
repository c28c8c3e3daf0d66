"""A writer killed (SIGKILL: no cleanup, no exception handler, no lock release) at each step of a
commit that is a separate point on storage, on a local disk and on S3 (the session's SeaweedFS
server). The writer is a child process with one function of the commit protocol patched to kill it
when called; it runs an upsert through `LakepruneTable`:

- `locked`: the lock is taken and the input planned, nothing is on the timeline yet;
- `requested`: the requested state is published, the inflight state (what it will write) not yet;
- `data_written`: the inflight state and the data files are written, the index logs not yet;
- `indexes_written`: the record-index and `files` logs are written too, the completed state not yet;
- `completed`: the completed state is published (one object: a put-if-absent), the lock is not
  released yet (the commit's follow-up compaction has not started);

or, without Spark, an index compaction (`compact_linked`, local disks only: there creating a file
if absent is two steps, a hidden temporary file hard-linked to the final name and then removed, and
the compaction dies between them for its completed state).

Until the completed state exists the table reads exactly as before the write (same snapshot, same
files, same rows); from then on it reads as the committed action. Either way the dead writer's lock
is taken over by the next writer (its holder is a dead process of this host; a lock of another host,
whose holder cannot be checked, is refused with the hand-removal message and nothing is written),
which rolls the dead instant back (every file named with it deleted, on S3 too) and commits; after
`clean` every file under the table is one that a retained snapshot, the timeline or a lock takeover
needs. Local disks are tested at the historical point (`indexes_written`) and `compact_linked`, S3
at every writer point: each writer child starts a Spark of its own (local[1]). The table before the
kill is written once, locally, and copied for each selected case; the writers of all cases are
started at once in the background, `PARALLEL_WRITERS` at a time, and each test checks its own."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import pytest
from pyspark.sql import SparkSession

from builder import LakepruneTable
from builder.cleaner import clean
from builder.compaction import compact
from builder.session import spark_session
from pruner.errors import TableLockedError
from pruner.format.layout import LOCK_FILE, LOCK_TAKEOVER_DIR, META_DIR, TABLE_JSON, TIMELINE_DIR, written_by
from pruner.format.timeline import Action, State
from pruner.metadata.files_index import DataFile
from pruner.storage import Storage
from pruner.table.table import LakeTable
from tests.support import CITIES, Row, contents, copy_table, create, make_row, to_df
from tests.support_s3 import TEST_BUCKET, SeaweedS3, point_environment_at

# What the killed writer upserts: ten keys moved to (or kept in) "ams" and one new key.
CHILD_ROWS = [make_row(k, "ams", version=5) for k in range(0, 30, 3)] + [make_row(500, "zrh")]
BASE_ROWS = [make_row(k, CITIES[k % 3]) for k in range(30)]
CHILD_TIMEOUT_S = 300
PARALLEL_WRITERS = 2  # killed writers running at a time: each is a Spark of its own


def _die(*_: object, **__: object) -> NoReturn:
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("SIGKILL did not kill the writer")


def _die_when_called(target: str) -> Callable[[], None]:
    """A patch: calling `module:attribute.path` kills the process (before it does anything)."""

    def patch() -> None:
        module_name, _, path = target.partition(":")
        owner: object = importlib.import_module(module_name)
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        setattr(owner, name, _die)

    return patch


def _die_after_linking_completed() -> None:
    """A patch: the process dies right after hard-linking a completed state into the timeline,
    before it removes the temporary file it linked."""
    link = os.link

    def link_then_die(src: str, dst: str) -> None:
        link(src, dst)
        if dst.endswith(f".{State.COMPLETED}"):
            _die()

    os.link = link_then_die  # type: ignore[assignment]


@dataclass(frozen=True)
class KillPoint:
    """Where a writer dies, and what it got to do before."""

    patch: Callable[[], None]
    action: Action = Action.COMMIT  # COMMIT: the upsert of CHILD_ROWS; COMPACTION: `compact`
    requested: bool = True  # the instant is on the timeline
    state: State = State.INFLIGHT  # ... in this state
    data: bool = False  # files of the instant: data files
    index: bool = False  # ... index files


KILL_POINTS = {
    "locked": KillPoint(_die_when_called("pruner.format.timeline:request"), requested=False),
    "requested": KillPoint(_die_when_called("pruner.format.timeline:mark_inflight"), state=State.REQUESTED),
    "data_written": KillPoint(_die_when_called("builder.write.writer:write_logs"), data=True),
    "indexes_written": KillPoint(
        _die_when_called("builder.instants:PendingInstant.complete"), data=True, index=True
    ),
    "completed": KillPoint(
        _die_when_called("builder.write.writer:compact_locked"), state=State.COMPLETED, data=True, index=True
    ),
    "compact_linked": KillPoint(
        _die_after_linking_completed, action=Action.COMPACTION, state=State.COMPLETED, index=True
    ),
}
CASES = [
    ("local", "indexes_written"),
    ("local", "compact_linked"),
    *(("s3", point) for point, kill in KILL_POINTS.items() if kill.action == Action.COMMIT),
]


def run_killed_writer() -> None:
    """The child: `python -c ... <table uri> <kill point>`; dies at the point (or exits 0)."""
    uri, point = sys.argv[1:]
    kill = KILL_POINTS[point]
    kill.patch()
    if kill.action == Action.COMPACTION:
        compact(uri, force=True)
    else:
        spark = spark_session(master="local[1]")
        LakepruneTable(uri, spark).upsert(to_df(spark, CHILD_ROWS))


@pytest.fixture(scope="module")
def base_table(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Storage:
    """The table before the kill, written once: BASE_ROWS inserted."""
    location = str(tmp_path_factory.mktemp("crash_base") / "t")
    create(location, spark).insert(to_df(spark, BASE_ROWS))
    return Storage.from_uri(location)


def _files(storage: Storage) -> set[str]:
    return {e.rel for e in storage.list_files("", recursive=True)}


def _of_instant(storage: Storage, timestamp: str) -> set[str]:
    """Data and index files named with the instant, and its timeline files."""
    return {
        rel
        for rel in _files(storage)
        if written_by(rel.rpartition("/")[2]) == timestamp or rel.startswith(f"{TIMELINE_DIR}/{timestamp}.")
    }


@dataclass(frozen=True)
class Crash:
    """A case's table, what it was before the kill, and the killed writer's process id (once dead)."""

    storage: Storage
    instants_before: frozenset[str]
    snapshot_before: str | None
    files_before: list[DataFile]
    pid: Future[int]


@dataclass
class _Writers:
    """The killed writers' processes, so that they can be stopped should the tests end first."""

    env: dict[str, str]
    lock: threading.Lock = field(default_factory=threading.Lock)
    running: list[subprocess.Popen[str]] = field(default_factory=list)
    stopping: bool = False

    def kill(self, uri: str, point: str) -> int:
        """Run the writer that dies at `point`; its process id."""
        with self.lock:
            if self.stopping:
                raise RuntimeError("the tests ended first")
            child = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    "from tests.builder.test_crash_recovery import run_killed_writer; run_killed_writer()",
                    uri,
                    point,
                ],
                cwd=Path(__file__).parents[2],
                env=self.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            self.running.append(child)
        try:
            _, stderr = child.communicate(timeout=CHILD_TIMEOUT_S)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        assert child.returncode == -signal.SIGKILL, stderr[-3000:]
        return child.pid

    def stop(self) -> None:
        with self.lock:
            self.stopping = True
            for child in self.running:
                if child.poll() is None:
                    child.kill()


def _selected_cases(request: pytest.FixtureRequest) -> list[tuple[str, str]]:
    """The cases of this module that the session runs, in order."""
    return [
        item.callspec.params["case"]
        for item in request.session.items
        if isinstance(item, pytest.Function) and item.module is request.module and hasattr(item, "callspec")
    ]


@pytest.fixture(scope="module")
def crashes(
    request: pytest.FixtureRequest, base_table: Storage, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[tuple[str, str], Crash]]:
    """Each selected case's copy of the base table, with its writer being killed in the background."""
    selected = _selected_cases(request)
    local_root = tmp_path_factory.mktemp("crashes")
    before: dict[tuple[str, str], tuple[Storage, frozenset[str], str | None, list[DataFile]]] = {}
    with contextlib.ExitStack() as s3_environment:
        if any(where == "s3" for where, _ in selected):
            server: SeaweedS3 = request.getfixturevalue("s3_server")
            point_environment_at(server, s3_environment.enter_context(pytest.MonkeyPatch.context()))
            s3_root = f"s3://{server.new_bucket(TEST_BUCKET)}/{uuid.uuid4().hex}"
        for where, point in selected:
            uri = str(local_root / point) if where == "local" else f"{s3_root}/{point}"
            storage = Storage.from_uri(copy_table(base_table.uri, uri))
            table = LakeTable.open(uri)
            instants = frozenset(i.timestamp for i in table.timeline.instants)
            before[(where, point)] = storage, instants, table.snapshot().instant, table.snapshot().files()
        writers = _Writers(dict(os.environ))  # the children reach S3 as this process does now
    pool = ThreadPoolExecutor(PARALLEL_WRITERS)
    try:
        yield {
            case: Crash(*state, pool.submit(writers.kill, state[0].uri, case[1]))
            for case, state in before.items()
        }
    finally:
        writers.stop()
        pool.shutdown(wait=True, cancel_futures=True)


def _check_left(storage: Storage, kill: KillPoint, dead_instant: str | None) -> None:
    """What the killed writer left on storage is what its kill point says it got to."""
    timeline = LakeTable.open(storage.uri).timeline
    if not kill.requested:
        assert dead_instant is None
        assert timeline.pending() == []
        return
    assert dead_instant is not None
    instant = timeline.get(dead_instant)
    assert (instant.action, instant.state) == (kill.action, kill.state)
    written = {rel for rel in _of_instant(storage, dead_instant) if not rel.startswith(f"{TIMELINE_DIR}/")}
    data = {rel for rel in written if not rel.startswith(f"{META_DIR}/")}
    assert (bool(data), bool(written - data)) == (kill.data, kill.index), written


def _check_foreign_lock_refused(storage: Storage, spark: SparkSession, dead_lock: bytes) -> None:
    """A lock whose holder is on another host cannot be checked for liveness: the writer refuses
    it, saying how to remove it, and writes nothing. The dead local lock is then put back."""
    foreign = json.dumps({**json.loads(dead_lock), "host": "elsewhere.invalid"}).encode()
    storage.delete(LOCK_FILE)
    assert storage.put_if_absent(LOCK_FILE, foreign)
    before = _files(storage)
    with pytest.raises(TableLockedError, match=r"on host elsewhere\.invalid .*if no writer is running there"):
        LakepruneTable(storage.uri, spark).upsert(to_df(spark, [make_row(1, "ber", version=8)]))
    assert _files(storage) == before
    storage.delete(LOCK_FILE)
    assert storage.put_if_absent(LOCK_FILE, dead_lock)


def _needed_after_clean(storage: Storage) -> set[str]:
    """The data and index files of the retained snapshots, and the timeline's files."""
    table = LakeTable.open(storage.uri)
    retained = [
        i.timestamp for i in table.timeline.completed() if i.timestamp >= (table.earliest_retained() or "")
    ]
    data = {f.path for t in retained for f in table.snapshot(t).files()}
    index = {
        p
        for t in retained
        for spec in table.index_partition_specs()
        for p in table.snapshot(t).index_partition(spec).file_paths()
    }
    timeline = {f"{TIMELINE_DIR}/{i.file_name(state)}" for i in table.timeline.completed() for state in State}
    return data | index | timeline


@pytest.mark.parametrize("case", CASES, ids=[f"{where}-{point}" for where, point in CASES])
def test_writer_killed_mid_commit(
    request: pytest.FixtureRequest,
    spark: SparkSession,
    crashes: dict[tuple[str, str], Crash],
    case: tuple[str, str],
) -> None:
    if case[0] == "s3":
        request.getfixturevalue("s3_environment")  # this process's clients (Spark too) reach S3
    crash = crashes[case]
    storage, kill, uri = crash.storage, KILL_POINTS[case[1]], crash.storage.uri
    reference: dict[int, Row] = {r["id"]: r for r in BASE_ROWS}

    pid = crash.pid.result()

    crashed = LakeTable.open(uri)
    new = {i.timestamp for i in crashed.timeline.instants} - crash.instants_before
    assert len(new) == kill.requested, new
    dead_instant = new.pop() if new else None
    _check_left(storage, kill, dead_instant)
    if kill.state == State.COMPLETED:  # committed: the new snapshot, whole
        assert crashed.snapshot().instant == dead_instant
        if kill.action == Action.COMMIT:
            reference.update({r["id"]: r for r in CHILD_ROWS})
    else:  # not committed: exactly as before
        assert crashed.snapshot().instant == crash.snapshot_before
        assert crashed.snapshot().files() == crash.files_before
    assert contents(uri) == reference
    dead_lock = storage.read_bytes(LOCK_FILE)
    assert json.loads(dead_lock)["pid"] == pid

    _check_foreign_lock_refused(storage, spark, dead_lock)

    # The next writer takes the dead lock over, rolls the dead instant back, and commits.
    update = [make_row(7, "ber", version=9), make_row(501, "cdg")]
    LakepruneTable(uri, spark).upsert(to_df(spark, update))
    reference.update({r["id"]: r for r in update})
    assert not storage.exists(LOCK_FILE)
    marker = f"{LOCK_TAKEOVER_DIR}/{hashlib.sha256(dead_lock).hexdigest()}"
    assert storage.exists(marker)
    after = LakeTable.open(uri)
    assert after.timeline.pending() == []
    if kill.state == State.COMPLETED:
        assert dead_instant in after.timeline.completed_timestamps()
    elif dead_instant is not None:
        assert _of_instant(storage, dead_instant) == set()
    assert contents(uri) == reference

    # After clean every file is needed: by a retained snapshot, the timeline, or a takeover marker.
    clean(uri)
    assert _files(storage) == _needed_after_clean(storage) | {TABLE_JSON, marker}
    assert contents(uri) == reference
