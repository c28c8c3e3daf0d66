"""Trino and Presto for the end-to-end tests. `local_engine` starts Trino 476 or Presto 0.287 with
lakeprune's launcher (no Docker: the server from Maven Central, Java from PyPI, both cached outside
the repository), which returns once a query on each lakeprune catalog can run; `container_engine`
runs the official image (`trinodb/trino:476`, `prestodb/presto:0.287`) through testcontainers where
a Docker engine answers, waited for by the launcher's own readiness check, and
`docker_unavailable_reason` says why it cannot. Both yield an `Engine` whose `connect()` is a
DB-API connection (`trino.dbapi` / `prestodb.dbapi`) with catalog `lakeprune`. `SharedTrino` is one
local Trino with dynamic catalog management (`catalog.management=dynamic`) that several suites use
in turn, each creating its catalogs with `CREATE CATALOG` and dropping them when it is done, so that
the session starts Trino once rather than once per suite."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pruner.engines import CATALOG_NAME, TRINO, catalog_file, engine_spec, start, status, stop
from pruner.engines.catalog import (
    check_extra_catalogs,
    parse_properties,
    parse_sidecar_addresses,
    sidecar_of,
)
from pruner.engines.config import InstanceConfig, lakeprune_catalogs, render
from pruner.engines.native_catalog import NativeCatalog, grpc_of
from pruner.engines.readiness import Target, wait_until_ready

USER = "lakeprune"
IMAGES = {"trino": "trinodb/trino:476", "presto": "prestodb/presto:0.287"}
CATALOG_DIRS = {"trino": "/etc/trino/catalog", "presto": "/opt/presto-server/etc/catalog"}
CONTAINER_PORT = 8080
# What a container calls the machine it runs on (mapped with --add-host ...:host-gateway).
HOST_FROM_CONTAINER = "host.docker.internal"
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "0.0.0.0", "[::1]"})
# Trino whose catalogs can be created and dropped while it runs (kept in etc/catalog/ as files).
DYNAMIC_TRINO = dataclasses.replace(
    TRINO, extra_server_properties=(*TRINO.extra_server_properties, ("catalog.management", "dynamic"))
)
# Where the shared Trino's start-up native catalog points: nothing listens there (the discard port),
# and the catalog is dropped before any suite uses the engine.
NOBODY = "127.0.0.1:9"
CATALOG_READY_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Engine:
    kind: str  # "trino" | "presto"
    host: str
    port: int
    catalog: str = CATALOG_NAME

    def connect(self, schema: str = "default", catalog: str | None = None) -> Any:
        """A DB-API connection from the engine's own Python client."""
        if self.kind == "trino":
            import trino.dbapi

            return trino.dbapi.connect(  # type: ignore[no-untyped-call]
                host=self.host, port=self.port, user=USER, catalog=catalog or self.catalog, schema=schema
            )
        import prestodb.dbapi  # type: ignore[import-untyped]

        return prestodb.dbapi.connect(
            host=self.host, port=self.port, user=USER, catalog=catalog or self.catalog, schema=schema
        )

    def query(self, sql: str, schema: str = "default") -> list[list[Any]]:
        """Run one statement on a fresh connection and return all rows as lists."""
        connection = self.connect(schema)
        try:
            cursor = connection.cursor()
            cursor.execute(sql)
            return [list(row) for row in cursor.fetchall()]
        finally:
            connection.close()


