"""The SQL side of the Trino vs Hive benchmark (`trino_vs_hive.py`): the tables registered in Trino's
Hive connector as external tables on the same directories (`register_hive_tables`), the four
benchmark queries (point lookup, 0.1% range, full scan, star join) and the checks that the three
catalogs, `lakeprune` (native, gRPC), `lakeprune_thrift` and `hive`, answer them identically
(`check_agreement`), and the timing: one warm-up per query and catalog, then timed runs alternating
the catalogs, summarised with Trino's own query stats and the sidecar's counters: for the native
catalog the files its prunes considered and kept (api="grpc"), for the Thrift one the files kept,
GetRows pages, bytes and handler time (api="thrift") (`time_queries`). Imported by
`trino_vs_hive.py`, which puts the repository root on `sys.path` for `tests.e2e`, and by
`text_index.py`, which registers its log tables and times its text queries on the native and Hive
catalogs only."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from support import progress
from trino_vs_hive_getrows import getrows_seconds
from trino_vs_hive_table import BASE, COLUMNS, DIMENSION, SCHEMA, TABLE, TS_STEP_SECONDS

from pruner.engines import engine_spec
from pruner.engines.catalog import hive_location
from pruner.sidecar import Sidecar
from tests.e2e.engines import Engine
from tests.e2e.queries import counter, normalized, served

# Hive: partition column last; Trino's Hive connector reads TIMESTAMP_MICROS as timestamp(3) by
# default (hive.timestamp-precision=MILLISECONDS), as the Thrift catalog carries it.
HIVE_COLUMNS = "trip_id bigint, driver_id integer, ts timestamp(3), fare double, note varchar, city varchar"
HIVE_DIMENSION_COLUMNS = "driver_id integer, name varchar, home varchar"
NATIVE, THRIFT, HIVE = "lakeprune", "lakeprune_thrift", "hive"
CATALOGS = (NATIVE, THRIFT, HIVE)
STAR_DRIVERS = (1234, 15678)  # the star join's drivers: each drove a contiguous run of trips


@dataclass(frozen=True)
class Query:
    name: str
    sql: str  # {t}: the catalog-qualified fact table, {d}: the dimension table


def benchmark_queries(rows: int) -> list[Query]:
    point = rows * 3 // 5 + 123
    span = max(1, rows // 1000)  # 0.1% of the rows
    start = rows // 3
    low = datetime.fromtimestamp(BASE.timestamp() + start * TS_STEP_SECONDS, UTC).replace(tzinfo=None)
    high = datetime.fromtimestamp(BASE.timestamp() + (start + span) * TS_STEP_SECONDS, UTC).replace(
        tzinfo=None
    )
    return [
        Query("point lookup", f"SELECT {', '.join(COLUMNS)} FROM {{t}} WHERE trip_id = {point}"),
        Query(
            "ts range (0.1%)",
            f"SELECT trip_id, driver_id, fare FROM {{t}} "
            f"WHERE ts >= TIMESTAMP '{low:%Y-%m-%d %H:%M:%S}' AND ts < TIMESTAMP '{high:%Y-%m-%d %H:%M:%S}'",
        ),
        Query("full scan aggregate", "SELECT count(*), sum(fare), count(DISTINCT driver_id) FROM {t}"),
        # The filter is on the dimension's `name`, not on the join key, so only the dynamic filter
        # (driver_id IN the build side's ids) can reach the fact table.
        Query(
            "star join",
            "SELECT d.name, count(*), sum(t.fare), min(t.ts) "
            "FROM {t} t JOIN {d} d ON t.driver_id = d.driver_id "
            f"WHERE d.name IN ({', '.join(repr(f'driver-{k}') for k in STAR_DRIVERS)}) GROUP BY d.name",
        ),
    ]


CHECKS = [
    "SELECT count(*), sum(fare), count(DISTINCT driver_id), sum(trip_id), min(ts), max(ts), "
    "count(note), min(note), max(note) FROM {t}",
    "SELECT city, count(*), sum(trip_id), sum(fare), max(ts) FROM {t} GROUP BY city",
]


def table_name(catalog: str, table: str = TABLE) -> str:
    return f"{catalog}.{SCHEMA}.{table}"


def qualified(sql: str, catalog: str, table: str = TABLE, dimension: str = DIMENSION) -> str:
    return sql.format(t=table_name(catalog, table), d=table_name(catalog, dimension))


def run(engine: Engine, sql: str) -> tuple[list[list[Any]], float, dict[str, Any]]:
    """Rows, client wall seconds and Trino's query stats of one statement."""
    connection = engine.connect(SCHEMA)
    try:
        cursor = connection.cursor()
        begin = time.perf_counter()
        cursor.execute(sql)
        rows = [list(r) for r in cursor.fetchall()]
        wall = time.perf_counter() - begin
        return rows, wall, dict(cursor.stats)
    finally:
        connection.close()


