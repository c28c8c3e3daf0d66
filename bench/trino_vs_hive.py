"""Trino through lakeprune (native connector over gRPC, and the Thrift connector) vs Trino's own Hive
connector, side by side in one run, over the same Parquet files; a point-lookup sweep over 100 /
1,000 / 5,000 files; and the sidecar's GetRows throughput. Not a test.

1. Spark (`local[2]`, UTC, in a child process so that its JVM is gone before anything is timed)
   builds insert-only lakeprune tables (one commit each, so every Parquet file under a table
   directory is live and Hive, which reads every file of each partition directory and skips the
   hidden `.lakeprune/`, sees exactly the table's rows): `trips` (`trip_id bigint, city string,
   driver_id int, ts timestamp, fare double, note string`; record key `trip_id`, partitioned by
   `city`, 6 values; `ts` and `driver_id` clustered like `trip_id`; column stats, partition stats, a
   bloom filter on `note`; ~`--files` files), the dimension `drivers` (20,000 rows, one file), and
   for the sweep `trips_f<N>`, `--sweep-rows` rows in ~N files. `ts` is whole seconds, so the
   millisecond timestamps of Hive and Thrift are exact.
2. An in-process sidecar serving gRPC and Thrift over the warehouse, and a local Trino 476 (Java 25)
   with three catalogs: `lakeprune` (the native connector, gRPC), `lakeprune_thrift` (Thrift) and
   `hive` (Hive connector over Trino's native local file system, file metastore in a temporary
   directory) whose tables are external tables on the same directories. The native catalog and the
   Hive one wait the same `--df-wait` for a join's dynamic filter
   (`lakeprune.dynamic-filtering.wait-timeout`, `hive.dynamic-filtering.wait-timeout`). All three
   must return the same answers (counts, sums, per-city figures, every benchmark query's rows)
   before anything is timed.
3. Four queries on the three catalogs, one warm-up each, then `--repeat` timed runs alternating the
   catalogs (wall time in the `trino` client; also Trino's own stats): a record-key point lookup,
   a 0.1% range on the clustered `ts`, a full-scan aggregate and a star join (`trips` joined to two
   `drivers` picked by name: only the dynamic filter on `driver_id` reaches `trips`). Splits are
   Trino's count; the sidecar's prune counters (files considered / kept) per query.
4. The sweep: the point lookup on `trips_f<N>` for each N of `--sweep`, same protocol.
5. GetRows throughput, Thrift client straight against the sidecar (`--clients`, `--passes`;
   `--passes 0` skips it).

    .venv/bin/python bench/trino_vs_hive.py [--rows 2000000] [--files 300] [--repeat 5]
        [--sweep 100,1000,5000] [--sweep-rows 1000000] [--keep]

Writes `bench/results/trino_vs_hive.json` and prints a summary; progress goes to stderr.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# The repository root: the end-to-end helpers (`tests.e2e`) start Trino and read the counters.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from support import (
    build_in_child,
    progress,
    scratch_directory,
    serving_sidecar,
    table_bench_parser,
    write_results,
)
from trino_vs_hive_getrows import getrows_throughput
from trino_vs_hive_queries import (
    CATALOGS,
    HIVE,
    NATIVE,
    benchmark_queries,
    check_agreement,
    explain_analyze,
    register_hive_tables,
    time_queries,
    trino_floor,
)
from trino_vs_hive_sweep import point_lookup_sweep
from trino_vs_hive_table import SCHEMA, TABLE, build_tables, check_layout, sweep_table

from pruner.engines import engine_spec, ensure_java_runtime, hive_file_catalog
from pruner.engines.native_catalog import NativeCatalog
from pruner.engines.plugin import locate_plugin
from pruner.engines.spec import TRINO
from tests.e2e.engines import Engine, local_engine

# Issue 15's targets: lakeprune (native) median time over Hive's, at most.
TARGETS = {"full scan aggregate": 1.1, "point lookup": 0.25, "star join": 0.5}


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


def targets(queries: dict[str, Any]) -> dict[str, Any]:
    """Native lakeprune's median over Hive's for each targeted query, and whether the target is met."""
    out = {}
    for name, limit in TARGETS.items():
        ratio = queries[name][NATIVE]["median_s"] / queries[name][HIVE]["median_s"]
        out[name] = {"ratio_vs_hive": round(ratio, 3), "target": limit, "met": ratio <= limit}
    return out


def print_summary(result: dict[str, Any]) -> None:
    t = result["table"]
    print(
        f"\n{t['rows']:,} rows, {t['files']} files, {t['table_bytes'] / 1e6:.1f} MB, {t['partitions']} "
        f"partitions; Trino {result['machine']['trino']}, {result['machine']['cores']} cores"
    )
    print(f"{'query':<22}{'catalog':<18}{'median s':>10}{'x Hive':>8}{'rows':>6}{'splits':>8}{'kept/of':>12}")
    for name, q in result["queries"].items():
        for catalog in CATALOGS:
            print(query_line(name, catalog, q))
    for name, t in result["targets"].items():
        print(
            f"target {name}: {t['ratio_vs_hive']}x Hive (<= {t['target']}x): "
            + ("met" if t["met"] else "NOT met")
        )
    for name, f in result["trino_floor"].items():
        print(f"Trino floor, {name}: {f['median_s']:.3f} s")
    for entry in result["sweep"]:
        for catalog in CATALOGS:
            print(query_line(f"point, {entry['files']} files", catalog, entry))
    g = result["getrows"]
    for key in (k for k in g if k.endswith(("_client", "_clients"))):
        print(f"GetRows, {key.replace('_', ' ')}: {g[key]['mb_per_s']} MB/s, {g[key]['rows_per_s']:,} rows/s")


def query_line(name: str, catalog: str, q: dict[str, Any]) -> str:
    """One row of the summary's query table: `q[catalog]`'s median against `q`'s Hive median, rows,
    splits and, for a lakeprune catalog, the files the sidecar's prunes kept of those considered."""
    s = q[catalog]
    kept = f"{s['sidecar_prune_files_out']:.0f}/{s['sidecar_prune_files_in']:.0f}" if catalog != HIVE else ""
    return (
        f"{name:<22}{catalog:<18}{s['median_s']:>10.3f}{s['median_s'] / q[HIVE]['median_s']:>8.2f}"
        f"{s['rows_returned']:>6}{s['trino_total_splits']:>8.0f}{kept:>12}"
    )


