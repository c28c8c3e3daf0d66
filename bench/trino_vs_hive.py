"""Trino through lakeprune vs Trino's own Hive connector, side by side in one run, over
the same Parquet files; and the sidecar's GetRows throughput. Not a test.

1. Spark (`local[2]`, UTC, in a child process so that its JVM is gone before anything is timed)
   builds an insert-only lakeprune table `trips` (`trip_id bigint, city string, driver_id int,
   ts timestamp, fare double, note string`; record key `trip_id`, partitioned by `city`, 6 values;
   column stats, partition stats, a bloom filter on `note`; file sizes set for ~`--files` files).
   Insert-only, one commit: every Parquet file under the table directory is live, so Hive, which
   reads every file of each partition directory (and skips the hidden `.lakeprune/`), sees exactly
   the table's rows. `ts` is whole seconds, so the millisecond timestamps of both paths are exact.
2. An in-process sidecar (Thrift only) over the warehouse, and a local Trino 476 (Java 25) with
   two catalogs: `lakeprune` (the sidecar, Thrift) and `hive` (Hive connector over Trino's native
   local file system, file metastore in a temporary directory) whose `bench.trips` is an external
   table on the same directory (a `local://` location), partitions registered with
   `sync_partition_metadata`. Both catalogs must return the same answers (counts,
   sums, per-city figures, and every benchmark query's rows) before anything is timed.
3. Three queries on both catalogs, one warm-up each, then `--repeat` timed runs alternating the
   catalogs (wall time in the `trino` client; also Trino's own stats): a record-key point lookup,
   a 0.1% range on the clustered `ts`, and a full-scan aggregate. Splits are Trino's count for
   both catalogs (the sidecar's prune counters move only when a listing is planned, and the timed
   runs reuse the warm-up's plan); for lakeprune also the GetRows pages, bytes and handler time.
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
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# The repository root: the end-to-end helpers (`tests.e2e`) start Trino and read the counters.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from support import progress
from trino_vs_hive_getrows import getrows_throughput
from trino_vs_hive_queries import (
    CATALOGS,
    benchmark_queries,
    check_agreement,
    register_hive_table,
    time_queries,
)
from trino_vs_hive_table import SCHEMA, TABLE, build_table, check_layout

from pruner.engines import engine_spec, ensure_java_runtime, hive_file_catalog
from pruner.serving.config import ServeConfig
from pruner.sidecar import Sidecar
from tests.e2e.engines import Engine, local_engine


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
            # Trino's own count (a few more than the files: the aggregation's stages): the
            # sidecar's prune counters move only when a listing is planned, and every timed run
            # reuses the plan of its warm-up (pruner/serving/plans.py).
            splits = f"{s['trino_total_splits']:.0f} (Trino)"
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
        progress(f"sidecar on {address}; starting Trino 476 with catalogs lakeprune and hive")
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