def register_hive_tables(
    engine: Engine,
    warehouse: Path,
    tables: list[str],
    columns: str = HIVE_COLUMNS,
    partitioned_by: tuple[str, ...] = ("city",),
    dimension: bool = True,
    catalog: str = HIVE,
) -> None:
    """`<catalog>.bench.<table>` (a Hive catalog, by default `hive`) for each table (by default
    `trips`-shaped: `columns`, partition columns last, `partitioned_by`) and, with `dimension`, for
    `drivers`, on the same directories."""
    spec = engine_spec("trino")
    engine.query(f"CREATE SCHEMA IF NOT EXISTS {catalog}.{SCHEMA}")
    partitioning = (
        f", partitioned_by = ARRAY[{', '.join(repr(c) for c in partitioned_by)}]" if partitioned_by else ""
    )
    for table in tables:
        engine.query(
            f"CREATE TABLE {table_name(catalog, table)} ({columns}) WITH (external_location = "
            f"'{hive_location(spec, warehouse / table)}', format = 'PARQUET'{partitioning})"
        )
        if partitioned_by:
            engine.query(f"CALL {catalog}.system.sync_partition_metadata('{SCHEMA}', '{table}', 'FULL')")
    if dimension:
        engine.query(
            f"CREATE TABLE {table_name(HIVE, DIMENSION)} ({HIVE_DIMENSION_COLUMNS}) WITH ("
            f"external_location = '{hive_location(spec, warehouse / DIMENSION)}', format = 'PARQUET')"
        )


def check_agreement(
    engine: Engine,
    queries: list[Query],
    layout: dict[str, Any],
    table: str = TABLE,
    checks: bool = True,
    catalogs: tuple[str, ...] = CATALOGS,
    dimension: str = DIMENSION,
) -> None:
    """The catalogs (by default all three) answer the checks and the benchmark queries identically
    (each compared with Hive's answer, `hive` being one of them); fail loudly if not."""
    for sql in (CHECKS if checks else []) + [q.sql for q in queries]:
        answers = {
            c: normalized(_naive(run(engine, qualified(sql, c, table, dimension))[0])) for c in catalogs
        }
        if any(answers[c] != answers[HIVE] for c in catalogs):
            raise SystemExit(f"the catalogs disagree on {sql} ({table}):\n  {answers}")
        if not answers[HIVE]:
            raise SystemExit(f"no rows for {sql} ({table})")
    total = run(engine, f"SELECT count(*) FROM {table_name(HIVE, table)}")[0][0][0]
    if total != layout["rows"]:
        raise SystemExit(f"Hive counts {total} rows, {table} has {layout['rows']}")


def _naive(rows: list[list[Any]]) -> list[list[Any]]:
    """The native catalog reads Spark's `timestamp` (an instant) as `timestamp(6) with time zone`;
    Hive and Thrift as a `timestamp(3)` in UTC: compare both as naive UTC."""

    def value(v: Any) -> Any:
        if isinstance(v, datetime) and v.tzinfo is not None:
            return v.astimezone(UTC).replace(tzinfo=None)
        return v

    return [[value(v) for v in row] for row in rows]


def time_queries(
    engine: Engine,
    sidecar: Sidecar,
    queries: list[Query],
    repeat: int,
    table: str = TABLE,
    catalogs: tuple[str, ...] = CATALOGS,
    dimension: str = DIMENSION,
) -> dict[str, Any]:
    """Each query on each of `catalogs` (by default all three): a warm-up, then `repeat` timed runs."""
    results: dict[str, Any] = {}
    for query in queries:
        samples: dict[str, list[dict[str, Any]]] = {c: [] for c in catalogs}
        for catalog in catalogs:  # warm-up
            run(engine, qualified(query.sql, catalog, table, dimension))
        for _ in range(repeat):
            for catalog in catalogs:  # alternate, so that background load hits all alike
                before = _counters(sidecar)
                rows, wall, stats = run(engine, qualified(query.sql, catalog, table, dimension))
                after = _counters(sidecar)
                samples[catalog].append(
                    {"wall": wall, "rows": len(rows), "stats": stats}
                    | {k: after[k] - before[k] for k in after}
                )
        results[query.name] = {"sql": query.sql.format(t=table, d=dimension)} | {
            c: _summary(c, s) for c, s in samples.items()
        }
        progress(
            f"{table}, {query.name}: "
            + ", ".join(f"{c} {results[query.name][c]['median_s'] * 1000:.0f} ms" for c in catalogs)
        )
    return results


# Queries that touch no lakeprune or Hive table: what any query costs on this Trino (parse, plan,
# schedule, the client's HTTP round trips), and one that also schedules a split and a table scan.
FLOOR_QUERIES = {
    "SELECT 1": "SELECT 1",
    "one split of a system table": "SELECT count(*) FROM system.runtime.nodes",
}


