"""Running sidecars for the service tests: in-process, on free ports (0), Thrift off unless asked
for, called through real gRPC channels. `lake` is the warehouse root holding the shared indexed
table (read only); tests that change a table use `table_copy` (under a root of its own) and a
sidecar of their own."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from pruner.client import PruningClient
from pruner.metadata.files_index import DataFile
from pruner.planner import planner
from pruner.planner.planner import Planner
from pruner.planner.result import Split
from pruner.predicate.values import Value
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2_grpc as spb_grpc
from pruner.serving.config import Limits, Security, ServeConfig
from pruner.sidecar import Sidecar

SCHEMA = "lake"
TABLE = "events"
StartSidecar = Callable[..., Sidecar]


def make_config(
    root: str, limits: Limits | None = None, security: Security | None = None, **kwargs: Any
) -> ServeConfig:
    return ServeConfig(
        {SCHEMA: root},
        grpc_port=0,
        thrift_port=kwargs.pop("thrift_port", None),
        metrics_port=kwargs.pop("metrics_port", None),
        limits=limits or Limits(),
        security=security or Security(),
        **kwargs,
    )


@pytest.fixture
def start_sidecar() -> Iterator[StartSidecar]:
    """Start sidecars for one test (ready before they are returned); all are stopped after it."""
    started: list[Sidecar] = []

    def start(root: str, **kwargs: Any) -> Sidecar:
        sidecar = Sidecar(make_config(root, **kwargs)).start()
        started.append(sidecar)
        assert sidecar.wait_ready(10)
        return sidecar

    yield start
    for sidecar in started:
        sidecar.stop(0)


@pytest.fixture(scope="module")
def sidecar(lake: str) -> Iterator[Sidecar]:
    """One sidecar over the shared table, with metrics, for the tests that only read."""
    with Sidecar(make_config(lake, metrics_port=0)) as running:
        assert running.wait_ready(10)
        yield running


def address(sidecar: Sidecar) -> str:
    return f"127.0.0.1:{sidecar.grpc_port}"


@pytest.fixture
def client(sidecar: Sidecar) -> Iterator[PruningClient]:
    with PruningClient(address(sidecar)) as connected:
        yield connected


@pytest.fixture
def channel(sidecar: Sidecar) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(address(sidecar)) as opened:
        yield opened


@pytest.fixture
def stub(channel: grpc.Channel) -> Any:
    return spb_grpc.PruningServiceStub(channel)


@pytest.fixture
def slow_splits(monkeypatch: pytest.MonkeyPatch) -> list[DataFile]:
    """The files the planner decides from now on, in order: one a batch, 20 ms each, so that a
    stream is still planning while the test acts (cancels it, sends an equal request)."""
    monkeypatch.setattr(planner, "FILES_PER_BATCH", 1, raising=False)
    made: list[DataFile] = []
    split = Planner._split

    def slow(self: Planner, f: DataFile, typed: dict[str, dict[str, Value | None]]) -> Split:
        made.append(f)
        time.sleep(0.02)
        return split(self, f, typed)

    monkeypatch.setattr(Planner, "_split", slow)
    return made