def main() -> None:
    parser = table_bench_parser(
        __doc__,
        rows=2_000_000,
        files=300,
        repeat=5,
        repeat_help="timed runs per query and catalog",
        out=Path(__file__).parent / "results" / "trino_vs_hive.json",
    )
    parser.add_argument(
        "--sweep", default="100,1000,5000", help="file counts of the point-lookup sweep ('' for none)"
    )
    parser.add_argument("--sweep-rows", type=int, default=1_000_000, help="rows of each sweep table")
    parser.add_argument(
        "--df-wait", default="1s", help="dynamic filtering wait timeout, native and Hive alike"
    )
    parser.add_argument("--clients", type=int, default=4, help="concurrent GetRows client processes")
    parser.add_argument("--passes", type=int, default=3, help="timed GetRows passes (median; 0: skip)")
    parser.add_argument(
        "--explain", default="", help="queries to EXPLAIN ANALYZE after the timing, comma-separated names"
    )
    args = parser.parse_args()
    sweep = [int(n) for n in args.sweep.split(",") if n.strip()]
    load_before = os.getloadavg()
    began = time.perf_counter()
    with scratch_directory("lakeprune-trino-vs-hive-", args.keep) as workdir:
        warehouse = workdir / "warehouse"
        location = warehouse / TABLE
        plugin = locate_plugin(TRINO)  # built by connector/trino/build.sh if need be
        progress(
            f"building {args.rows:,} rows in ~{args.files} files, drivers, sweep {sweep} under {warehouse}"
        )
        build_seconds = build_in_child(
            build_tables, str(warehouse), args.rows, args.files, sweep, args.sweep_rows
        )
        layout = check_layout(location)
        progress(f"built in {build_seconds:.0f} s: {layout}")

        with serving_sidecar(SCHEMA, warehouse) as sidecar:
            address = f"127.0.0.1:{sidecar.thrift_port}"
            grpc = NativeCatalog(
                f"127.0.0.1:{sidecar.grpc_port}", dynamic_filtering_wait_timeout=args.df_wait
            )
            hive = {
                "hive": hive_file_catalog(engine_spec("trino"), workdir / "metastore")
                | {"hive.dynamic-filtering.wait-timeout": args.df_wait}
            }
            progress(f"sidecar gRPC {sidecar.grpc_port}, Thrift {sidecar.thrift_port}; starting Trino 476")
            begin = time.perf_counter()
            with local_engine("trino", address, hive, grpc=grpc, plugin=plugin) as engine:
                startup = time.perf_counter() - begin
                progress(
                    f"Trino answers on port {engine.port} ({startup:.0f} s); registering the Hive tables"
                )
                register_hive_tables(engine, warehouse, [TABLE] + [sweep_table(n) for n in sweep])
                queries = benchmark_queries(layout["rows"])
                check_agreement(engine, queries, layout)
                progress("the three catalogs agree; timing the queries")
                load_queries = os.getloadavg()
                timed = time_queries(engine, sidecar, queries, args.repeat)
                floor = trino_floor(engine, args.repeat)
                progress("the point-lookup sweep")
                swept = point_lookup_sweep(engine, sidecar, warehouse, sweep, args.repeat)
                load_queries_end = os.getloadavg()
                explained = explain_analyze(engine, queries, [n for n in args.explain.split(",") if n])
                info = machine(engine)
            getrows: dict[str, Any] = {}
            if args.passes > 0:
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
            "command": " ".join(sys.argv),
            "table": layout | {"build_seconds": round(build_seconds, 1)},
            "trino_startup_s": round(startup, 1),
            "dynamic_filtering_wait_timeout": args.df_wait,
            "repeat": args.repeat,
            "queries": timed,
            "targets": targets(timed),
            "trino_floor": floor,
            "sweep": swept,
            "explain_analyze": explained,
            "getrows": getrows,
            "total_s": round(time.perf_counter() - began, 1),
        }
        write_results(args.out, result, print_summary)
        progress(f"wrote {args.out}")


if __name__ == "__main__":
    main()