def trino_floor(engine: Engine, repeat: int) -> dict[str, Any]:
    """Median client wall time and Trino elapsed time of each floor query (after a warm-up run)."""
    floor: dict[str, Any] = {}
    for name, sql in FLOOR_QUERIES.items():
        run(engine, sql)
        samples = [run(engine, sql) for _ in range(repeat)]
        floor[name] = {
            "sql": sql,
            "median_s": round(statistics.median(wall for _, wall, _ in samples), 4),
            "trino_elapsed_ms": statistics.median(float(s.get("elapsedTimeMillis", 0)) for *_, s in samples),
        }
        progress(f"Trino floor, {name}: {floor[name]['median_s'] * 1000:.0f} ms")
    return floor


def run_summary(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Timed runs of one query on one catalog (each `{"wall": s, "rows": n, "stats": Trino's}`):
    the client wall times and the medians of Trino's own query stats."""
    walls = [s["wall"] for s in samples]

    def median_stat(key: str) -> float:
        return statistics.median(float(s["stats"].get(key, 0)) for s in samples)

    return {
        "median_s": round(statistics.median(walls), 4),
        "min_s": round(min(walls), 4),
        "runs_s": [round(w, 4) for w in walls],
        "rows_returned": samples[0]["rows"],
        "trino_elapsed_ms": median_stat("elapsedTimeMillis"),
        "trino_cpu_ms": median_stat("cpuTimeMillis"),
        "trino_processed_rows": median_stat("processedRows"),
        "trino_processed_bytes": median_stat("processedBytes"),
        "trino_total_splits": median_stat("totalSplits"),
    }


def _summary(catalog: str, samples: list[dict[str, Any]]) -> dict[str, Any]:
    summary = run_summary(samples)
    if catalog == NATIVE:
        # Per run: the files the sidecar's prunes considered and kept for this query (api="grpc").
        summary["sidecar_prune_files_in"] = statistics.median(s["grpc_in"] for s in samples)
        summary["sidecar_prune_files_out"] = statistics.median(s["grpc_out"] for s in samples)
        # Per run: the sidecar's handler time (ms) and calls per gRPC method the query made.
        summary["sidecar_grpc_ms"] = {
            m: round(statistics.median(s[f"{m}_s"] for s in samples) * 1000, 1) for m in GRPC_METHODS
        }
        summary["sidecar_grpc_calls"] = {
            m: statistics.median(s[f"{m}_calls"] for s in samples) for m in GRPC_METHODS
        }
    if catalog == THRIFT:
        summary["sidecar_prune_files_in"] = statistics.median(s["files_in"] for s in samples)
        summary["sidecar_prune_files_out"] = statistics.median(s["files_out"] for s in samples)
        summary["getrows_pages"] = statistics.median(s["get_rows"] for s in samples)
        summary["reply_bytes"] = statistics.median(s["bytes"] for s in samples)
        # Sum of the GetRows handler times in the sidecar (calls overlap when Trino runs splits at once).
        summary["sidecar_getrows_busy_s"] = round(statistics.median(s["busy"] for s in samples), 3)
    return summary


GRPC_METHODS = ("GetTable", "GetTableStatistics", "PruneStream")


def _counters(sidecar: Sidecar) -> dict[str, float]:
    grpc: dict[str, float] = {}
    for method in GRPC_METHODS:
        labels = {"api": "grpc", "method": method, "status": "ok"}
        grpc[f"{method}_s"] = counter(sidecar, "lakeprune_request_seconds_sum", **labels)
        grpc[f"{method}_calls"] = counter(sidecar, "lakeprune_requests_total", **labels)
    return (
        grpc
        | served(sidecar)
        | {
            "bytes": counter(sidecar, "lakeprune_bytes_served_total", api="thrift"),
            "busy": getrows_seconds(sidecar),
            "grpc_in": counter(sidecar, "lakeprune_prune_files_in_total", api="grpc"),
            "grpc_out": counter(sidecar, "lakeprune_prune_files_out_total", api="grpc"),
        }
    )


def explain_analyze(
    engine: Engine,
    queries: list[Query],
    names: list[str],
    catalogs: tuple[str, ...] = CATALOGS,
    table: str = TABLE,
    dimension: str = DIMENSION,
) -> dict[str, dict[str, str]]:
    """`EXPLAIN ANALYZE` of the named queries on each catalog (run after the timing: it runs them)."""
    return {
        q.name: {
            c: run(engine, f"EXPLAIN ANALYZE {qualified(q.sql, c, table, dimension)}")[0][0][0]
            for c in catalogs
        }
        for q in queries
        if q.name in names
    }
