"""Two workers behind the same ports, started in-process by a `Supervisor` over the shared indexed
table: both serve the gRPC and the Thrift port, a Thrift `GetSplits` listing whose first page one
worker served and whose later pages the other served is still the one plan (the paging token is
valid on the worker that did not plan it: same split key), the metrics port shows the sum over the
workers and `/health` the workers by state (SERVING while one is being replaced), a worker killed
with SIGKILL is replaced while calls keep succeeding, and a stop leaves no
worker behind. Which worker a connection lands on is the kernel's choice (SO_REUSEPORT hashes the
connection): a test opens connections until it has one on each worker, seen in the workers' own
metrics, within a bound that two fair coins cannot miss in practice (2^-63)."""

from __future__ import annotations

import functools
import os
import signal
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import pytest
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport.TSocket import TSocket
from thrift.transport.TTransport import TFramedTransport

from pruner.client import PruningClient
from pruner.serving.config import ServeConfig
from pruner.supervisor.aggregate import parse
from pruner.supervisor.supervisor import Supervisor
from pruner.thrift import idl
from tests.pruner.thrift.support import bigint_range
from tests.support_http import health

SCHEMA = "lake"
TABLE = idl.SchemaTableName(SCHEMA, "events")
TIMEOUT_S = 60.0
TRIES = 64
T = TypeVar("T")


@pytest.fixture(scope="module")
def supervisor(lake: str) -> Iterator[Supervisor]:
    config = ServeConfig({SCHEMA: lake}, grpc_port=0, thrift_port=0, metrics_port=0, workers=2)
    with Supervisor(config, grace=2.0) as running:
        assert running.wait_ready(TIMEOUT_S)
        yield running


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        families = parse(response.read().decode())
    return {key: value for family in families.values() for key, value in family.samples.items()}


def requests(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], api: str) -> float:
    return sum(
        value
        for (name, labels), value in samples.items()
        if name == "lakeprune_requests_total" and ("api", api) in labels
    )


def per_worker(supervisor: Supervisor, api: str) -> dict[int, float]:
    """Requests of `api` each worker (by pid) counted so far, from its private metrics port."""
    return {pid: requests(scrape(port), api) for pid, port in supervisor.metrics_sources()}


def served_by(supervisor: Supervisor, api: str, call: Callable[[], T]) -> tuple[int, T]:
    """The pid of the one worker that counted `call`, and what `call` returned."""
    before = per_worker(supervisor, api)
    result = call()
    after = per_worker(supervisor, api)
    (pid,) = [p for p in after if after[p] != before.get(p, 0.0)]
    return pid, result


@contextmanager
def thrift_client(port: int) -> Iterator[Any]:
    sock = TSocket("127.0.0.1", port)
    sock.setTimeout(TIMEOUT_S * 1000)  # milliseconds
    transport = TFramedTransport(sock)
    transport.open()
    try:
        yield idl.Service.Client(TBinaryProtocolAccelerated(transport))
    finally:
        transport.close()


def splits_page(client: Any, token: idl.Id | None) -> idl.SplitBatch:
    constraint = bigint_range("seq", 100, 400)
    return client.trinoGetSplits(TABLE, idl.NullableColumnSet(None), constraint, 1, idl.NullableToken(token))


def split_ids(pages: list[idl.SplitBatch]) -> list[bytes]:
    return [split.splitId.id for page in pages for split in page.splits]


def test_both_workers_serve_the_grpc_port_and_the_metrics_are_their_sum(supervisor: Supervisor) -> None:
    assert len(supervisor.pids()) == 2
    assert supervisor.metrics_port is not None
    before = scrape(supervisor.metrics_port)
    seen: set[int] = set()
    calls = 0
    for _ in range(TRIES):
        with PruningClient(f"127.0.0.1:{supervisor.grpc_port}") as client:  # a new connection each
            seen.add(served_by(supervisor, "grpc", client.list_tables)[0])
        calls += 1
        if seen == set(supervisor.pids()):
            break
    assert seen == set(supervisor.pids())
    after = scrape(supervisor.metrics_port)
    assert requests(after, "grpc") - requests(before, "grpc") == calls
    assert requests(after, "grpc") == sum(per_worker(supervisor, "grpc").values())
    assert after[("lakeprune_workers", (("state", "ready"),))] == 2
    workers = {"configured": 2, "running": 2, "ready": 2}
    assert health(supervisor.metrics_port) == (200, {"status": "SERVING", "workers": workers, "restarts": 0})


