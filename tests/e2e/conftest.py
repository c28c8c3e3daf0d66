"""Fixtures of the end-to-end suites: the warehouse (`lake_warehouse`, tests/conftest.py) and the
RFC-63 events table (`events_table`), a real sidecar (`Sidecar`, as `lakeprune serve` runs it) in
this process serving both as two schemas, and a Trino or Presto server whose lakeprune catalog
points at it — a local process from the official tarball (always), and the
official container image when a Docker engine answers (skipped with the reason otherwise)."""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from pruner.engines.catalog import CATALOG_NAME, catalog_properties
from pruner.engines.spec import engine_spec
from pruner.serving.config import ServeConfig
from pruner.sidecar import Sidecar
from tests.e2e.engines import (
    HOST_FROM_CONTAINER,
    Engine,
    SharedTrino,
    container_address,
    container_engine,
    docker_unavailable_reason,
    lakeprune_catalog_properties,
    local_engine,
    shared_trino,
)
from tests.e2e.native import native_plugin_if_any
from tests.e2e.warehouse import SCHEMA_NAME

# The schema of the RFC-63 events table (`tests/support_events.py`).
EVENTS_SCHEMA = "rfc63"
# The schema of the text index's log table (`text_logs`).
LOGS_SCHEMA = "text"
# The schema of issue 38's people table (`people_table`).
PEOPLE_SCHEMA = "people"


def _start_sidecar(
    request: pytest.FixtureRequest, host: str, advertise: tuple[str, ...] = (), port: int = 0
) -> Sidecar:
    events: str = request.getfixturevalue("events_table")
    warehouse: Path = request.getfixturevalue("lake_warehouse")
    config = ServeConfig(
        {SCHEMA_NAME: str(warehouse), EVENTS_SCHEMA: str(Path(events).parent)},
        host=host,
        grpc_port=None,
        thrift_port=port,
        metrics_port=None,
        advertise=advertise,
    )
    sidecar = Sidecar(config).start()
    assert sidecar.wait_ready(30), "the sidecar did not load its catalog"
    return sidecar


@pytest.fixture(scope="session")
def text_logs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The log table with text indexes (`tests/e2e/text_logs.py`), under a root of its own."""
    from tests.e2e.text_logs import build_logs

    return build_logs(request.getfixturevalue("spark"), str(tmp_path_factory.mktemp("text") / "logs"))


@pytest.fixture(scope="session")
def dynamic_trino() -> Iterator[SharedTrino]:
    """The one local Trino of the e2e suites (the local Trino of `running`, `test_native_engine.py`,
    `test_load_faults.py`, `test_tpc.py`), each of which creates its catalogs on it and drops
    them when done; with the native connector where this checkout has one (the suites of the
    native catalog skip otherwise)."""
    with shared_trino(native_plugin_if_any()) as shared:
        yield shared


@pytest.fixture(scope="session")
def local_sidecar(request: pytest.FixtureRequest) -> Iterator[Sidecar]:
    sidecar = _start_sidecar(request, "127.0.0.1")
    yield sidecar
    sidecar.stop(2)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("", 0))
        return int(probe.getsockname()[1])


PAGED_CATALOG = "lakeprune_paged"
# The Thrift catalog of `running` on the session's shared Trino (elsewhere `lakeprune`).
RUNNING_CATALOG = "lakeprune_running"


def paged_catalog(kind: str, sidecar: str) -> dict[str, dict[str, str]]:
    """A second lakeprune catalog with the smallest max-response-size the engine accepts (1 MB),
    so that scans of the `wide` table take several GetRows pages."""
    spec = engine_spec(kind)
    properties = {p.key: p.value for p in catalog_properties(spec, sidecar)}
    properties[f"{spec.property_prefix}-thrift.max-response-size"] = "1MB"
    return {PAGED_CATALOG: properties}


def engine_fixture(kind: str, path: str, request: pytest.FixtureRequest) -> Iterator[tuple[Engine, Sidecar]]:
    """The engine of `kind` on `path` ("local" or "container") and the sidecar it uses."""
    if path == "local":
        sidecar: Sidecar = request.getfixturevalue("local_sidecar")
        address = f"127.0.0.1:{sidecar.thrift_port}"
        if kind == "trino":
            # The session's Trino, whose `lakeprune` the native suites create in turn: the Thrift
            # catalog here has a name of its own, as it lives as long as the session's parameter.
            shared: SharedTrino = request.getfixturevalue("dynamic_trino")
            thrift = lakeprune_catalog_properties(None, address)[CATALOG_NAME]
            catalogs = {RUNNING_CATALOG: thrift} | paged_catalog(kind, address)
            with shared.catalogs(catalogs) as engine:
                yield dataclasses.replace(engine, catalog=RUNNING_CATALOG), sidecar
            return
        with local_engine(kind, address, paged_catalog(kind, address)) as engine:
            yield engine, sidecar
        return
    reason = docker_unavailable_reason()
    if reason is not None:
        pytest.skip(f"container path skipped: {reason}")
    port = free_port()  # containers reach the sidecar through the host gateway, so it advertises that
    sidecar = _start_sidecar(request, "0.0.0.0", (f"{HOST_FROM_CONTAINER}:{port}",), port)
    try:
        address = f"127.0.0.1:{port}"
        with container_engine(kind, address, paged_catalog(kind, container_address(address))) as engine:
            yield engine, sidecar
    finally:
        sidecar.stop(2)


ENGINES = [
    pytest.param(("trino", path), id=f"trino-{path}", marks=pytest.mark.engine)
    for path in ("local", "container")
] + [
    pytest.param(("presto", path), id=f"presto-{path}", marks=[pytest.mark.engine, pytest.mark.presto])
    for path in ("local", "container")
]


@pytest.fixture(scope="session", params=ENGINES)
def running(request: pytest.FixtureRequest) -> Iterator[tuple[Engine, Sidecar]]:
    """Trino 476 and Presto 0.287, each as a local process and (with Docker) as a container."""
    yield from engine_fixture(*request.param, request)
