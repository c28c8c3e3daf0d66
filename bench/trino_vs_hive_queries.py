"""The SQL side of the Trino vs Hive benchmark (`trino_vs_hive.py`): the `trips` table registered in
Trino's Hive connector as an external table on the same directory (`register_hive_table`), the
three benchmark queries and the checks that both catalogs, `lakeprune` and `hive`, answer them
identically (`check_agreement`), and the timing: one warm-up per query and catalog, then timed runs
alternating the catalogs, summarised with Trino's own query stats and, for lakeprune, the splits,
pages, bytes and GetRows time the sidecar served (`time_queries`). Imported by `trino_vs_hive.py`,
which puts the repository root on `sys.path` for `tests.e2e`."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from support import progress
from trino_vs_hive_getrows import getrows_seconds
from trino_vs_hive_table import BASE, COLUMNS, SCHEMA, TABLE, TS_STEP_SECONDS

from pruner.engines import engine_spec
from pruner.engines.catalog import hive_location
from pruner.sidecar import Sidecar
from tests.e2e.engines import Engine
from tests.e2e.queries import counter, normalized, served

# Hive: partition column last; Trino's Hive connector reads TIMESTAMP_MICROS as timestamp(3) by
# default (hive.timestamp-precision=MILLISECONDS), as the Thrift catalog carries it.
HIVE_COLUMNS = "trip_id bigint, driver_id integer, ts timestamp(3), fare double, note varchar, city varchar"
CATALOGS = ("lakeprune", "hive")


@dataclass(frozen=True)
class Query:
    name: str
    sql: str  # {t}: the catalog-qualified table


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
    ]


CHECKS = [
    "SELECT count(*), sum(fare), count(DISTINCT driver_id), sum(trip_id), min(ts), max(ts), "
    "count(note), min(note), max(note) FROM {t}",
    "SELECT city, count(*), sum(trip_id), sum(fare), max(ts) FROM {t} GROUP BY city",
]


def table_name(catalog: str) -> str:
    return f"{catalog}.{SCHEMA}.{TABLE}"


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


def register_hive_table(engine: Engine, location: Path) -> None:
    engine.query(f"CREATE SCHEMA hive.{SCHEMA}")
    engine.query(
        f"CREATE TABLE {table_name('hive')} ({HIVE_COLUMNS}) WITH (external_location = "
        f"'{hive_location(engine_spec('trino'), location)}', format = 'PARQUET', "
        "partitioned_by = ARRAY['city'])"
    )
    engine.query(f"CALL hive.system.sync_partition_metadata('{SCHEMA}', '{TABLE}', 'FULL')")


def check_agreement(engine: Engine, queries: list[Query], layout: dict[str, Any]) -> None:
    """Both catalogs answer the checks and the benchmark queries identically; fail loudly if not."""
    for sql in CHECKS + [q.sql for q in queries]:
        answers = {c: normalized(run(engine, sql.format(t=table_name(c)))[0]) for c in CATALOGS}
        if answers["lakeprune"] != answers["hive"]:
            raise SystemExit(f"the catalogs disagree on {sql}:\n  {answers}")
        if not answers["hive"]:
            raise SystemExit(f"no rows for {sql}")
    total = run(engine, f"SELECT count(*) FROM {table_name('hive')}")[0][0][0]
    if total != layout["rows"]:
        raise SystemExit(f"Hive counts {total} rows, the table has {layout['rows']}")


def time_queries(engine: Engine, sidecar: Sidecar, queries: list[Query], repeat: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for query in queries:
        samples: dict[str, list[dict[str, Any]]] = {c: [] for c in CATALOGS}
        for catalog in CATALOGS:  # warm-up
            run(engine, query.sql.format(t=table_name(catalog)))
        for _ in range(repeat):
            for catalog in CATALOGS:  # alternate, so that background load hits both alike
                before = served(sidecar) | _data_served(sidecar)
                rows, wall, stats = run(engine, query.sql.format(t=table_name(catalog)))
                after = served(sidecar) | _data_served(sidecar)
                samples[catalog].append(
                    {
                        "wall": wall,
                        "rows": len(rows),
                        "stats": stats,
                        "pages": after["get_rows"] - before["get_rows"],
                        "bytes": after["bytes"] - before["bytes"],
                        "busy": after["busy"] - before["busy"],
                    }
                )
        results[query.name] = {"sql": query.sql.format(t="trips")} | {
            c: _summary(c, s) for c, s in samples.items()
        }
        progress(
            f"{query.name}: "
            + ", ".join(f"{c} {results[query.name][c]['median_s'] * 1000:.0f} ms" for c in CATALOGS)
        )
    return results


def _summary(catalog: str, samples: list[dict[str, Any]]) -> dict[str, Any]:
    walls = [s["wall"] for s in samples]

    def median_stat(key: str) -> float:
        return statistics.median(float(s["stats"].get(key, 0)) for s in samples)

    summary: dict[str, Any] = {
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
    if catalog == "lakeprune":
        summary["getrows_pages"] = statistics.median(s["pages"] for s in samples)
        summary["reply_bytes"] = statistics.median(s["bytes"] for s in samples)
        # Sum of the GetRows handler times in the sidecar (calls overlap when Trino runs splits at once).
        summary["sidecar_getrows_busy_s"] = round(statistics.median(s["busy"] for s in samples), 3)
    return summary


def _data_served(sidecar: Sidecar) -> dict[str, float]:
    return {
        "bytes": counter(sidecar, "lakeprune_bytes_served_total", api="thrift"),
        "busy": getrows_seconds(sidecar),
    }
