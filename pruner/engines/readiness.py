"""When a freshly started engine can serve queries on its lakeprune catalogs. First the node must
answer `SELECT 1`; then, for each lakeprune catalog, a query that reaches the connector and runs
on the node's tasks: `SHOW SCHEMAS FROM <catalog>` and, where the catalog lists a table, reading one
row of it. Right after `SELECT 1` answers, such a query can still fail with NO_NODES_AVAILABLE (the
node has not yet announced the catalog to the coordinator's node manager); those errors, and the
ones of a server still starting, are waited out. A catalog whose sidecar accepts no TCP connection
is not probed (the engine would retry for up to a minute) and neither is one whose connector
answers with its own error: the engine is ready, the sidecar is not, and that is reported as a
warning. The instance's other catalogs (`tpch`, `hive` ...) get the same wait on `SHOW SCHEMAS`, so
that a first statement on them does not meet NO_NODES_AVAILABLE either. Waiting is bounded;
progress goes to logging every PROGRESS_INTERVAL_S."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from pruner.engines.errors import EngineStartError, StatementFailedError
from pruner.engines.probe import run_statement, server_info
from pruner.engines.spec import EngineSpec

logger = logging.getLogger(__name__)
T = TypeVar("T")

POLL_INTERVAL_S = 0.5
PROGRESS_INTERVAL_S = 10.0
CONNECT_TIMEOUT_S = 2.0
STATEMENT_TIMEOUT_S = 30.0
# Errors of an engine that is not ready yet (rather than of a connector or sidecar).
NOT_READY_ERRORS = frozenset({"NO_NODES_AVAILABLE", "SERVER_STARTING_UP", "CATALOG_NOT_FOUND"})


@dataclass(frozen=True)
class Target:
    """The engine to wait for: where it answers, and how to tell that it died and where its log is."""

    spec: EngineSpec
    host: str
    port: int
    alive: Callable[[], bool]
    log_excerpt: Callable[[], str]

    @property
    def name(self) -> str:
        return f"{self.spec.display_name} {self.spec.version}"


class NotReadyError(Exception):
    """One probe found the engine not ready yet; the message says why."""


def wait_until_ready(
    target: Target,
    catalogs: Mapping[str, Sequence[str]],
    timeout: float,
    other_catalogs: Sequence[str] = (),
) -> list[str]:
    """Wait until `SELECT 1` and a query on each lakeprune catalog (name -> its sidecar addresses)
    and on each of `other_catalogs` run; returns warnings about catalogs whose sidecar or connector
    does not answer. Raises EngineStartError (with the log excerpt) if the engine exits or
    `timeout` passes."""
    deadline = time.monotonic() + timeout
    _wait(target, "SELECT 1", lambda: _select_one(target), deadline, timeout)
    warnings: list[str] = []
    for catalog in other_catalogs:
        outcome = _wait(
            target, f"catalog {catalog}", partial(_probe_schemas, target, catalog), deadline, timeout
        )
        warnings.extend(f"catalog {catalog}: {message}" for message in outcome)
    for catalog, addresses in catalogs.items():
        if not any(_accepts_connections(address) for address in addresses):
            warnings.append(
                f"catalog {catalog}: no sidecar accepts connections at {','.join(addresses)}; its "
                "queries fail until one does"
            )
            continue
        outcome = _wait(
            target, f"catalog {catalog}", partial(_probe_catalog, target, catalog), deadline, timeout
        )
        warnings.extend(f"catalog {catalog}: {message}" for message in outcome)
    return warnings


def _wait(target: Target, what: str, probe: Callable[[], T], deadline: float, timeout: float) -> T:
    started = time.monotonic()
    next_report = started + PROGRESS_INTERVAL_S
    while True:
        if not target.alive():
            raise EngineStartError(f"{target.name} exited during startup; {target.log_excerpt()}")
        try:
            return probe()
        except NotReadyError as exc:
            reason = str(exc)
        now = time.monotonic()
        if now >= deadline:
            raise EngineStartError(
                f"{target.name} could not run a query on {what} within {timeout:.0f} s ({reason}); "
                f"stopped it; {target.log_excerpt()}"
            )
        if now >= next_report:
            logger.info("  ... waiting for %s (%.0f s): %s", what, now - started, reason)
            next_report = now + PROGRESS_INTERVAL_S
        time.sleep(POLL_INTERVAL_S)


def _select_one(target: Target) -> None:
    info = server_info(target.host, target.port)
    if info is None:
        raise NotReadyError("no answer on /v1/info")
    if info.get("starting") is not False:
        raise NotReadyError("/v1/info still says starting")
    rows = _run(target, "SELECT 1")
    if rows != [[1]]:
        raise NotReadyError(f"SELECT 1 returned {rows!r}")


def _probe_catalog(target: Target, catalog: str) -> list[str]:
    """Raises NotReadyError while the engine is not ready for `catalog`; returns warnings once it is."""
    try:
        schemas = [row[0] for row in _run(target, f'SHOW SCHEMAS FROM "{catalog}"')]
        for schema in (s for s in schemas if s != "information_schema"):
            tables = [row[0] for row in _run(target, f'SHOW TABLES FROM "{catalog}"."{schema}"')]
            if tables:
                table = f'"{catalog}"."{schema}"."{tables[0]}"'
                _run(target, f"SELECT count(*) FROM (SELECT 1 FROM {table} LIMIT 1)")
                break
    except StatementFailedError as exc:
        return [f"the engine is up, but the connector failed: {exc}"]
    return []


def _probe_schemas(target: Target, catalog: str) -> list[str]:
    """Raises NotReadyError while the engine is not ready for `catalog`; returns warnings once it is."""
    try:
        _run(target, f'SHOW SCHEMAS FROM "{catalog}"')
    except StatementFailedError as exc:
        return [f"the engine is up, but the connector failed: {exc}"]
    return []


def _run(target: Target, sql: str) -> list[list[object]]:
    try:
        return run_statement(target.spec, target.host, target.port, sql, timeout=STATEMENT_TIMEOUT_S)
    except StatementFailedError as exc:
        # No error name: the HTTP exchange itself failed (the server is not listening yet).
        if exc.error_name is None or exc.error_name in NOT_READY_ERRORS:
            raise NotReadyError(f"{sql}: {exc}") from None
        raise


def _accepts_connections(address: str) -> bool:
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S):
            return True
    except OSError:
        return False