@contextmanager
def local_engine(
    kind: str,
    sidecar_address: str | None,
    extra_catalogs: Mapping[str, Mapping[str, str]] | None = None,
    *,
    grpc: NativeCatalog | None = None,
    plugin: Path | None = None,
    port: int = 0,
    data_dir: Path | None = None,
    heap_mb: int = 2048,
    timeout: float = 240.0,
    dynamic_catalogs: bool = False,
) -> Iterator[Engine]:
    """A local engine on a free port (by default) whose lakeprune catalog points at the sidecar
    (Thrift; with `grpc`, `lakeprune` is the native catalog and the Thrift one `lakeprune_thrift`);
    stopped (and its temporary data directory removed) on exit. With `dynamic_catalogs` (Trino
    only), catalogs can be created and dropped while it runs."""
    if dynamic_catalogs and kind != TRINO.kind:
        raise ValueError(f"dynamic catalogs are a Trino feature, not {kind}'s")
    spec = DYNAMIC_TRINO if dynamic_catalogs else engine_spec(kind)
    directory = data_dir or Path(tempfile.mkdtemp(prefix=f"lakeprune-{kind}-"))
    try:
        instance = start(
            spec,
            port,
            sidecar_address,
            directory,
            extra_catalogs,
            grpc=grpc,
            plugin=plugin,
            heap_mb=heap_mb,
            timeout=timeout,
        )
        try:
            yield Engine(kind, instance.host, instance.port)
        finally:
            stop(spec, instance.port)
    finally:
        if data_dir is None:
            shutil.rmtree(directory, ignore_errors=True)


def lakeprune_catalog_properties(
    grpc: NativeCatalog | None, sidecar: str | None
) -> dict[str, dict[str, str]]:
    """Trino's lakeprune catalogs as the launcher names and writes them (see
    `pruner.engines.config.lakeprune_catalogs`): name -> properties."""
    config = InstanceConfig(TRINO, 0, Path(), sidecar, grpc=grpc)
    return {name: parse_properties(text) for name, text in lakeprune_catalogs(config).items()}


