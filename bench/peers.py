"""lakeprune side by side with what users would pick instead (issue 39): the same data written by
lakeprune, by Trino 476's Hive, Iceberg and Delta Lake writers and by Apache Hudi 1.2, the same
query shapes through Trino on each (and through Spark on lakeprune and Hudi), answers compared
before any time is taken; then the write costs of lakeprune and Hudi. Not a test.

1. Spark (`local[2]`, UTC, in a child process so that its JVM is gone before anything is timed)
   writes lakeprune's `sales` (record key `sale_id`, partitioned by `region`, `ts` clustered,
   `customer_id` spread over every file) and `customers`, with the record index, column and
   partition stats, a bloom filter and a secondary index on `customer_id`, a functional index on
   `hour(ts)` and a trigram text index on `note` (`peers_data.py`); the insert is timed against a
   plain Parquet write of the same rows in the same Spark.
2. Hudi 1.2 on Spark 3.5 (a venv the bench makes under ~/.cache/lakeprune/peers, `peers_hudi.py`)
   bulk-inserts the same rows (lakeprune's data files) with its metadata table, record index,
   column and partition stats, then builds a secondary index, a bloom filter and an `hour(ts)`
   expression index (`peers_hudi_job.py`).
3. An in-process sidecar and a local Trino 476 with the native `lakeprune` catalog, `hive`,
   `iceberg` and `delta` catalogs (file metastores, Trino's local file system) whose writers copy
   the tables from the native catalog (`peers_trino.py`), and a `hudi` catalog over Hudi's table
   (registered as `peers_trino.register_hudi` says). Every query shape and a whole-table check on
   every catalog must give equal answers (else the bench stops); then one warm-up per query and
   catalog and `--repeat` timed runs alternating the catalogs: median client wall time, Trino's
   splits and rows read (its query stats), for lakeprune the files its sidecar's prunes kept.
4. Trino stopped, the shapes through Spark (`peers_spark.py`): `format("lakeprune")` in the
   project's Spark and Hudi's data source with its indexes in Spark 3.5; answers equal, median
   time and files read (Spark's scan metric).
5. A 1% upsert (every 100th key, so every file) on lakeprune and on Hudi, with every index
   maintained; each write against the plain Parquet write in its own Spark.

    PYTHONPATH=. nice -n 19 .venv/bin/python bench/peers.py [--small] [--rows 20000000] [--files 2000]
        [--repeat 5] [--df-wait 1s] [--no-hudi] [--hudi-table-version 8] [--no-spark] [--no-writes]
        [--queries NAMES] [--explain NAMES] [--keep]

`--small` is 200,000 rows in ~40 files with 3 timed runs. `--queries` picks Trino shapes by name;
a point of the scale sweep is, e.g., `--rows 2000000 --files 10000 --queries "point lookup,customer
lookup" --no-writes --no-spark`. Writes `bench/results/peers.json`
(`peers_small.json` with `--small`) and prints the tables; progress goes to stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyspark

# The repository root: the end-to-end helpers (`tests.e2e`) start Trino and read the counters.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from peers_data import DIMENSION, FACT, SCHEMA, build_tables, upsert_share
from peers_hudi import ensure_environment, upsert_hudi, write_hudi
from peers_spark import compare, hudi_spark, lakeprune_spark, spark_queries
from peers_trino import (
    CHECK,
    HUDI,
    NATIVE,
    PEERS,
    benchmark_queries,
    copy_tables,
    hudi_catalogs,
    peer_catalogs,
    register_hudi,
)
from support import (
    build_in_child,
    progress,
    scratch_directory,
    serving_sidecar,
    table_bench_parser,
    write_results,
)
from trino_vs_hive import machine
from trino_vs_hive_queries import Query, check_agreement, explain_analyze, time_queries
from trino_vs_hive_table import check_layout

from pruner.engines.native_catalog import NativeCatalog
from pruner.engines.plugin import locate_plugin
from pruner.engines.spec import TRINO
from tests.e2e.engines import local_engine

SMALL = {"rows": 200_000, "files": 40, "repeat": 3}
RESULTS = Path(__file__).parent / "results"


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def ratios(queries: dict[str, Any], catalogs: tuple[str, ...]) -> dict[str, Any]:
    """Per query: lakeprune's median over each peer's, and the fastest system."""
    out: dict[str, Any] = {}
    for name, q in queries.items():
        mine = q[NATIVE]["median_s"]
        out[name] = {
            "lakeprune_over": {c: round(mine / q[c]["median_s"], 3) for c in catalogs if c != NATIVE},
            "fastest": min(catalogs, key=lambda c: q[c]["median_s"]),
        }
    return out


def print_summary(result: dict[str, Any]) -> None:
    t, m = result["table"], result["machine"]
    print(
        f"\n{t['rows']:,} rows; lakeprune {t['files']} files; "
        + ", ".join(f"{c} {w['files']} files" for c, w in result["peer_tables"].items())
        + f"; Trino {m['trino']}, {m['cores']} cores, load {m['load_average_queries_start']} -> "
        f"{m['load_average_queries_end']}"
    )
    catalogs = result["catalogs"]
    print(
        f"{'query':<22}{'system':<11}{'median s':>9}{'lp / it':>9}{'splits':>8}"
        f"{'rows read':>11}{'kept/of':>10}"
    )
    for name, q in result["queries"].items():
        for c in catalogs:
            s = q[c]
            ratio = q[NATIVE]["median_s"] / s["median_s"]
            kept = (
                f"{s['sidecar_prune_files_out']:.0f}/{s['sidecar_prune_files_in']:.0f}" if c == NATIVE else ""
            )
            print(
                f"{name:<22}{c:<11}{s['median_s']:>9.3f}{ratio:>9.2f}{s['trino_total_splits']:>8.0f}"
                f"{s['trino_processed_rows']:>11,.0f}{kept:>10}"
            )
    print_spark(result["spark"])
    if result["writes"]:
        print_writes(result["writes"])


def chosen_queries(queries: list[Query], names: str) -> list[Query]:
    """The shapes `names` (',' between them) asks for, in the benchmark's order; all when empty."""
    wanted = {n.strip() for n in names.split(",") if n.strip()}
    unknown = wanted - {q.name for q in queries}
    if unknown:
        known = ", ".join(q.name for q in queries)
        raise SystemExit(f"peers.py: unknown --queries {', '.join(sorted(unknown))} (shapes: {known})")
    return [q for q in queries if not wanted or q.name in wanted]


