"""The load and fault suite (issue 17): one sidecar with two planning workers (`lakeprune serve
--workers 2`) under 32 concurrent gRPC clients and 8 concurrent Trino queries (the native catalog)
for 45 seconds (`LAKEPRUNE_LOAD_SECONDS`, longer for a soak), while a writer commits upserts every
few seconds; half-way through one worker is killed with SIGKILL.

It proves snapshot isolation under load: every gRPC prune names the snapshot it planned and returns
only files of that snapshot, each once, among them every file of that snapshot holding a matching
row (the oracle reads every file of the snapshot); every Trino answer equals the oracle's answer at
one snapshot that was current while the query ran — never a mix of two commits. And it proves the
fault handling: the killed worker is replaced, the service keeps answering, and the only calls that
fail are those in flight on the killed worker, each with an error that names the sidecar.
The run lasts `RUN_SECONDS`, longer while it is short of its minimums (`MIN_UPSERTS` commits,
`MIN_TRINO_QUERIES` queries, `MIN_GRPC_PRUNES` prunes: counts, which a fixed time would make a race
against the host's speed), but never more than `MAX_RUN_SECONDS`. Loopback only; bounded in time
(`MAX_RUN_SECONDS` plus start-up)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from builder import LakepruneTable
from pruner.client import PruningClient, ServiceError
from pruner.engines.native_catalog import NativeCatalog
from pruner.table.table import LakeTable
from tests.e2e.conftest import free_port
from tests.e2e.engines import Engine, SharedTrino, lakeprune_catalog_properties
from tests.e2e.native import native_plugin

pytestmark = [pytest.mark.slow, pytest.mark.engine, pytest.mark.load]

# 45 s: the kill at 22.5 s, its replacement and calls after it (the minimums below still hold the run
# open on a slow host); `LAKEPRUNE_LOAD_SECONDS=600` (say) makes it a soak.
RUN_SECONDS = float(os.environ.get("LAKEPRUNE_LOAD_SECONDS", "45"))
GRPC_CLIENTS = 32
TRINO_CLIENTS = 8
MIN_UPSERTS = 3  # commits during the run, so that prunes see several snapshots
MIN_TRINO_QUERIES = TRINO_CLIENTS * 3
MIN_GRPC_PRUNES = GRPC_CLIENTS * 10
MAX_RUN_SECONDS = max(RUN_SECONDS, 300.0)  # the run goes on past RUN_SECONDS until the minimums
WORKERS = 2
ROWS = 20_000
GROUPS = 4
UPSERT_KEYS = 200
WRITE_PAUSE_S = 2.0
CLIENT_PAUSE_S = 0.05  # between one client's calls: load, not a busy loop that starves the writer
SCHEMA, TABLE = "load", "items"
# How long after the kill a call may still fail: the kernel's reset of the killed worker's
# connections reaches a client that has just sent a call on one of them, and a client whose
# connection was reset waits out gRPC's first reconnect backoff (1 s, jittered by up to 20%), during
# which its calls fail at once with UNAVAILABLE ("failed to connect to all addresses").
KILL_SETTLE_S = 2.0


@dataclass(frozen=True)
class Predicate:
    sql: str  # the same text for the sidecar's binder and for Trino
    rows: pc.Expression  # the rows it matches, for the oracle


PREDICATES = (
    Predicate("id IN (17, 4242, 9999, 15001)", pc.field("id").isin([17, 4242, 9999, 15001])),
    Predicate("id = 123", pc.field("id") == 123),
    Predicate("id BETWEEN 5000 AND 5400", (pc.field("id") >= 5000) & (pc.field("id") <= 5400)),
    Predicate("grp = 2 AND id < 3000", (pc.field("grp") == 2) & (pc.field("id") < 3000)),
    Predicate("v >= 19000", pc.field("v") >= 19000),
    Predicate("v < -40000", pc.field("v") < -40000),
)


@dataclass(frozen=True)
class Call:
    """One call or query: when it ran (monotonic seconds) and what it answered or raised."""

    predicate: Predicate
    started: float
    ended: float
    snapshot: str | None = None  # gRPC: the snapshot the sidecar pruned
    files: tuple[str, ...] = ()  # gRPC: the kept files' names
    answer: tuple[int, int] | None = None  # Trino: count(*), sum(v)
    error: str | None = None


@dataclass(frozen=True)
class Commit:
    instant: str
    returned: float  # monotonic seconds when the write returned (published before that)


@dataclass
class Run:
    grpc: list[Call] = field(default_factory=list)
    trino: list[Call] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)
    killed_at: float | None = None
    killed_pid: int | None = None
    replaced_by: set[int] = field(default_factory=set)
    failures: list[str] = field(default_factory=list)  # of the writer and the harness


class Oracle:
    """Answers by reading every data file of a snapshot (files are immutable: read once)."""

    def __init__(self, location: str) -> None:
        self.table = LakeTable.open(location)
        self._rows: dict[str, pa.Table] = {}
        self._files: dict[str, list[str]] = {}
        self._matching: dict[tuple[str, str], set[str]] = {}

    def files(self, instant: str) -> list[str]:
        if instant not in self._files:
            storage = self.table.storage
            names = []
            for data_file in self.table.snapshot(instant).files():
                name = PurePosixPath(data_file.path).name
                if name not in self._rows:
                    self._rows[name] = pq.read_table(storage.path(data_file.path), filesystem=storage.fs)
                names.append(name)
            self._files[instant] = names
        return self._files[instant]

    def matching_files(self, instant: str, predicate: Predicate) -> set[str]:
        key = (instant, predicate.sql)
        if key not in self._matching:
            files = self.files(instant)
            self._matching[key] = {n for n in files if self._rows[n].filter(predicate.rows).num_rows}
        return self._matching[key]

    def answer(self, instant: str, predicate: Predicate) -> tuple[int, int]:
        rows = pa.concat_tables([self._rows[n] for n in self.files(instant)]).filter(predicate.rows)
        return rows.num_rows, int(pc.sum(rows["v"]).as_py() or 0)


# Fixtures ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def table(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> LakepruneTable:
    warehouse = tmp_path_factory.mktemp("load-warehouse")
    items = LakepruneTable.create(
        str(warehouse / TABLE),
        "id bigint, grp int, v bigint",
        record_key="id",
        partition_by=["grp"],
        properties={"write.target_file_size_bytes": 16 * 1024, "write.small_file_limit_bytes": 8 * 1024},
        spark=spark,
    )
    items.sql(f"CREATE INDEX stats ON {TABLE} USING column_stats (id, v)")
    rows = [(i, i % GROUPS, i) for i in range(ROWS)]
    items.insert(spark.createDataFrame(rows, "id bigint, grp int, v bigint"))
    return items


def worker_pids(supervisor: int) -> set[int]:
    """The supervisor's child processes: its planning workers (started with `subprocess`, so there
    is no other child)."""
    children: set[int] = set()
    for task in Path(f"/proc/{supervisor}/task").iterdir():
        children.update(int(pid) for pid in (task / "children").read_text().split())
    return children


@dataclass(frozen=True)
class Served:
    process: subprocess.Popen[bytes]  # the supervisor
    address: str
    log: Path  # its stderr (a request log line per call: a pipe nobody reads would block it)


@pytest.fixture(scope="module")
def sidecar(table: LakepruneTable, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`lakeprune serve --workers 2` (gRPC only) over the table's warehouse, as its own process."""
    address = f"127.0.0.1:{free_port()}"
    lakeprune = Path(sys.executable).with_name("lakeprune")
    warehouse = Path(table.location).parent
    command = [str(lakeprune), "serve", "-w", f"{SCHEMA}={warehouse}", "--workers", str(WORKERS)]
    command += ["--grpc-port", address.rpartition(":")[2], "--thrift-port", "off", "--metrics-port", "off"]
    log = tmp_path_factory.mktemp("load-sidecar") / "serve.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        _wait_serving(address, process, log)
        yield Served(process, address, log)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def _wait_serving(address: str, process: subprocess.Popen[bytes], log: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    with PruningClient(address, timeout=5) as client:
        while True:
            try:
                if client.list_tables(SCHEMA):
                    return
            except ServiceError:
                pass
            assert process.poll() is None, f"the sidecar exited: {log.read_text()[-2000:]}"
            assert time.monotonic() < deadline, "the sidecar did not serve its table in time"
            time.sleep(0.5)


@pytest.fixture(scope="module")
def trino(sidecar: Served, request: pytest.FixtureRequest) -> Iterator[Engine]:
    native_plugin()  # skips where this checkout has no connector to build
    shared: SharedTrino = request.getfixturevalue("dynamic_trino")
    catalog = NativeCatalog(sidecar.address, request_timeout="20s", max_attempts=3)
    with shared.catalogs(lakeprune_catalog_properties(catalog, None)) as engine:
        yield engine


# The run -------------------------------------------------------------------------------------------


def _loop(stop: threading.Event, seed: int, call: Callable[[Predicate], Call], into: list[Call]) -> None:
    rng = random.Random(seed)
    while not stop.is_set():
        into.append(call(rng.choice(PREDICATES)))
        stop.wait(CLIENT_PAUSE_S)


def _grpc_call(client: PruningClient) -> Callable[[Predicate], Call]:
    def call(predicate: Predicate) -> Call:
        started = time.monotonic()
        try:
            result = client.prune(SCHEMA, TABLE, predicate.sql)
        except ServiceError as exc:
            return Call(predicate, started, time.monotonic(), error=str(exc))
        names = tuple(PurePosixPath(s.path).name for s in result.splits)
        return Call(predicate, started, time.monotonic(), snapshot=result.snapshot, files=names)

    return call


def _trino_call(engine: Engine) -> Callable[[Predicate], Call]:
    def call(predicate: Predicate) -> Call:
        sql = f"SELECT count(*), coalesce(sum(v), 0) FROM {SCHEMA}.{TABLE} WHERE {predicate.sql}"
        started = time.monotonic()
        try:
            (count, total), *_ = engine.query(sql)
        except Exception as exc:  # the client raises its own error types; any failure is recorded
            return Call(predicate, started, time.monotonic(), error=f"{type(exc).__name__}: {exc}")
        return Call(predicate, started, time.monotonic(), answer=(int(count), int(total)))

    return call


def _writer(items: LakepruneTable, spark: SparkSession, stop: threading.Event, run: Run) -> None:
    rng = random.Random(17)
    try:
        while not stop.is_set():
            keys = rng.sample(range(ROWS), UPSERT_KEYS)
            rows = [(k, k % GROUPS, rng.randint(-50_000, 50_000)) for k in keys]
            result = items.upsert(spark.createDataFrame(rows, "id bigint, grp int, v bigint"))
            assert result.instant is not None
            run.commits.append(Commit(result.instant, time.monotonic()))
            stop.wait(WRITE_PAUSE_S)
    except Exception as exc:
        run.failures.append(f"writer: {type(exc).__name__}: {exc}")


def _killer(supervisor: int, stop: threading.Event, run: Run) -> None:
    if stop.wait(RUN_SECONDS / 2):
        return
    before = worker_pids(supervisor)
    if len(before) != WORKERS:
        run.failures.append(f"expected {WORKERS} workers before the kill, found {sorted(before)}")
        return
    victim = min(before)
    run.killed_at = time.monotonic()
    run.killed_pid = victim
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not stop.is_set():
        now = worker_pids(supervisor)
        if len(now) == WORKERS and victim not in now:
            run.replaced_by = now - before
            return
        time.sleep(0.2)
    run.failures.append(
        f"worker {victim} was not replaced within 30 s (workers: {sorted(worker_pids(supervisor))})"
    )


@pytest.fixture(scope="module")
def run(
    spark: SparkSession,
    table: LakepruneTable,
    sidecar: Served,
    trino: Engine,
) -> Run:
    process, address = sidecar.process, sidecar.address
    history = table.history()
    result = Run(commits=[Commit(history[-1]["instant"], time.monotonic())])
    stop = threading.Event()
    clients = [PruningClient(address, timeout=30) for _ in range(GRPC_CLIENTS)]
    grpc_lists: list[list[Call]] = [[] for _ in clients]
    trino_lists: list[list[Call]] = [[] for _ in range(TRINO_CLIENTS)]
    threads = [
        threading.Thread(target=_loop, args=(stop, i, _grpc_call(c), grpc_lists[i]), name=f"grpc-{i}")
        for i, c in enumerate(clients)
    ]
    threads += [
        threading.Thread(
            target=_loop, args=(stop, 100 + i, _trino_call(trino), trino_lists[i]), name=f"trino-{i}"
        )
        for i in range(TRINO_CLIENTS)
    ]
    threads.append(threading.Thread(target=_writer, args=(table, spark, stop, result), name="writer"))
    threads.append(threading.Thread(target=_killer, args=(process.pid, stop, result), name="killer"))
    try:
        for thread in threads:
            thread.start()
        stop.wait(RUN_SECONDS)
        deadline = time.monotonic() + MAX_RUN_SECONDS - RUN_SECONDS
        while (
            _short_of_minimums(result, grpc_lists, trino_lists)
            and not result.failures
            and time.monotonic() < deadline
        ):
            stop.wait(0.5)
    finally:
        stop.set()
        for thread in threads:
            thread.join(120)
        for client in clients:
            client.close()
    result.grpc = [c for calls in grpc_lists for c in calls]
    result.trino = [c for calls in trino_lists for c in calls]
    return result


def _short_of_minimums(run: Run, grpc_lists: list[list[Call]], trino_lists: list[list[Call]]) -> bool:
    """Whether the run so far has fewer upserts, Trino queries or gRPC prunes than it promises."""
    return (
        len(run.commits) - 1 < MIN_UPSERTS  # the first commit is the table's insert
        or sum(map(len, trino_lists)) < MIN_TRINO_QUERIES
        or sum(map(len, grpc_lists)) < MIN_GRPC_PRUNES
    )


# Checks --------------------------------------------------------------------------------------------


def test_the_run_did_what_it_promised(run: Run) -> None:
    """The writer committed every few seconds, the worker was killed and replaced, and both kinds
    of caller kept the sidecar busy."""
    assert not run.failures, run.failures
    upserts = len(run.commits) - 1  # the first is the table's insert
    assert upserts >= MIN_UPSERTS, f"only {upserts} upsert(s) committed during the run"
    assert run.killed_at is not None and run.replaced_by, "no worker was killed and replaced"
    assert len(run.grpc) >= MIN_GRPC_PRUNES, f"only {len(run.grpc)} gRPC prunes ran"
    assert len(run.trino) >= MIN_TRINO_QUERIES, f"only {len(run.trino)} Trino queries ran"
    after_kill = [c for c in run.grpc if c.started > run.killed_at + KILL_SETTLE_S]
    assert after_kill, "no gRPC prune ran after the kill"
    failed = sum(1 for c in run.grpc + run.trino if c.error is not None)
    print(  # shown with -s / -rA: what the run did
        f"load run: {len(run.grpc)} gRPC prunes, {len(run.trino)} Trino queries, "
        f"{len(run.commits) - 1} upserts committed, {failed} call(s) failed at the kill"
    )


def _in_flight_at_kill(run: Run, call: Call) -> bool:
    assert run.killed_at is not None
    return call.started <= run.killed_at + KILL_SETTLE_S and call.ended >= run.killed_at


def test_only_calls_in_flight_on_the_killed_worker_fail(run: Run) -> None:
    for calls in (run.grpc, run.trino):
        failed = [c for c in calls if c.error is not None]
        for call in failed:
            assert run.killed_at is not None and _in_flight_at_kill(run, call), (
                f"a call failed away from the kill: {call.error}"
            )
            assert "UNAVAILABLE" in call.error or "sidecar" in call.error, call.error
    in_flight = [c for c in run.grpc if run.killed_at is not None and _in_flight_at_kill(run, c)]
    failed_grpc = [c for c in run.grpc if c.error is not None]
    assert len(failed_grpc) <= len(in_flight)


def test_every_prune_is_a_superset_of_its_snapshot_and_nothing_else(run: Run, table: LakepruneTable) -> None:
    oracle = Oracle(table.location)
    checked = 0
    for call in run.grpc:
        if call.error is not None:
            continue
        assert call.snapshot is not None
        assert len(set(call.files)) == len(call.files), f"{call.predicate.sql}: a file returned twice"
        live = set(oracle.files(call.snapshot))
        assert set(call.files) <= live, (
            f"{call.predicate.sql}: files of another snapshot than {call.snapshot}"
        )
        missing = oracle.matching_files(call.snapshot, call.predicate) - set(call.files)
        assert not missing, f"{call.predicate.sql} at {call.snapshot}: dropped {sorted(missing)}"
        checked += 1
    snapshots = {c.snapshot for c in run.grpc if c.error is None}
    assert checked and len(snapshots) >= 3, f"prunes saw only the snapshots {sorted(map(str, snapshots))}"


def test_every_trino_answer_is_one_snapshots_answer(run: Run, table: LakepruneTable) -> None:
    oracle = Oracle(table.location)
    returned = [c.returned for c in run.commits]
    for call in run.trino:
        if call.error is not None:
            continue
        first = max(i for i, t in enumerate(returned) if t <= call.started)
        last = max(i for i, t in enumerate(returned) if t <= call.ended)
        # A commit is published before its write returns: the next one may already be visible.
        candidates = run.commits[first : last + 2]
        answers = {c.instant: oracle.answer(c.instant, call.predicate) for c in candidates}
        assert call.answer in answers.values(), (
            f"{call.predicate.sql}: Trino answered {call.answer}, the snapshots current while it ran "
            f"answer {answers}"
        )
