"""`lakeprune serve --workers 2 --worker-grpc-port`: each worker also serves gRPC alone on a port of
its own, and a client that spreads its calls over those ports as Trino's connector does over its
addresses (one channel per address, each call on the next address, several scans at once) has
every worker serve its share: neither of two above 65%, counted by the workers' own metrics.
Over the shared port, one such client's calls all stay on whichever worker its one connection
reached — the imbalance the worker ports remove. The table is created without Spark (no commits:
GetTable, GetTableStatistics and PruneStream all answer, with nothing to prune)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pruner.client import PruningClient
from pruner.format.config import TableConfig, create_config
from pruner.serving.config import ConfigError, ServeConfig
from pruner.storage import Storage
from pruner.supervisor.supervisor import Supervisor
from pruner.types import TableSchema
from tests.pruner.supervisor.test_supervisor import per_worker

SCHEMA = "lake"
TABLE = "orders"
TIMEOUT_S = 60.0
SCANS = 4  # split sources Trino runs at once
CALLS_PER_SCAN = 40
MAX_SHARE = 0.65


@pytest.fixture(scope="module")
def supervisor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Supervisor]:
    root = tmp_path_factory.mktemp("worker-ports")
    storage = Storage.from_uri(str(root / TABLE))
    create_config(
        storage, TableConfig(TABLE, TableSchema.parse("o_orderkey bigint, o_custkey bigint"), ("o_orderkey",))
    )
    config = ServeConfig(
        {SCHEMA: str(root)}, grpc_port=0, thrift_port=None, metrics_port=0, workers=2, worker_grpc_port=0
    )
    with Supervisor(config, grace=2.0) as running:
        assert running.wait_ready(TIMEOUT_S)
        yield running


class RoundRobin:
    """What the connector's SidecarClient does: one channel per address, each call starting at the
    next address (an atomic counter shared by all threads)."""

    def __init__(self, addresses: list[str]) -> None:
        self.clients = [PruningClient(a) for a in addresses]
        self._next = itertools.count()
        self._lock = threading.Lock()

    def client(self) -> PruningClient:
        with self._lock:
            return self.clients[next(self._next) % len(self.clients)]

    def close(self) -> None:
        for client in self.clients:
            client.close()


def scan(clients: RoundRobin) -> None:
    """One table scan's calls as Trino makes them: describe, statistics, then splits."""
    for _ in range(CALLS_PER_SCAN // 4):
        clients.client().get_table(SCHEMA, TABLE)
        clients.client().statistics(SCHEMA, TABLE)
        clients.client().prune(SCHEMA, TABLE, "o_custkey IN (1, 2, 3)")
        clients.client().prune(SCHEMA, TABLE, "o_orderkey > 10")


def shares(supervisor: Supervisor, addresses: list[str]) -> list[float]:
    """Each worker's share of the gRPC calls of `SCANS` concurrent scans over `addresses`."""
    before = per_worker(supervisor, "grpc")
    clients = RoundRobin(addresses)
    try:
        with ThreadPoolExecutor(SCANS) as pool:
            list(pool.map(lambda _: scan(clients), range(SCANS)))
    finally:
        clients.close()
    counts = [value - before.get(pid, 0.0) for pid, value in per_worker(supervisor, "grpc").items()]
    assert sum(counts) >= SCANS * CALLS_PER_SCAN  # a prune by SQL text describes the table first
    return sorted(v / sum(counts) for v in counts)


def test_each_worker_answers_alone_on_its_own_port(supervisor: Supervisor) -> None:
    assert len(set(supervisor.worker_grpc_ports)) == 2
    for port in supervisor.worker_grpc_ports:
        before = per_worker(supervisor, "grpc")
        with PruningClient(f"127.0.0.1:{port}") as client:
            for _ in range(5):
                client.get_table(SCHEMA, TABLE)
        after = per_worker(supervisor, "grpc")
        assert sorted(after[p] - before.get(p, 0.0) for p in after) == [0.0, 5.0]


def test_calls_spread_over_the_worker_ports_keep_every_worker_busy(supervisor: Supervisor) -> None:
    spread = shares(supervisor, [f"127.0.0.1:{p}" for p in supervisor.worker_grpc_ports])
    print(f"worker shares over the worker ports: {spread}")
    assert len(spread) == 2 and max(spread) <= MAX_SHARE, spread
    # the same client over the shared port: one connection, one worker
    assert supervisor.grpc_port is not None
    assert shares(supervisor, [f"127.0.0.1:{supervisor.grpc_port}"])[-1] == 1.0


def test_worker_ports_must_not_overlap_the_shared_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="among the workers' own gRPC ports 7000-7001"):
        ServeConfig({SCHEMA: str(tmp_path)}, grpc_port=7001, workers=2, worker_grpc_port=7000)
    with pytest.raises(ConfigError, match="beyond 65535"):
        ServeConfig({SCHEMA: str(tmp_path)}, workers=2, worker_grpc_port=65535)