def hudi_table(workdir: Path, warehouse: Path, files: int, version: int) -> dict[str, Any]:
    """Hudi's copy of the tables under `workdir/hudi` (its environment made first if need be), or
    why there is none."""
    try:
        return write_hudi(ensure_environment(), warehouse, workdir / "hudi", files, version)
    except (OSError, RuntimeError, subprocess.CalledProcessError) as error:
        progress(f"Hudi left out: {str(error)[-2000:]}")
        return {"error": str(error)[-4000:]}


def spark_side_by_side(workdir: Path, warehouse: Path, rows: int, files: int, repeat: int) -> dict[str, Any]:
    """The Spark queries on lakeprune (the project's Spark) and on Hudi (Spark 3.5), compared."""
    queries = spark_queries(rows, files)
    lakeprune = lakeprune_spark(warehouse, queries, repeat, workdir)
    hudi = hudi_spark(ensure_environment(), workdir / "hudi", queries, repeat)
    return compare(lakeprune, hudi)


def print_writes(writes: dict[str, Any]) -> None:
    print(
        f"\n{'writes':<12}{'Spark':>8}{'plain s':>9}{'insert s':>10}{'index s':>9}{'x plain':>9}"
        f"{'1% upsert s':>13}{'x plain':>9}"
    )
    for system, w in writes.items():
        print(
            f"{system:<12}{w['spark']:>8}{w['plain_parquet_s']:>9.1f}{w['insert_s']:>10.1f}"
            f"{w.get('index_build_s', 0):>9.1f}{w['insert_over_plain']:>9.2f}{w['upsert_s']:>13.1f}"
            f"{w['upsert_over_plain']:>9.2f}"
        )