def test_a_listing_paged_across_workers_is_one_plan(supervisor: Supervisor) -> None:
    assert supervisor.thrift_port is not None
    with thrift_client(supervisor.thrift_port) as alone:
        pages = [splits_page(alone, None)]
        while pages[-1].nextToken is not None:
            pages.append(splits_page(alone, pages[-1].nextToken))
    assert len(pages) > 2, "the listing must have several pages"
    with thrift_client(supervisor.thrift_port) as first:
        planner, page = served_by(supervisor, "thrift", functools.partial(splits_page, first, None))
        crossed = [page]
    for _ in range(TRIES):
        with thrift_client(supervisor.thrift_port) as other:
            if served_by(supervisor, "thrift", other.trinoListSchemaNames)[0] == planner:
                continue
            while crossed[-1].nextToken is not None:
                later = functools.partial(splits_page, other, crossed[-1].nextToken)
                worker, page = served_by(supervisor, "thrift", later)
                assert worker != planner
                crossed.append(page)
            break
    assert len(crossed) == len(pages), "no connection landed on the other worker"
    ids = split_ids(crossed)
    assert ids == split_ids(pages) and len(set(ids)) == len(ids)


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not condition():
        assert time.monotonic() < deadline, f"not within {TIMEOUT_S} s: {what}"
        time.sleep(0.1)


def test_a_killed_worker_is_replaced_and_calls_keep_succeeding(supervisor: Supervisor) -> None:
    assert supervisor.metrics_port is not None
    before = scrape(supervisor.metrics_port)
    restarts = supervisor.states().restarts
    victim, survivor = supervisor.pids()
    os.kill(victim, signal.SIGKILL)
    wait_until(lambda: supervisor.states().restarts == restarts + 1, "the supervisor saw the worker exit")
    status, report = health(supervisor.metrics_port)  # the survivor serves: SERVING throughout
    assert (status, report["status"], report["restarts"]) == (200, "SERVING", restarts + 1)
    assert report["workers"]["configured"] == 2 and report["workers"]["ready"] >= 1
    address = f"127.0.0.1:{supervisor.grpc_port}"
    for _ in range(10):  # while the replacement starts, the survivor answers
        with PruningClient(address) as client:
            assert [t.table for t in client.list_tables(SCHEMA)] == ["events"]
    wait_until(lambda: len(supervisor.pids()) == 2, "a replacement runs")
    assert survivor in supervisor.pids() and victim not in supervisor.pids()
    assert supervisor.wait_ready(TIMEOUT_S)
    for _ in range(10):
        with PruningClient(address) as client:
            assert [t.table for t in client.list_tables(SCHEMA)] == ["events"]
    after = scrape(supervisor.metrics_port)
    assert after[("lakeprune_worker_restarts_total", ())] == restarts + 1
    assert health(supervisor.metrics_port)[1]["workers"]["ready"] == 2
    assert requests(after, "grpc") >= requests(before, "grpc") + 20  # the victim's count is kept


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie does not: it has exited, and closed its ports)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_stop_leaves_no_worker_behind(lake: str) -> None:
    config = ServeConfig({SCHEMA: lake}, grpc_port=0, thrift_port=None, metrics_port=None, workers=2)
    supervisor = Supervisor(config, grace=2.0).start()
    pids = supervisor.pids()
    assert len(pids) == 2
    supervisor.stop()
    assert not [pid for pid in pids if alive(pid)]
