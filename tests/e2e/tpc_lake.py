"""The TPC-H and TPC-DS lakes of the TPC bench (`bench/tpc.py`) and of its correctness test
(`test_tpc.py`), and the one Trino 476 that writes and then queries them: `side_by_side` starts a
sidecar serving each lake's `data/` directory (gRPC) as schema `<suite>` and gives a local Trino
(the tests' shared one, or one of its own) a native `lakeprune` catalog that talks to it, beside a
`hive` catalog (file metastore) over the same directories. A lake not yet made (no
`<root>/tables.json`, or one naming other generator settings than `SOURCE_CATALOGS`) is written
there by that Trino itself (`CREATE TABLE hive.<suite>.<t> WITH (format = 'PARQUET',
external_location = ...) AS SELECT ... FROM <suite>.<scale>.<t>`, from the
`tpch` / `tpcds` connectors Trino ships, which also collects Hive's statistics; TPC-DS `char(n)`
columns cast to `varchar` so that both catalogs compare the same strings), then every table
directory is adopted in place as a lakeprune table with column stats and, on one foreign key per
suite, a secondary index (by the caller's `Adopt`: a Spark child process for the bench, so that its
JVM is gone before anything is timed; the tests' shared session for the test), and the manifest is
written, so that the next run skips both. A lake made earlier gets external `hive` tables on its
directories, analyzed if asked (`hive_tables`). The sidecar lists a schema's tables on each request,
so tables adopted after it started are served."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry

from pruner.engines import engine_spec, hive_file_catalog
from pruner.engines.cache import CacheLayout
from pruner.engines.catalog import hive_location
from pruner.engines.native_catalog import NativeCatalog
from pruner.engines.plugin import locate_plugin
from pruner.engines.spec import TRINO
from pruner.serving.config import ServeConfig
from pruner.sidecar import Sidecar
from pruner.supervisor.aggregate import parse
from pruner.supervisor.supervisor import Supervisor
from tests.e2e.engines import Engine, SharedTrino, lakeprune_catalog_properties, shared_trino
from tests.support_http import metrics_text

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SUITES = ("tpch", "tpcds")
SCALES = ("tiny", "sf1")

# Each table's record key (the TPC primary keys; lakeprune checks them unique and non-null).
RECORD_KEYS: dict[str, dict[str, tuple[str, ...]]] = {
    "tpch": {
        "region": ("r_regionkey",),
        "nation": ("n_nationkey",),
        "part": ("p_partkey",),
        "supplier": ("s_suppkey",),
        "partsupp": ("ps_partkey", "ps_suppkey"),
        "customer": ("c_custkey",),
        "orders": ("o_orderkey",),
        "lineitem": ("l_orderkey", "l_linenumber"),
    },
    "tpcds": {
        "call_center": ("cc_call_center_sk",),
        "catalog_page": ("cp_catalog_page_sk",),
        "catalog_returns": ("cr_item_sk", "cr_order_number"),
        "catalog_sales": ("cs_item_sk", "cs_order_number"),
        "customer": ("c_customer_sk",),
        "customer_address": ("ca_address_sk",),
        "customer_demographics": ("cd_demo_sk",),
        "date_dim": ("d_date_sk",),
        "household_demographics": ("hd_demo_sk",),
        "income_band": ("ib_income_band_sk",),
        "inventory": ("inv_date_sk", "inv_item_sk", "inv_warehouse_sk"),
        "item": ("i_item_sk",),
        "promotion": ("p_promo_sk",),
        "reason": ("r_reason_sk",),
        "ship_mode": ("sm_ship_mode_sk",),
        "store": ("s_store_sk",),
        "store_returns": ("sr_item_sk", "sr_ticket_number"),
        "store_sales": ("ss_item_sk", "ss_ticket_number"),
        "time_dim": ("t_time_sk",),
        "warehouse": ("w_warehouse_sk",),
        "web_page": ("wp_web_page_sk",),
        "web_returns": ("wr_item_sk", "wr_order_number"),
        "web_sales": ("ws_item_sk", "ws_order_number"),
        "web_site": ("web_site_sk",),
    },
}
# A secondary index on a foreign key per suite: (table, column).
SECONDARY: dict[str, tuple[str, str]] = {
    "tpch": ("orders", "o_custkey"),
    "tpcds": ("store_sales", "ss_customer_sk"),
}
# The generating connectors: TPC-H's standard column names (`l_orderkey`, not `orderkey`) and its
# money columns as the specification's decimals, not the connector's default doubles (with doubles,
# q15's `total_revenue = max(total_revenue)` compares two sums of the same values that may have been
# added in different orders, and its one row comes and goes from run to run).
SOURCE_CATALOGS = {
    "tpch": {
        "connector.name": "tpch",
        "tpch.column-naming": "STANDARD",
        "tpch.double-type-mapping": "DECIMAL",
    },
    "tpcds": {"connector.name": "tpcds"},
}
MANIFEST = "tables.json"


@dataclass(frozen=True)
class Lake:
    """One suite at one scale: `data/<table>/` directories, each a Hive table and a lakeprune table."""

    suite: str
    scale: str
    root: Path
    tables: dict[str, dict[str, Any]]  # name -> {"columns": [[name, Trino type]], "rows": n}

    @property
    def data(self) -> Path:
        return self.root / "data"


def default_root(suite: str, scale: str) -> Path:
    return CacheLayout.default().root / "tpc" / f"{suite}-{scale}"


@dataclass(frozen=True)
class Served:
    """The sidecar side of a run, as its metrics: `sample` sums over the workers (one process: its
    own registry), `per_worker` reads each worker's own metrics port (none for one process)."""

    registry: CollectorRegistry
    worker_sources: Callable[[], list[tuple[int, int]]]  # (pid, metrics port) of each worker

    @classmethod
    def of_supervisor(cls, supervisor: Supervisor) -> Served:
        registry = CollectorRegistry()
        registry.register(supervisor.metrics)
        return cls(registry, supervisor.metrics_sources)

    def sample(self, name: str, **labels: str) -> float:
        return self.registry.get_sample_value(name, labels) or 0.0

    def per_worker(self, name: str, **labels: str) -> dict[int, float]:
        """`name`'s value with `labels` in each worker's own metrics, by the worker's pid."""
        wanted = set(labels.items())
        values = {}
        for pid, port in self.worker_sources():
            families = parse(metrics_text(port))
            values[pid] = sum(
                value
                for family in families.values()
                for (sample, sample_labels), value in family.samples.items()
                if sample == name and wanted <= set(sample_labels)
            )
        return values