def print_spark(spark: dict[str, Any]) -> None:
    if "queries" not in spark:
        print(f"\nSpark queries: skipped ({spark.get('skipped')})")
        return
    print(f"\nSpark: lakeprune on Spark {spark['spark_lakeprune']}, Hudi on Spark {spark['spark_hudi']}")
    print(f"{'query':<22}{'lakeprune s':>12}{'files':>7}{'hudi s':>9}{'files':>7}{'lp / hudi':>11}")
    for name, q in spark["queries"].items():
        mine, theirs = q["lakeprune"], q["hudi"]
        if "error" in mine or "error" in theirs:
            failed = "lakeprune" if "error" in mine else "hudi"
            print(f"{name:<22}{failed} failed: {(mine.get('error') or theirs.get('error'))[:150]}")
            continue
        print(
            f"{name:<22}{mine['median_s']:>12.3f}{mine['files_read']:>7.0f}{theirs['median_s']:>9.3f}"
            f"{theirs['files_read']:>7.0f}{q['lakeprune_over_hudi']:>11.2f}"
        )


def write_costs(workdir: Path, location: Path, hudi: dict[str, Any]) -> dict[str, Any]:
    """The insert (timed when the tables were built) and a 1% upsert (now, after every query), for
    lakeprune and Hudi, each in its own Spark and against a plain Parquet write of the same rows
    there."""
    timings = workdir / "lakeprune_writes.json"
    lakeprune = json.loads(timings.read_text())
    progress("lakeprune: 1% upsert")
    build_in_child(upsert_share, str(timings), str(location))
    lakeprune |= json.loads(timings.read_text()) | {"spark": pyspark.__version__}
    out: dict[str, Any] = {"lakeprune": lakeprune}
    if "files" in hudi:
        out["hudi"] = {
            "spark": hudi["spark"],
            "plain_parquet_s": hudi["plain_parquet_s"],
            "insert_s": hudi["seconds"]["bulk_insert"],
            "index_build_s": sum(v for k, v in hudi["seconds"].items() if k != "bulk_insert"),
        } | upsert_hudi(ensure_environment(), workdir / "hudi", hudi["table_version"])
    for system in out.values():
        plain = system["plain_parquet_s"]
        system["insert_over_plain"] = round((system["insert_s"] + system.get("index_build_s", 0)) / plain, 2)
        system["upsert_over_plain"] = round(system["upsert_s"] / plain, 2)
        progress(f"writes: {system}")
    return out


