"""The Trino side of the peers benchmark (`peers.py`): the catalogs of the peers beside lakeprune's
native one (`peer_catalogs`: Hive, Iceberg and Delta Lake connectors of Trino 476, each with its own
file metastore in a local directory and Trino's native local file system), the copies of
lakeprune's `sales` and `customers` each peer's writer makes (`copy_tables`: an empty
`CREATE TABLE ... AS ... WITH NO DATA`, partitioned by `region`, Iceberg also sorted by `sale_id`,
then one `INSERT` per run of `sale_id`s through a single writer per partition, so that every format
gets about as many files as lakeprune's, each holding a run of sales as lakeprune's do; the
dimension in one statement), and the benchmark's query shapes (`benchmark_queries`: point lookup by
key, lookup by `customer_id`, a 0.1% range of `ts`, `hour(ts) = 3`, an infix LIKE, a star join that
only a dynamic filter on `customer_id` can prune, a full-scan aggregate) and the check query whose
answer every catalog must give before anything is timed."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from peers_data import DIMENSION, FACT, RARE_TERM, REGIONS, SCHEMA, ShapeValues
from support import progress
from trino.exceptions import TrinoQueryError
from trino_vs_hive_queries import Query, register_hive_tables, run, table_name

from pruner.engines import engine_spec, hive_file_catalog
from tests.e2e.engines import Engine

NATIVE, HIVE, ICEBERG, DELTA, HUDI = "lakeprune", "hive", "iceberg", "delta", "hudi"
HUDI_REGISTRAR = "hudi_registrar"  # a Hive catalog over the Hudi catalog's metastore, to register tables
PEERS = (HIVE, ICEBERG, DELTA)
COLUMNS = "sale_id, customer_id, ts, amount, note, region"
# Each peer's table properties: partitioned by `region` as lakeprune's; Iceberg also sorts each file.
FACT_PROPERTIES = {
    HIVE: "format = 'PARQUET', partitioned_by = ARRAY['region']",
    ICEBERG: "format = 'PARQUET', partitioning = ARRAY['region'], sorted_by = ARRAY['sale_id']",
    DELTA: "partitioned_by = ARRAY['region']",
}
DIMENSION_COLUMNS = "customer_id bigint, name varchar, segment varchar"
DIMENSION_PROPERTIES = {HIVE: "format = 'PARQUET'", ICEBERG: "format = 'PARQUET'", DELTA: ""}
# lakeprune's `ts` is an instant (`timestamp(6) with time zone` in Trino); the peers hold the same
# UTC wall time as `timestamp(6)`.
SOURCE = (
    "SELECT sale_id, customer_id, CAST(ts AT TIME ZONE 'UTC' AS timestamp(6)) AS ts, amount, note, region "
    f"FROM {NATIVE}.{SCHEMA}.{FACT}"
)
# One writer per partition and task, so that one INSERT of a run of sales writes one file per region.
WRITER_SESSION = {"scale_writers": "false", "task_min_writer_count": "1", "task_max_writer_count": "1"}


def peer_catalogs(workdir: Path, df_wait: str, file_bytes: int) -> dict[str, dict[str, str]]:
    """Hive, Iceberg and Delta catalogs over file metastores under `workdir`, each waiting `df_wait`
    for a join's dynamic filter as the native catalog does; Delta cuts files at `file_bytes`."""
    spec = engine_spec("trino")
    catalogs: dict[str, dict[str, str]] = {}
    for name, extra in (
        # The peers' timestamps are microseconds (Hive's default reads them as milliseconds).
        (HIVE, {"hive.timestamp-precision": "MICROSECONDS"}),
        (ICEBERG, {"connector.name": "iceberg", "iceberg.catalog.type": "TESTING_FILE_METASTORE"}),
        (
            DELTA,
            {"connector.name": "delta_lake", "delta.target-max-file-size": f"{max(1, file_bytes // 1024)}kB"},
        ),
    ):
        prefix = "delta" if name == DELTA else name
        catalog = hive_file_catalog(spec, workdir / f"metastore_{name}") | extra
        if name == ICEBERG:  # Iceberg names its file metastore as a catalog type of its own
            del catalog["hive.metastore"]
        catalogs[name] = catalog | {f"{prefix}.dynamic-filtering.wait-timeout": df_wait}
    return catalogs