# Adopts each (suite, data directory, tables) in place.
Adopt = Callable[[list[tuple[str, str, list[str]]]], None]


@contextmanager
def side_by_side(
    wanted: list[tuple[str, str, Path]],
    adopt: Adopt,
    df_wait: str = "1s",
    analyze_hive: bool = False,
    workers: int = 1,
    trino: SharedTrino | None = None,
    in_process: bool = True,
) -> Iterator[tuple[Engine, Served, list[Lake]]]:
    """The lake of each (suite, scale, root), made where missing (any half-made earlier attempt
    removed first), served side by side by the native `lakeprune` catalog and the `hive` catalog
    of one Trino 476 (`trino`, whose catalogs of these names are created for the while; without it,
    one started for the while); both wait `df_wait` for a join's dynamic filter. With `workers` > 1
    the sidecar is a `Supervisor` of that many planning processes, and the catalog lists each
    worker's own gRPC port (as `serve --workers N --worker-grpc-port P` is deployed for Trino).
    With one worker and not `in_process` it is a supervisor of one worker process, as `lakeprune
    serve` runs a sidecar (a bench's own Python work then does not share the sidecar's interpreter
    lock or its garbage collector)."""
    for suite, scale, _ in wanted:
        if suite not in SUITES or scale not in SCALES:
            raise ValueError(
                f"unknown suite or scale {suite!r} / {scale!r}: choose from {SUITES} and {SCALES}"
            )
    made = {root: _made_tables(suite, root) for suite, _, root in wanted}
    missing = [(suite, scale, root) for suite, scale, root in wanted if made[root] is None]
    for *_, root in missing:
        shutil.rmtree(root, ignore_errors=True)
        (root / "data").mkdir(parents=True)
    spec = engine_spec("trino")
    config = ServeConfig(
        {suite: str(root / "data") for suite, _, root in wanted},
        host="127.0.0.1",
        grpc_port=0,
        thrift_port=None,
        metrics_port=None,
    )
    scratch = Path(tempfile.mkdtemp(prefix="lakeprune-tpc-"))
    server: Sidecar | Supervisor
    if workers > 1 or not in_process:
        server = Supervisor(
            dataclasses.replace(config, workers=workers, worker_grpc_port=0, metrics_port=0), grace=2.0
        ).start()
        addresses = [f"127.0.0.1:{port}" for port in server.worker_grpc_ports]
        served = Served.of_supervisor(server)
    else:
        server = Sidecar(config).start()
        addresses = [f"127.0.0.1:{server.grpc_port}"]
        served = Served(server.metrics.registry, list)
    try:
        if not server.wait_ready(300):
            raise RuntimeError("the sidecar did not load its catalog")
        grpc = NativeCatalog(",".join(addresses), dynamic_filtering_wait_timeout=df_wait)
        catalogs = {
            # CTAS to an external location is a write to a non-managed table.
            "hive": hive_file_catalog(spec, scratch / "metastore")
            | {
                "hive.dynamic-filtering.wait-timeout": df_wait,
                "hive.non-managed-table-writes-enabled": "true",
            }
        } | {suite: SOURCE_CATALOGS[suite] for suite, _, _ in missing}
        with ExitStack() as stack:
            shared = trino or stack.enter_context(shared_trino(locate_plugin(TRINO)))
            engine = stack.enter_context(shared.catalogs(lakeprune_catalog_properties(grpc, None) | catalogs))
            written = {root: write_tables(engine, suite, scale, root) for suite, scale, root in missing}
            if missing:
                adopt([(suite, str(root / "data"), list(written[root])) for suite, _, root in missing])
            for suite, _, root in missing:
                manifest = {"source": SOURCE_CATALOGS[suite], "tables": written[root]}
                (root / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
            lakes = [Lake(suite, scale, root, made[root] or written[root]) for suite, scale, root in wanted]
            for lake in lakes:
                if lake.root not in written:
                    hive_tables(engine, lake, analyze_hive)
            yield engine, served, lakes
    finally:
        server.stop(2)
        shutil.rmtree(scratch, ignore_errors=True)


def _made_tables(suite: str, root: Path) -> dict[str, dict[str, Any]] | None:
    """The tables the lake's manifest lists; None when the lake is not made, or was made by a
    generator configured otherwise than `SOURCE_CATALOGS` (before TPC-H's money columns were
    decimals): then it is made again."""
    try:
        manifest: dict[str, Any] = json.loads((root / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    if manifest.get("source") != SOURCE_CATALOGS[suite]:
        return None
    tables: dict[str, dict[str, Any]] = manifest["tables"]
    return tables


def write_tables(engine: Engine, suite: str, scale: str, root: Path) -> dict[str, dict[str, Any]]:
    """Every table of `suite` at `scale` as Parquet under `<root>/data/<table>/`, written by the
    `hive` catalog as table `hive.<suite>.<table>`; returns each table's columns and rows."""
    spec = engine_spec("trino")
    engine.query(f"CREATE SCHEMA hive.{suite}")
    written: dict[str, dict[str, Any]] = {}
    for table in RECORD_KEYS[suite]:
        source = f"{suite}.{scale}.{table}"
        columns = [(name, kind) for name, kind, *_ in engine.query(f"DESCRIBE {source}")]
        select = ", ".join(_as_written(name, kind) for name, kind in columns)
        location = hive_location(spec, root / "data" / table)
        rows = engine.query(
            f"CREATE TABLE hive.{suite}.{table} WITH (format = 'PARQUET', external_location = "
            f"'{location}') AS SELECT {select} FROM {source}"
        )[0][0]
        described = engine.query(f"DESCRIBE hive.{suite}.{table}")
        written[table] = {"columns": [[name, kind] for name, kind, *_ in described], "rows": rows}
    return written


def _as_written(name: str, kind: str) -> str:
    """`char(n)` as `varchar`: lakeprune reads Parquet strings as `varchar`, and Hive would pad."""
    return f"CAST({name} AS varchar) AS {name}" if kind.startswith("char") else name


def adopt_in_child(work: list[tuple[str, str, list[str]]]) -> None:
    """`adopt_tables` in a child process with its own Spark `local[2]` (its JVM exits with it)."""
    child = multiprocessing.get_context("spawn").Process(target=_adopt_in_new_session, args=(work,))
    child.start()
    child.join()
    if child.exitcode != 0:
        raise RuntimeError(f"adopting the TPC tables failed (exit code {child.exitcode})")


def _adopt_in_new_session(work: list[tuple[str, str, list[str]]]) -> None:
    from builder.session import spark_session

    spark = spark_session(master="local[2]")
    adopt_tables(spark, work)
    spark.stop()


def adopt_tables(spark: SparkSession, work: list[tuple[str, str, list[str]]]) -> None:
    """Adopt each (suite, data directory, tables) in place with `spark`: column stats on every
    table, the suite's secondary index on its table."""
    from builder import LakepruneTable

    for suite, data, tables in work:
        for table in tables:
            indexes = [f"CREATE INDEX stats ON {table} USING column_stats"]
            if SECONDARY[suite][0] == table:
                indexes.append(f"CREATE INDEX fk ON {table} ({SECONDARY[suite][1]})")
            LakepruneTable.adopt(
                f"{data}/{table}", list(RECORD_KEYS[suite][table]), spark=spark, indexes=indexes
            )


def hive_tables(engine: Engine, lake: Lake, analyze: bool = False) -> None:
    """`hive.<suite>.<table>`: an external Parquet table on each table directory of the lake; with
    `analyze`, its statistics collected by `ANALYZE`, as the CTAS that wrote it had collected them
    (an external table starts without any, which would put Hive's planner at a disadvantage)."""
    spec = engine_spec("trino")
    engine.query(f"CREATE SCHEMA IF NOT EXISTS hive.{lake.suite}")
    for table, info in lake.tables.items():
        columns = ", ".join(f"{name} {kind}" for name, kind in info["columns"])
        engine.query(
            f"CREATE TABLE hive.{lake.suite}.{table} ({columns}) WITH (external_location = "
            f"'{hive_location(spec, lake.data / table)}', format = 'PARQUET')"
        )
        if analyze:
            engine.query(f"ANALYZE hive.{lake.suite}.{table}")