def main() -> None:
    parser = table_bench_parser(
        __doc__,
        rows=20_000_000,
        files=2000,
        repeat=5,
        repeat_help="timed runs per query and catalog",
        out=RESULTS / "peers.json",
    )
    parser.add_argument("--small", action="store_true", help="200,000 rows in ~40 files, 3 timed runs")
    parser.add_argument("--df-wait", default="1s", help="dynamic filtering wait timeout, every catalog")
    parser.add_argument("--no-hudi", action="store_true", help="leave Hudi (and its Spark 3.5 venv) out")
    parser.add_argument("--no-spark", action="store_true", help="no Spark queries (lakeprune vs Hudi)")
    parser.add_argument(
        "--hudi-table-version",
        type=int,
        choices=(8, 9),
        default=8,
        help="8 (Hudi 1.0's, which Trino 476 reads) or 9 (Hudi 1.2's default: Spark only)",
    )
    parser.add_argument("--no-writes", action="store_true", help="no upserts (and no write table)")
    parser.add_argument(
        "--queries",
        default="",
        help="the Trino shapes to run (names, ','; default all): the scale sweep's are "
        '"point lookup,customer lookup"',
    )
    parser.add_argument(
        "--explain",
        default="",
        help="queries to EXPLAIN ANALYZE on every catalog after the timing (names, ',')",
    )
    if parser.parse_known_args()[0].small:  # --small's sizes, unless given explicitly
        parser.set_defaults(**SMALL, out=RESULTS / "peers_small.json")
    args = parser.parse_args()
    # A mistyped shape fails now, not after the tables are built.
    chosen_queries(benchmark_queries(args.rows, args.files), args.queries)
    load_start = load()
    began = time.perf_counter()
    with scratch_directory("lakeprune-peers-", args.keep) as workdir:
        warehouse = workdir / "warehouse"
        plugin = locate_plugin(TRINO)
        progress(f"lakeprune: {args.rows:,} rows in ~{args.files} files under {warehouse}")
        build_seconds = build_in_child(
            build_tables, str(warehouse), args.rows, args.files, str(workdir / "lakeprune_writes.json")
        )
        layout = check_layout(warehouse / FACT)
        progress(f"built in {build_seconds:.0f} s: {layout}")
        extra = peer_catalogs(workdir, args.df_wait, layout["table_bytes"] // max(1, layout["files"]))
        hudi: dict[str, Any] = {"skipped": "--no-hudi"}
        if not args.no_hudi:
            hudi = hudi_table(workdir, warehouse, layout["files"], args.hudi_table_version)
        if "files" in hudi:
            extra |= hudi_catalogs(workdir)
        catalogs: tuple[str, ...] = (NATIVE, *PEERS)
        with serving_sidecar(SCHEMA, warehouse) as sidecar:
            grpc = NativeCatalog(
                f"127.0.0.1:{sidecar.grpc_port}", dynamic_filtering_wait_timeout=args.df_wait
            )
            progress("starting Trino 476")
            with local_engine(
                "trino", f"127.0.0.1:{sidecar.thrift_port}", extra, grpc=grpc, plugin=plugin
            ) as engine:
                progress(f"Trino answers on port {engine.port}; the peers copy the tables")
                peer_tables = copy_tables(engine, layout["rows"], layout["files"])
                if "files" in hudi:
                    hudi["trino_error"] = register_hudi(engine, workdir / "hudi", workdir)
                    if hudi["trino_error"] is None:
                        catalogs = (*catalogs, HUDI)
                    else:
                        progress(f"Hudi through Trino: not registered ({hudi['trino_error']})")
                queries = chosen_queries(benchmark_queries(layout["rows"], args.files), args.queries)
                check_agreement(
                    engine,
                    [*queries, CHECK],
                    layout,
                    FACT,
                    checks=False,
                    catalogs=catalogs,
                    dimension=DIMENSION,
                )
                progress(f"{', '.join(catalogs)} agree on every query; timing")
                load_queries = load()
                timed = time_queries(
                    engine, sidecar, queries, args.repeat, FACT, catalogs=catalogs, dimension=DIMENSION
                )
                load_queries_end = load()
                names = [n for n in args.explain.split(",") if n]
                explained = explain_analyze(engine, queries, names, catalogs, FACT, DIMENSION)
                info = machine(engine)
        spark: dict[str, Any] = {"skipped": "--no-spark" if args.no_spark else "no Hudi table"}
        if "files" in hudi and not args.no_spark:
            spark = spark_side_by_side(workdir, warehouse, layout["rows"], args.files, args.repeat)
        writes = {} if args.no_writes else write_costs(workdir, warehouse / FACT, hudi)
        result = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": info
            | {
                # 1/5/15-minute load averages: other jobs may share the 2 cores.
                "load_average_at_start": load_start,
                "load_average_queries_start": load_queries,
                "load_average_queries_end": load_queries_end,
                "load_average_at_end": load(),
            },
            "command": " ".join(sys.argv),
            "catalogs": catalogs,
            "table": layout | {"build_seconds": round(build_seconds, 1)},
            "peer_tables": peer_tables,
            "hudi": hudi,
            "dynamic_filtering_wait_timeout": args.df_wait,
            "repeat": args.repeat,
            "queries": timed,
            "ratios": ratios(timed, catalogs),
            "explain_analyze": explained,
            "spark": spark,
            "writes": writes,
            "total_s": round(time.perf_counter() - began, 1),
        }
        write_results(args.out, result, print_summary)
        progress(f"wrote {args.out}")


if __name__ == "__main__":
    main()
