"""Trino through lakeprune vs Trino's own Hive connector, side by side in one run, over
the same Parquet files; and the sidecar's GetRows throughput. Not a test.

1. Spark (`local[2]`, UTC, in a child process so that its JVM is gone before anything is timed)
   builds an insert-only lakeprune table `trips` (`trip_id bigint, city string, driver_id int,
   ts timestamp, fare double, note string`; record key `trip_id`, partitioned by `city`, 6 values;
   column stats, partition stats, a bloom filter on `note`; file sizes set for ~`--files` files).
   Insert-only, one commit: every Parquet file under the table directory is live, so Hive, which
   reads every file of each partition directory (and skips the hidden `.lakeprune/`), sees exactly
   the table's rows. `ts` is whole seconds, so the millisecond timestamps of both paths are exact.
2. An in-process sidecar (Thrift only) over the warehouse, and a local Trino 368 with two
   catalogs: `lakeprune` (the sidecar) and `hive` (Hive connector, file metastore in a temporary
   directory) whose `bench.trips` is an external table on the same directory, partitions
   registered with `sync_partition_metadata`. Both catalogs must return the same answers (counts,
   sums, per-city figures, and every benchmark query's rows) before anything is timed.
3. Three queries on both catalogs, one warm-up each, then `--repeat` timed runs alternating the
   catalogs (wall time in the `trino` client; also Trino's own stats): a record-key point lookup,
   a 0.1% range on the clustered `ts`, and a full-scan aggregate. For lakeprune, the splits the
   sidecar served (its `lakeprune_prune_files_out_total{api="thrift"}`) against the table's files.
4. GetRows throughput, Thrift client straight against the sidecar: list every split (ALL
   constraint), fetch every page of every split with all columns at maxBytes 16 MB; reply bytes
   (the sidecar's `lakeprune_bytes_served_total{api="thrift"}`) and rows per second, by 1 client
   process and by `--clients` client processes at once (the splits dealt out among them).

    .venv/bin/python bench/trino_vs_hive.py [--rows 2000000] [--files 300] [--repeat 5] [--keep]

Writes `bench/results/trino_vs_hive.json` and prints a summary; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# The repository root: the end-to-end helpers (`tests.e2e`) start Trino and read the counters.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport.TSocket import TSocket
from thrift.transport.TTransport import TFramedTransport

from pruner.engines import engine_spec, ensure_java_runtime, hive_file_catalog
from pruner.serving.config import ServeConfig
from pruner.sidecar import Sidecar
from pruner.table.table import LakeTable
from pruner.thrift import idl
from tests.e2e.engines import Engine, local_engine
from tests.e2e.queries import counter, normalized, served

SCHEMA, TABLE = "bench", "trips"
DDL = "trip_id bigint, city string, driver_id int, ts timestamp, fare double, note string"
COLUMNS = ["trip_id", "city", "driver_id", "ts", "fare", "note"]
# Hive: partition column last; Trino 368's Hive connector reads TIMESTAMP_MICROS as timestamp(3).
HIVE_COLUMNS = "trip_id bigint, driver_id integer, ts timestamp(3), fare double, note varchar, city varchar"
CITIES = ["ams", "ber", "cdg", "dub", "lis", "mad"]
BASE = datetime(2026, 1, 1, tzinfo=UTC)
TS_STEP_SECONDS = 15  # trip k starts at BASE + 15 k seconds: ts is clustered like trip_id
DRIVERS = 20_000
DEFAULT_RECORD_BYTES = 64  # the writer's estimate of bytes per record before a table's first write
MAX_BYTES = 16 * 1024**2  # GetRows maxBytes: the catalog's max-response-size
CATALOGS = ("lakeprune", "hive")
STARTED = time.monotonic()


def progress(message: str) -> None:
    print(f"[{time.monotonic() - STARTED:7.1f} s] {message}", file=sys.stderr, flush=True)


# Table ------------------------------------------------------------------------------------------


def build_table(location: str, rows: int, files: int) -> None:
    """Create and fill the table (run in a child process: Spark's JVM exits with it)."""
    from pyspark.sql import functions as F

    from builder import LakepruneTable
    from builder.session import spark_session

    spark = spark_session(master="local[2]")
    table = LakepruneTable.create(
        location,
        DDL,
        record_key="trip_id",
        partition_by=["city"],
        spark=spark,
        properties={
            # The first insert sizes files with the writer's 64-byte estimate per record.
            "write.target_file_size_bytes": max(1, DEFAULT_RECORD_BYTES * rows // files),
            "write.small_file_limit_bytes": 1,
        },
    )
    table.sql(f"CREATE INDEX stats ON {TABLE} USING column_stats")
    table.sql(f"CREATE INDEX pstats ON {TABLE} USING partition_stats")
    table.sql(f"CREATE INDEX bf ON {TABLE} USING bloom_filters (note)")
    key = F.col("id")
    df = spark.range(rows).select(
        key.alias("trip_id"),
        F.element_at(F.array(*[F.lit(c) for c in CITIES]), (key % len(CITIES) + 1).cast("int")).alias("city"),
        (F.abs(F.hash(key)) % DRIVERS).cast("int").alias("driver_id"),
        F.timestamp_seconds(F.lit(int(BASE.timestamp())) + key * TS_STEP_SECONDS).alias("ts"),
        F.round((key * 7919 % 10_000) / 100.0 + 2.5, 2).alias("fare"),
        F.when(key % 11 == 0, F.lit(None))
        .otherwise(F.concat(F.lit("note-"), (key * 31 % 1000).cast("string")))
        .alias("note"),
    )
    table.insert(df)
    spark.stop()


def check_layout(location: Path) -> dict[str, Any]:
    """The table's live files, and proof that they are all the Parquet files Hive will list."""
    live = LakeTable.open(str(location)).snapshot().files()
    on_disk = [
        p
        for p in location.rglob("*.parquet")
        if not any(part.startswith((".", "_")) for part in p.relative_to(location).parts)
    ]
    if len(on_disk) != len(live):
        raise SystemExit(f"{len(on_disk)} Parquet files under {location} but {len(live)} live files")
    return {
        "rows": sum(f.rows for f in live),
        "files": len(live),
        "table_bytes": sum(f.size for f in live),
        "partitions": len({f.partition for f in live}),
    }


# Queries ----------------------------------------------------------------------------------------


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
        f"'{location.absolute().as_uri()}', format = 'PARQUET', partitioned_by = ARRAY['city'])"
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
                        "splits": after["files_out"] - before["files_out"],
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
        summary["splits_served"] = statistics.median(s["splits"] for s in samples)
        summary["getrows_pages"] = statistics.median(s["pages"] for s in samples)
        summary["reply_bytes"] = statistics.median(s["bytes"] for s in samples)
        # Sum of the GetRows handler times in the sidecar (calls overlap when Trino runs splits at once).
        summary["sidecar_getrows_busy_s"] = round(statistics.median(s["busy"] for s in samples), 3)
    return summary


def _data_served(sidecar: Sidecar) -> dict[str, float]:
    return {
        "bytes": counter(sidecar, "lakeprune_bytes_served_total", api="thrift"),
        "busy": _getrows_seconds(sidecar),
    }


# GetRows throughput -----------------------------------------------------------------------------


def _connect(port: int) -> tuple[Any, TFramedTransport]:
    transport = TFramedTransport(TSocket("127.0.0.1", port))
    transport.open()
    return idl.Service.Client(TBinaryProtocolAccelerated(transport)), transport


def list_splits(port: int) -> list[bytes]:
    client, transport = _connect(port)
    try:
        found: list[bytes] = []
        token = None
        while True:
            batch = client.trinoGetSplits(
                idl.SchemaTableName(SCHEMA, TABLE),
                idl.NullableColumnSet(None),
                idl.TupleDomain({}),
                1000,
                idl.NullableToken(token),
            )
            found += [s.splitId.id for s in batch.splits]
            if batch.nextToken is None:
                return found
            token = batch.nextToken
    finally:
        transport.close()


def fetch_splits(port: int, split_ids: list[bytes], ready: Any, start: Any, out: Any) -> None:
    """One client process: connect, wait for the start signal, read every page of its splits."""
    client, transport = _connect(port)
    ready.put(os.getpid())
    start.wait()
    rows = pages = 0
    for split_id in split_ids:
        token = None
        while True:
            page = client.trinoGetRows(idl.Id(split_id), COLUMNS, MAX_BYTES, idl.NullableToken(token))
            rows += page.rowCount
            pages += 1
            if page.nextToken is None:
                break
            token = page.nextToken
    transport.close()
    out.put((rows, pages))


def getrows_pass(sidecar: Sidecar, split_ids: list[bytes], clients: int) -> dict[str, Any]:
    """All splits read by `clients` client processes at once (dealt out round robin)."""
    assert sidecar.thrift_port is not None
    context = multiprocessing.get_context("spawn")  # no fork of a process serving Thrift
    ready, start, out = context.Queue(), context.Event(), context.Queue()
    processes = [
        context.Process(
            target=fetch_splits, args=(sidecar.thrift_port, split_ids[i::clients], ready, start, out)
        )
        for i in range(clients)
    ]
    for p in processes:
        p.start()
    for _ in processes:
        ready.get(timeout=300)
    bytes_before = counter(sidecar, "lakeprune_bytes_served_total", api="thrift")
    busy_before = _getrows_seconds(sidecar)
    begin = time.perf_counter()
    start.set()
    results = [out.get(timeout=1800) for _ in processes]
    wall = time.perf_counter() - begin
    for p in processes:
        p.join()
    reply_bytes = counter(sidecar, "lakeprune_bytes_served_total", api="thrift") - bytes_before
    busy = _getrows_seconds(sidecar) - busy_before
    rows = sum(r for r, _ in results)
    return {
        "clients": clients,
        "seconds": round(wall, 3),
        "rows": rows,
        "pages": sum(p for _, p in results),
        "reply_bytes": int(reply_bytes),
        "mb_per_s": round(reply_bytes / wall / 1e6, 2),
        "rows_per_s": round(rows / wall),
        "server_busy_s": round(busy, 3),  # sum of GetRows handler times (overlapping when concurrent)
    }


def _getrows_seconds(sidecar: Sidecar) -> float:
    return counter(sidecar, "lakeprune_request_seconds_sum", api="thrift", method="getRows", status="ok")


def getrows_throughput(sidecar: Sidecar, clients: int, passes: int) -> dict[str, Any]:
    assert sidecar.thrift_port is not None
    split_ids = list_splits(sidecar.thrift_port)
    progress(f"GetRows: {len(split_ids)} splits; warm-up pass")
    getrows_pass(sidecar, split_ids, 1)
    result: dict[str, Any] = {"splits": len(split_ids), "max_bytes": MAX_BYTES, "columns": COLUMNS}
    for n in sorted({1, clients}):
        runs = [getrows_pass(sidecar, split_ids, n) for _ in range(passes)]
        best = sorted(runs, key=lambda r: r["mb_per_s"])[len(runs) // 2]  # the median pass
        result[f"{n}_client{'s' if n > 1 else ''}"] = best | {
            "mb_per_s_all_passes": [r["mb_per_s"] for r in runs]
        }
        progress(f"GetRows, {n} client(s): {best['mb_per_s']} MB/s, {best['rows_per_s']:,} rows/s")
    return result


# Main -------------------------------------------------------------------------------------------


def machine(engine: Engine) -> dict[str, Any]:
    spec = engine_spec("trino")
    java = ensure_java_runtime(spec.java)
    return {
        "platform": f"{platform.system()} {platform.machine()}",
        "cores": os.cpu_count(),
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3, 1),
        "python": platform.python_version(),
        "trino": engine.query("SELECT node_version FROM system.runtime.nodes")[0][0],
        "java_runtime": f"{spec.java.name} (Java {java.version})",
    }


def print_summary(result: dict[str, Any]) -> None:
    t = result["table"]
    print(
        f"\n{t['rows']:,} rows, {t['files']} files, {t['table_bytes'] / 1e6:.1f} MB, {t['partitions']} "
        f"partitions; Trino {result['machine']['trino']}, {result['machine']['cores']} cores"
    )
    print(f"{'query':<22}{'catalog':<11}{'median s':>10}{'min s':>10}{'rows':>8}{'splits':>14}")
    for name, q in result["queries"].items():
        for catalog in CATALOGS:
            s = q[catalog]
            splits = (
                f"{s['splits_served']:.0f} / {t['files']}"
                if catalog == "lakeprune"
                else f"{s['trino_total_splits']:.0f} (Trino)"
            )
            print(
                f"{name:<22}{catalog:<11}{s['median_s']:>10.3f}{s['min_s']:>10.3f}{s['rows_returned']:>8}{splits:>14}"
            )
    g = result["getrows"]
    for key in (k for k in g if k.endswith(("_client", "_clients"))):
        print(f"GetRows, {key.replace('_', ' ')}: {g[key]['mb_per_s']} MB/s, {g[key]['rows_per_s']:,} rows/s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--files", type=int, default=300, help="files to aim for (~)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per query and catalog")
    parser.add_argument("--clients", type=int, default=4, help="concurrent GetRows client processes")
    parser.add_argument("--passes", type=int, default=3, help="timed GetRows passes (median reported)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "trino_vs_hive.json")
    args = parser.parse_args()
    load_before = os.getloadavg()
    workdir = Path(tempfile.mkdtemp(prefix="lakeprune-trino-vs-hive-"))
    location = workdir / "warehouse" / TABLE
    sidecar: Sidecar | None = None
    try:
        progress(f"building {args.rows:,} rows in ~{args.files} files under {location}")
        begin = time.perf_counter()
        builder = multiprocessing.get_context("spawn").Process(
            target=build_table, args=(str(location), args.rows, args.files)
        )
        builder.start()
        builder.join()
        if builder.exitcode != 0:
            raise SystemExit(f"building the table failed (exit code {builder.exitcode})")
        build_seconds = time.perf_counter() - begin
        layout = check_layout(location)
        progress(f"built in {build_seconds:.0f} s: {layout}")

        config = ServeConfig(
            {SCHEMA: str(location.parent)}, host="127.0.0.1", grpc_port=None, thrift_port=0, metrics_port=None
        )
        sidecar = Sidecar(config).start()
        if not sidecar.wait_ready(60):
            raise SystemExit("the sidecar did not load its catalog")
        address = f"127.0.0.1:{sidecar.thrift_port}"
        hive = {"hive": hive_file_catalog(engine_spec("trino"), workdir / "metastore")}
        progress(f"sidecar on {address}; starting Trino 368 with catalogs lakeprune and hive")
        begin = time.perf_counter()
        with local_engine("trino", address, hive) as engine:
            startup = time.perf_counter() - begin
            progress(f"Trino answers on port {engine.port} ({startup:.0f} s); registering the Hive table")
            register_hive_table(engine, location)
            queries = benchmark_queries(layout["rows"])
            check_agreement(engine, queries, layout)
            progress("both catalogs agree; timing the queries")
            load_queries = os.getloadavg()
            timed = time_queries(engine, sidecar, queries, args.repeat)
            load_queries_end = os.getloadavg()
            info = machine(engine)
        progress("Trino stopped; GetRows throughput")
        getrows = getrows_throughput(sidecar, args.clients, args.passes)
        result = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": info
            | {
                # 1/5/15-minute load averages: other jobs may share the 2 cores.
                "load_average_at_start": [round(x, 2) for x in load_before],
                "load_average_queries_start": [round(x, 2) for x in load_queries],
                "load_average_queries_end": [round(x, 2) for x in load_queries_end],
                "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
            },
            "table": layout | {"build_seconds": round(build_seconds, 1)},
            "trino_startup_s": round(startup, 1),
            "repeat": args.repeat,
            "queries": timed,
            "getrows": getrows,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
        print_summary(result)
        progress(f"wrote {args.out}")
    finally:
        if sidecar is not None:
            sidecar.stop(2)
        if args.keep:
            progress(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
