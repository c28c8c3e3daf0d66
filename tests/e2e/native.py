"""What the suites of the native Trino catalog share (`test_native_engine.py` over the local
warehouse, `test_s3_engine.py` over a copy of it on S3): the plugin, the sidecar's gRPC prune
counters, and the corpus check — a query's answer through the native catalog equals DuckDB's over
the same files, decimals exact, and selective queries and joins on the record key prune."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pytest

from pruner.engines.errors import PluginNotFoundError
from pruner.engines.plugin import CHECKOUT, locate_plugin
from pruner.engines.spec import TRINO
from pruner.sidecar import Sidecar
from pruner.table.table import LakeTable
from tests.e2e.engines import Engine
from tests.e2e.queries import Query, counter, normalized
from tests.e2e.warehouse import duckdb_connection


def native_plugin() -> Path:
    """The plugin, built if this checkout has the connector's sources; skip if it has none."""
    try:
        return locate_plugin(TRINO)
    except PluginNotFoundError as exc:
        if (CHECKOUT / "connector" / TRINO.kind / "build.sh").is_file():
            raise  # the sources are here: a plugin that does not build is a failure
        pytest.skip(str(exc))


def native_plugin_if_any() -> Path | None:
    """The plugin as `native_plugin` finds or builds it; None where this checkout has no
    connector to build."""
    try:
        return native_plugin()
    except pytest.skip.Exception:
        return None


def prune_counters(sample: Callable[..., float]) -> dict[str, float]:
    """The gRPC prune counters, files considered and files kept, as `sample(name, **labels)` reads
    them (one sidecar's registry, or a supervisor's sum over its workers)."""
    return {k: sample(f"lakeprune_prune_files_{k}_total", api="grpc") for k in ("in", "out")}


def pruned(sidecar: Sidecar) -> dict[str, float]:
    """The sidecar's gRPC prune counters: files considered and files kept."""
    return prune_counters(functools.partial(counter, sidecar))


def check_query(engine: Engine, sidecar: Sidecar, reference: Path, query: Query) -> None:
    """`query` through the native catalog answers as DuckDB does over the local warehouse
    `reference` (the same files the catalog serves); a selective query, or a join on trips'
    record key (through the dynamic filter), makes the sidecar consider every file of `trips` and
    keep at most a quarter of them."""
    want = duckdb_connection(reference).execute(query.for_duckdb()).fetchall()
    before = pruned(sidecar)
    got = engine.query(query.for_engine())
    after = pruned(sidecar)
    assert normalized(got, exact_decimals=True) == normalized(want, exact_decimals=True), query.name
    if query.selective or (query.index_join and "ON t.trip_id" in query.engine_sql):
        files = len(LakeTable.open(str(reference / "trips")).snapshot().files())
        considered, kept = after["in"] - before["in"], after["out"] - before["out"]
        assert considered == files, f"{query.name}: the sidecar considered {considered} of {files} files"
        assert 0 < kept <= files / 4, f"{query.name}: the sidecar kept {kept} of {files} files"
