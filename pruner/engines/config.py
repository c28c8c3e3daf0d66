"""The configuration of one single-node engine instance, written into its data directory:
`etc/node.properties`, `etc/jvm.config` (a small heap for a laptop-sized machine, the flags the
engine needs on its Java, and the server log's location), `etc/config.properties` (a coordinator
that also runs tasks, listening on loopback only), `etc/log.properties` and `etc/catalog/`: the
lakeprune catalogs (`lakeprune` over Thrift; or, on Trino with a gRPC address, `lakeprune` through
the native connector and, given a Thrift address as well, `lakeprune_thrift`) plus any extra
catalogs. The text of each file is built by a pure function, so tests check it without starting
anything."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pruner.engines.catalog import (
    CATALOG_NAME,
    DEFAULT_SIDECAR,
    THRIFT_CATALOG_NAME,
    catalog_file,
    check_extra_catalogs,
)
from pruner.engines.errors import InvalidEngineConfigError
from pruner.engines.native_catalog import NativeCatalog, native_catalog_file
from pruner.engines.spec import EngineSpec

LOOPBACK = "127.0.0.1"
DEFAULT_HEAP_MB = 2048
MIN_HEAP_MB = 512
# Under the data directory: the server's log, and the launcher's (its own output and the JVM's).
SERVER_LOG = Path("var/log/server.log")
LAUNCHER_LOG = Path("var/log/launcher.log")

# Trino's recommended flags of that era, minus the ones for big heaps (G1 region size, heap dumps
# of many GB) and -XX:-UseBiasedLocking (deprecated since Java 15), and with the parallel collector
# instead of G1: on a laptop-sized heap and core count, G1's concurrent threads and write barriers
# cost more than its short pauses are worth here. TPC-DS's 99 queries at `tiny` scale on both
# catalogs of `bench/tpc.py`, Trinos side by side on 2 cores (2026-11-30): with G1 the answers took
# 371 s and 448 CPU-seconds against 304 s and 376 with the parallel collector; in a second run
# with a third Trino on the serial collector beside them, 675 / 646 / 612 s (G1 / serial / parallel).
BASE_JVM_FLAGS = (
    "-server",
    "-XX:+UseParallelGC",
    "-XX:+ExitOnOutOfMemoryError",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:ReservedCodeCacheSize=256M",
    "-XX:PerMethodRecompilationCutoff=10000",
    "-XX:PerBytecodeRecompilationCutoff=10000",
    "-Djdk.attach.allowAttachSelf=true",
    "-Djdk.nio.maxCachedBufferSize=2000000",
    "-Dfile.encoding=UTF-8",
    "-Duser.timezone=UTC",
)


@dataclass(frozen=True)
class InstanceConfig:
    """What a launched instance is: the engine, its port, data directory, heap and catalogs.
    `sidecar` is the sidecars' Thrift address list, `grpc` the native catalog; with neither, the
    Thrift catalog points at DEFAULT_SIDECAR."""

    spec: EngineSpec
    port: int
    data_dir: Path
    sidecar: str | None
    heap_mb: int = DEFAULT_HEAP_MB
    extra_catalogs: Mapping[str, Mapping[str, str]] | None = None
    grpc: NativeCatalog | None = None

    @property
    def etc(self) -> Path:
        return self.data_dir / "etc"

    @property
    def plugin_dir(self) -> Path:
        """The instance's own plugin directory (`plugin.dir`), when it runs the native connector (not
        `plugin/`: Trino's launcher links that name to the installation's plugin directory)."""
        return self.data_dir / "lakeprune-plugins"


def lakeprune_catalogs(config: InstanceConfig) -> dict[str, str]:
    """The lakeprune catalogs of an instance: name -> file text."""
    spec = config.spec
    if config.grpc is None:
        return {CATALOG_NAME: catalog_file(spec, config.sidecar or DEFAULT_SIDECAR)}
    if spec.native_plugin_dir is None:
        raise InvalidEngineConfigError(
            f"{spec.display_name} has no native lakeprune connector: give it a Thrift --sidecar, not --grpc"
        )
    catalogs = {CATALOG_NAME: native_catalog_file(spec, config.grpc)}
    if config.sidecar is not None:
        catalogs[THRIFT_CATALOG_NAME] = catalog_file(spec, config.sidecar)
    return catalogs


def render(properties: Mapping[str, str]) -> str:
    return "".join(f"{key}={value}\n" for key, value in properties.items())


def node_properties(config: InstanceConfig) -> dict[str, str]:
    return {
        "node.environment": "lakeprune",
        "node.id": f"lakeprune-{config.spec.kind}-{config.port}",
        "node.data-dir": str(config.data_dir),
        # Loopback only: the engine has no authentication, and one node talks only to itself.
        "node.bind-ip": LOOPBACK,
        "node.internal-address": LOOPBACK,
    }


def jvm_config(config: InstanceConfig) -> str:
    if config.heap_mb < MIN_HEAP_MB:
        raise InvalidEngineConfigError(f"heap must be at least {MIN_HEAP_MB} MB, got {config.heap_mb}")
    flags = [
        BASE_JVM_FLAGS[0],
        f"-Xmx{config.heap_mb}M",
        *BASE_JVM_FLAGS[1:],
        *config.spec.extra_jvm_flags,
        # What the launchers add in their own daemon mode, which `process` does not use.
        f"-Dlog.output-file={config.data_dir / SERVER_LOG}",
        "-Dlog.enable-console=false",
    ]
    return "".join(f"{flag}\n" for flag in flags)


def server_properties(config: InstanceConfig) -> dict[str, str]:
    # Half the heap for query memory; the engine keeps 30% of the heap as headroom by default.
    query_memory = f"{config.heap_mb // 2}MB"
    properties = {
        "coordinator": "true",
        "node-scheduler.include-coordinator": "true",
        "http-server.http.port": str(config.port),
        "discovery.uri": f"http://{LOOPBACK}:{config.port}",
        **dict(config.spec.extra_server_properties),
        "query.max-memory": query_memory,
        "query.max-memory-per-node": query_memory,
    }
    if config.spec.total_memory_per_node_property is not None:
        properties[config.spec.total_memory_per_node_property] = query_memory
    if config.grpc is not None:
        # the engine's bundled plugins and this instance's copy of the native connector
        properties["plugin.dir"] = str(config.plugin_dir)
    return properties


def log_properties(config: InstanceConfig) -> dict[str, str]:
    return {
        config.spec.log_root: "INFO",
        # A dozen warnings on every start about resources Jersey skips; harmless.
        "org.glassfish.jersey.internal.inject.Providers": "ERROR",
    }


def config_files(config: InstanceConfig) -> dict[str, str]:
    """Relative path under the data directory -> file text."""
    files = {
        "etc/node.properties": render(node_properties(config)),
        "etc/jvm.config": jvm_config(config),
        "etc/config.properties": render(server_properties(config)),
        "etc/log.properties": render(log_properties(config)),
    }
    for name, text in lakeprune_catalogs(config).items():
        files[f"etc/catalog/{name}.properties"] = text
    for name, properties in check_extra_catalogs(config.extra_catalogs).items():
        files[f"etc/catalog/{name}.properties"] = render(properties)
    return files


def write_config(config: InstanceConfig) -> None:
    """Write the instance's etc/ afresh (catalogs of an earlier run in the same directory go)."""
    files = config_files(config)
    catalog_dir = config.etc / "catalog"
    catalog_dir.mkdir(parents=True, exist_ok=True)
    for stale in catalog_dir.glob("*.properties"):
        stale.unlink()
    for relative, text in files.items():
        target = config.data_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        # Catalogs may carry a bearer token: readable by the engine's user only.
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(descriptor, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(text)
