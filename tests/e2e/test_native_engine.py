"""Trino 476 started by `lakeprune trino start --grpc ... --sidecar ...`: catalog `lakeprune` is the
native connector (gRPC to the sidecar, Trino reads the Parquet files) and `lakeprune_thrift` the
Thrift one, side by side over the same warehouse. The native catalog answers as DuckDB does over
the same files, decimals exactly (the Thrift catalog can only carry them as doubles), and the
sidecar's gRPC counters show the pruning. Runs when the plugin can be found or built (see
`pruner.engines.plugin`); skipped, with the reason, in a checkout without `connector/trino/`."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from pruner.engines.errors import PluginNotFoundError
from pruner.engines.native_catalog import NativeCatalog
from pruner.engines.plugin import CHECKOUT, locate_plugin
from pruner.engines.spec import TRINO
from pruner.serving.config import ServeConfig
from pruner.sidecar import Sidecar
from tests.e2e.engines import Engine, local_engine
from tests.e2e.queries import counter
from tests.e2e.warehouse import SCHEMA_NAME, TABLES, duckdb_connection

pytestmark = [pytest.mark.slow, pytest.mark.engine]


def native_plugin() -> Path:
    """The plugin, built if this checkout has the connector's sources; skip if it has none."""
    try:
        return locate_plugin(TRINO)
    except PluginNotFoundError as exc:
        if (CHECKOUT / "connector" / TRINO.kind / "build.sh").is_file():
            raise  # the sources are here: a plugin that does not build is a failure
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def native(request: pytest.FixtureRequest) -> Iterator[tuple[Engine, Sidecar, Path]]:
    """The engine, its sidecar and the warehouse they serve."""
    plugin = native_plugin()  # before the warehouse: a skip should not build it first
    lake_warehouse: Path = request.getfixturevalue("lake_warehouse")
    config = ServeConfig(
        {SCHEMA_NAME: str(lake_warehouse)}, host="127.0.0.1", grpc_port=0, thrift_port=0, metrics_port=None
    )
    sidecar = Sidecar(config).start()
    try:
        assert sidecar.wait_ready(30), "the sidecar did not load its catalog"
        grpc = NativeCatalog(f"127.0.0.1:{sidecar.grpc_port}")
        with local_engine("trino", f"127.0.0.1:{sidecar.thrift_port}", grpc=grpc, plugin=plugin) as engine:
            yield engine, sidecar, lake_warehouse
    finally:
        sidecar.stop(2)


def test_both_catalogs_list_the_warehouse(native: tuple[Engine, Sidecar, Path]) -> None:
    engine, _, _ = native
    catalogs = {row[0] for row in engine.query("SHOW CATALOGS")}
    assert {"lakeprune", "lakeprune_thrift"} <= catalogs
    for catalog in ("lakeprune", "lakeprune_thrift"):
        assert sorted(engine.query(f"SHOW TABLES FROM {catalog}.{SCHEMA_NAME}")) == [[t] for t in TABLES]


def test_decimal_sums_are_exact_through_the_native_catalog(native: tuple[Engine, Sidecar, Path]) -> None:
    engine, _, lake_warehouse = native
    sql = "SELECT city, sum(fare), count(*) FROM {t}trips GROUP BY city ORDER BY city"
    want = [list(row) for row in duckdb_connection(lake_warehouse).execute(sql.format(t="")).fetchall()]
    got = engine.query(sql.format(t=f"lakeprune.{SCHEMA_NAME}."))
    assert got == want
    assert all(isinstance(row[1], Decimal) for row in got)
    thrift = engine.query(sql.format(t=f"lakeprune_thrift.{SCHEMA_NAME}."))
    assert all(isinstance(row[1], float) for row in thrift)  # Thrift carries decimal as double


def test_a_point_lookup_prunes_through_grpc(native: tuple[Engine, Sidecar, Path]) -> None:
    engine, sidecar, lake_warehouse = native
    sql = "SELECT trip_id, city, driver_id, fare FROM {t}trips WHERE trip_id = 1234"
    want = [list(row) for row in duckdb_connection(lake_warehouse).execute(sql.format(t="")).fetchall()]
    before = {k: counter(sidecar, f"lakeprune_prune_files_{k}_total", api="grpc") for k in ("in", "out")}
    assert engine.query(sql.format(t=f"lakeprune.{SCHEMA_NAME}.")) == want
    after = {k: counter(sidecar, f"lakeprune_prune_files_{k}_total", api="grpc") for k in ("in", "out")}
    considered, kept = after["in"] - before["in"], after["out"] - before["out"]
    assert 0 < kept <= considered / 4, f"the sidecar kept {kept} of {considered} files"