class SharedTrino:
    """One running Trino with dynamic catalogs, lent to one suite at a time: `catalogs` creates a
    suite's catalogs, waits until each can run a query (as the launcher waits at start-up), and
    drops them on exit. A catalog name lent and not yet given back cannot be lent again."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._lent: set[str] = set()

    @contextmanager
    def catalogs(self, catalogs: Mapping[str, Mapping[str, str]]) -> Iterator[Engine]:
        wanted = {name: dict(props) for name, props in catalogs.items()}
        taken = sorted(self._lent & wanted.keys())
        if taken:
            raise RuntimeError(f"catalogs {taken} of the shared Trino are in use by another suite")
        self._lent |= wanted.keys()
        try:
            for name, properties in wanted.items():
                self._create(name, properties)
            sidecars: dict[str, tuple[str, ...]] = {}
            others = []
            for name, properties in wanted.items():
                text = render(properties)
                addresses = grpc_of(text) or sidecar_of(TRINO, text)
                if addresses is None:
                    others.append(name)
                else:
                    sidecars[name] = parse_sidecar_addresses(addresses)
            port = self.engine.port
            target = Target(
                TRINO,
                self.engine.host,
                port,
                lambda: status(TRINO, port).running,
                lambda: f"see its server log (`lakeprune trino status --port {port}` names it)",
            )
            wait_until_ready(target, sidecars, CATALOG_READY_TIMEOUT_S, other_catalogs=others)
            yield self.engine
        finally:
            try:
                for name in wanted:
                    self.engine.query(f'DROP CATALOG IF EXISTS "{name}"')
            finally:
                self._lent -= wanted.keys()

    def _create(self, name: str, properties: Mapping[str, str]) -> None:
        connector = properties["connector.name"]  # unquoted: Trino 476 keeps a quoted name's quotes
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", connector):
            raise ValueError(f"catalog {name}: connector name {connector!r} is not a plain identifier")
        settings = ", ".join(
            f'"{key}" = {_literal(value)}' for key, value in properties.items() if key != "connector.name"
        )
        self.engine.query(f'DROP CATALOG IF EXISTS "{name}"')
        self.engine.query(
            f'CREATE CATALOG "{name}" USING {connector}' + (f" WITH ({settings})" if settings else "")
        )


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


@contextmanager
def shared_trino(plugin: Path | None) -> Iterator[SharedTrino]:
    """A local Trino with dynamic catalogs and the native connector's `plugin` (None: none, only
    Trino's own connectors), and no catalog of lakeprune's yet (its start-up one is dropped)."""
    grpc = None if plugin is None else NativeCatalog(NOBODY)
    sidecar = NOBODY if plugin is None else None
    with local_engine(TRINO.kind, sidecar, grpc=grpc, plugin=plugin, dynamic_catalogs=True) as engine:
        engine.query(f'DROP CATALOG "{CATALOG_NAME}"')
        yield SharedTrino(engine)


def docker_unavailable_reason() -> str | None:
    """Why no container can be started here, or None if a Docker engine answers."""
    try:
        from docker import DockerClient  # type: ignore[attr-defined]  # (./docker/ shadows it for mypy)
    except ImportError:
        return "the docker Python package is not installed"
    where = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    try:
        client = DockerClient.from_env(timeout=5)
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:
        cli = "the docker CLI is installed but " if shutil.which("docker") else ""
        return f"{cli}no Docker engine answers at {where} ({type(exc).__name__}: {exc})"
    return None


def container_address(sidecar_address: str) -> str:
    """The sidecar address as seen from inside a container: loopback names become the host."""
    addresses = []
    for address in parse_sidecar_addresses(sidecar_address):
        host, _, port = address.rpartition(":")
        addresses.append(f"{HOST_FROM_CONTAINER if host in LOOPBACK_NAMES else host}:{port}")
    return ",".join(addresses)


@contextmanager
def container_engine(
    kind: str,
    sidecar_address: str,
    extra_catalogs: Mapping[str, Mapping[str, str]] | None = None,
    *,
    mounts: Sequence[Path] = (),
    timeout: float = 300.0,
) -> Iterator[Engine]:
    """The engine's official image with the lakeprune catalog (and `extra_catalogs`) mounted.

    The sidecar must listen on an address the container reaches (0.0.0.0, not 127.0.0.1); a
    loopback sidecar address is rewritten to `host.docker.internal`, mapped to the host gateway.
    Each path in `mounts` is mounted at the same path inside, so `file:///...` locations in extra
    catalogs (a Hive file metastore, table data) mean the same there."""
    reason = docker_unavailable_reason()
    if reason is not None:
        raise RuntimeError(f"cannot run {IMAGES[kind]}: {reason}")
    from testcontainers.core.container import DockerContainer

    spec = engine_spec(kind)
    catalog_dir = Path(tempfile.mkdtemp(prefix=f"lakeprune-{kind}-catalog-"))
    catalog_dir.chmod(0o755)  # the images run as an unprivileged user
    files = {CATALOG_NAME: catalog_file(spec, container_address(sidecar_address))}
    files.update({name: render(props) for name, props in check_extra_catalogs(extra_catalogs).items()})
    for name, text in files.items():
        path = catalog_dir / f"{name}.properties"
        path.write_text(text)
        path.chmod(0o644)
    container = (
        DockerContainer(IMAGES[kind])
        .with_exposed_ports(CONTAINER_PORT)
        .with_volume_mapping(str(catalog_dir), CATALOG_DIRS[kind], "ro")
        .with_kwargs(extra_hosts={HOST_FROM_CONTAINER: "host-gateway"})
    )
    for mount in mounts:
        container = container.with_volume_mapping(str(mount), str(mount), "rw")
    try:
        with container:
            engine = Engine(
                kind, container.get_container_host_ip(), int(container.get_exposed_port(CONTAINER_PORT))
            )
            target = Target(
                spec,
                engine.host,
                engine.port,
                lambda: True,
                lambda: f"see `docker logs {container.get_wrapped_container().id}`",
            )
            wait_until_ready(target, {CATALOG_NAME: parse_sidecar_addresses(sidecar_address)}, timeout)
            yield engine
    finally:
        shutil.rmtree(catalog_dir, ignore_errors=True)