def hudi_catalogs(workdir: Path) -> dict[str, dict[str, str]]:
    """Trino's Hudi connector over a file metastore, and a Hive catalog over the same metastore that
    registers the tables (the Hudi connector cannot create them)."""
    base = hive_file_catalog(engine_spec("trino"), workdir / "metastore_hudi")
    return {
        HUDI: base | {"connector.name": "hudi", "hudi.parquet.use-column-names": "true"},
        HUDI_REGISTRAR: base,
    }


HUDI_STORAGE_FORMAT = {
    "serde": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
    "inputFormat": "org.apache.hudi.hadoop.HoodieParquetInputFormat",
    "outputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
}


def register_hudi(engine: Engine, root: Path, workdir: Path) -> str | None:
    """Make Hudi's `sales` and `customers` under `root` queryable as `hudi.bench.*`; None, or why
        not. What it takes in Trino 476: the Hudi connector reads a metastore table whose input format is
        Hudi's, and nothing in Trino writes one; so the Hive registrar catalog creates external Parquet
        tables on the Hudi directories (partitions synced from `region=...`) and their metastore
        entries (`.trinoSchema` files of the file metastore) get Hudi's input format in place of Hive's
    `PARQUET`; and a file in the table's archived timeline directory, which a table not yet archived
    lacks and Trino's Hudi reader needs."""
    columns = (
        "sale_id bigint, customer_id bigint, ts timestamp, amount decimal(12,2), note varchar, region varchar"
    )
    for table in (FACT, DIMENSION):
        # Trino's Hudi storage reads a directory without files as missing, and Hudi's reader fails
        # on a missing archived timeline (`.hoodie/timeline/history`, made by the first archival).
        history = root / table / ".hoodie" / "timeline" / "history"
        history.mkdir(parents=True, exist_ok=True)
        if not any(history.iterdir()):
            (history / "lakeprune-bench-placeholder").touch()
    try:
        register_hive_tables(engine, root, [FACT], columns, ("region",), False, HUDI_REGISTRAR)
        register_hive_tables(engine, root, [DIMENSION], DIMENSION_COLUMNS, (), False, HUDI_REGISTRAR)
        for entry in (workdir / "metastore_hudi" / SCHEMA).rglob(".trinoSchema"):
            metadata = json.loads(entry.read_text())
            metadata.pop("storageFormat", None)  # PARQUET: one of Hive's own formats
            metadata["originalStorageFormat"] = HUDI_STORAGE_FORMAT
            entry.write_text(json.dumps(metadata))
        run(engine, f"SELECT count(*) FROM {table_name(HUDI, FACT)}")
    except TrinoQueryError as error:
        return f"{error.error_name}: {error.message}"
    return None


def copy_tables(engine: Engine, rows: int, lakeprune_files: int) -> dict[str, Any]:
    """Each peer's copy of `sales` and `customers`: its write time, files and bytes, and how many of
    its files' `sale_id` ranges overlap another file's of the same region (0: clustered as
    lakeprune's)."""
    batches = max(1, lakeprune_files // len(REGIONS))
    bounds = [rows * i // batches for i in range(batches + 1)]
    written: dict[str, Any] = {}
    for catalog in PEERS:
        # The file metastores keep each managed table under their own directory.
        engine.query(f"CREATE SCHEMA {catalog}.{SCHEMA}")
        connection = engine.connect(SCHEMA, catalog)
        try:
            cursor = connection.cursor()
            for key, value in WRITER_SESSION.items():
                cursor.execute(f"SET SESSION {key} = {value}")
                cursor.fetchall()
            fact, dimension = table_name(catalog, FACT), table_name(catalog, DIMENSION)
            began = datetime.now(UTC)
            if catalog == DELTA:
                # Trino 476 writes Delta tables on the local file system only by CTAS (an INSERT
                # needs a transaction log synchronizer for the scheme, which `local` lacks): one
                # statement, files cut at lakeprune's mean file size (`delta.target-max-file-size`).
                cursor.execute(
                    f"CREATE TABLE {fact} WITH ({FACT_PROPERTIES[catalog]}) AS {SOURCE} ORDER BY sale_id"
                )
                cursor.fetchall()
            else:
                cursor.execute(
                    f"CREATE TABLE {fact} WITH ({FACT_PROPERTIES[catalog]}) AS {SOURCE} WITH NO DATA"
                )
                cursor.fetchall()
                for low, high in itertools.pairwise(bounds):
                    cursor.execute(f"INSERT INTO {fact} {SOURCE} WHERE sale_id >= {low} AND sale_id < {high}")
                    cursor.fetchall()
            fact_seconds = (datetime.now(UTC) - began).total_seconds()
            properties = f" WITH ({DIMENSION_PROPERTIES[catalog]})" if DIMENSION_PROPERTIES[catalog] else ""
            cursor.execute(
                f"CREATE TABLE {dimension}{properties} AS SELECT * FROM {NATIVE}.{SCHEMA}.{DIMENSION}"
            )
            cursor.fetchall()
        finally:
            connection.close()
        files = table_files(engine, catalog)
        written[catalog] = {
            "overlapping_files": overlapping_files(engine, catalog),
            "insert_statements": batches,
            "fact_write_s": round(fact_seconds, 1),
            "files": len(files),
            "table_bytes": sum(f.stat().st_size for f in files),
        }
        progress(f"{catalog}: {len(files)} files in {fact_seconds:.0f} s")
    return written


def table_files(engine: Engine, catalog: str) -> list[Path]:
    """The data files of a peer's `sales`, as its connector lists them (`$path`)."""
    found = run(engine, f'SELECT DISTINCT "$path" FROM {table_name(catalog, FACT)}')[0]
    return [Path(str(p).removeprefix("local://").removeprefix("file://")) for (p,) in found]


def overlapping_files(engine: Engine, catalog: str) -> int:
    """Files of `sales` whose `sale_id` range overlaps that of another file of the same region."""
    ranges = run(
        engine,
        f'SELECT region, "$path", min(sale_id), max(sale_id) FROM {table_name(catalog, FACT)} GROUP BY 1, 2',
    )[0]
    by_region: dict[str, list[tuple[int, int, str]]] = {}
    for region, path, low, high in ranges:
        by_region.setdefault(region, []).append((low, high, path))
    overlapping = set()
    for files in by_region.values():
        files.sort()
        # Sorted by their lows, a file overlaps an earlier one when its low is at most the highest
        # high before it, and a later one when its high reaches the next file's low.
        highest = None
        for i, (low, high, path) in enumerate(files):
            if (highest is not None and low <= highest) or (i + 1 < len(files) and high >= files[i + 1][0]):
                overlapping.add(path)
            highest = high if highest is None else max(highest, high)
    return len(overlapping)


def benchmark_queries(rows: int, files: int) -> list[Query]:
    """The benchmark's shapes over a `rows`-row `sales` ({t}) and `customers` ({d})."""
    v = ShapeValues.of(rows, files)
    return [
        Query("point lookup", f"SELECT {COLUMNS} FROM {{t}} WHERE sale_id = {v.point}"),
        Query(
            "customer lookup",
            f"SELECT sale_id, ts, amount FROM {{t}} WHERE customer_id = {v.customer}",
        ),
        Query(
            "ts range (0.1%)",
            "SELECT sale_id, customer_id, amount FROM {t} "
            f"WHERE ts >= TIMESTAMP '{v.low}' AND ts < TIMESTAMP '{v.high}'",
        ),
        Query("hour(ts) = 3", "SELECT count(*), sum(amount), min(sale_id) FROM {t} WHERE hour(ts) = 3"),
        Query("infix LIKE", f"SELECT sale_id, note FROM {{t}} WHERE note LIKE '%{RARE_TERM}%'"),
        # The filter is on the dimension's `name`: only the dynamic filter on `customer_id` (the
        # build side's ids) can reach the fact table.
        Query(
            "star join",
            "SELECT d.name, count(*), sum(t.amount), min(t.ts) "
            "FROM {t} t JOIN {d} d ON t.customer_id = d.customer_id "
            f"WHERE d.name IN ({v.star_names()}) GROUP BY d.name",
        ),
        Query(
            "full scan aggregate",
            "SELECT region, count(*), sum(amount), count(DISTINCT customer_id), min(ts), max(ts) "
            "FROM {t} GROUP BY region",
        ),
    ]


# Checked equal on every catalog with the queries, not timed: the whole table, column by column.
CHECK = Query(
    "whole-table check",
    "SELECT count(*), sum(sale_id), sum(customer_id), sum(amount), min(ts), max(ts), count(note), "
    "min(note), max(note), count(DISTINCT region) FROM {t}",
)


def row_count(engine: Engine, catalog: str) -> int:
    count: int = run(engine, f"SELECT count(*) FROM {table_name(catalog, FACT)}")[0][0][0]
    return count
