"""The index advisor on the benchmark's own workload (issue 40): the peers benchmark's `sales` and
`customers` (`peers_data.py`) written with no index but the built-in ones, the peers' Trino query
shapes (`peers_trino.benchmark_queries`: point lookup, customer lookup, a 0.1% `ts` range,
`hour(ts) = 3`, an infix LIKE, a star join, a full scan) run `--repeat` times through Trino 476's
native catalog over an in-process sidecar that logs them; then `lakeprune advise`'s ranking
(`pruner.advisor.advise`) over that log, its statements applied (Spark, in a child process), and the
same workload once more: per query shape, the files of `sales` its prunes kept before and after, from
the sidecar's workload log, and the answers, which must not change. Not a test.

    PYTHONPATH=. nice -n 19 .venv/bin/python bench/advisor.py [--rows 200000] [--files 40]
        [--repeat 2] [--prune-deadline 30] [--keep]

Writes `bench/results/advisor.json` and prints the table; progress goes to stderr."""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from peers_data import DIMENSION, FACT, SCHEMA, build_fact, customers
from peers_trino import NATIVE, benchmark_queries
from support import (
    build_in_child,
    progress,
    scratch_directory,
    serving_sidecar,
    table_bench_parser,
    write_results,
)
from trino_vs_hive_queries import qualified, run
from trino_vs_hive_table import build_dimension, check_layout

from pruner.advisor.advise import advise, statements
from pruner.advisor.workload import WorkloadLog
from pruner.engines.native_catalog import NativeCatalog
from pruner.engines.plugin import locate_plugin
from pruner.engines.spec import TRINO
from pruner.table.table import LakeTable
from tests.e2e.engines import Engine, local_engine
from tests.e2e.queries import normalized

RESULTS = Path(__file__).resolve().parent / "results"


def build_unindexed(warehouse: str, rows: int, files: int) -> None:
    """`sales` with no index but the built-in ones, and `customers` (in a child process)."""
    from builder.session import spark_session

    spark = spark_session(master="local[2]")
    build_fact(spark, f"{warehouse}/{FACT}", rows, files, indexes=())
    build_dimension(spark, f"{warehouse}/{DIMENSION}", customers(rows))
    spark.stop()


def apply_statements(location: str, to_run: list[str]) -> None:
    """Run the advisor's statements on the table at `location` (in a child process)."""
    from builder.index_build import execute

    for statement in to_run:
        progress(f"  {statement}: {execute(location, statement).message}")


def run_workload(
    engine: Engine, queries: list[Any], repeat: int, log: WorkloadLog, uri: str
) -> dict[str, Any]:
    """Each query `repeat` times through the native catalog: its answer, and per run the files of
    `sales` its prunes kept (the log's new entries for the table)."""
    out: dict[str, Any] = {}
    for query in queries:
        sql = qualified(query.sql, NATIVE, FACT, DIMENSION)
        kept: list[int] = []
        total = 0
        rows: list[tuple[Any, ...]] = []
        for _ in range(repeat):
            before = len(log.entries(uri)[0])
            answer, _seconds, _stats = run(engine, sql)
            rows = normalized(answer, exact_decimals=True)
            entries = log.entries(uri)[0][before:]
            kept.append(sum(e.files_kept for e in entries))
            total = max((e.files_total for e in entries), default=total)
        out[query.name] = {"answer": [list(r) for r in rows], "files_kept": kept, "files_total": total}
    return out


def main() -> None:
    parser = table_bench_parser(
        __doc__,
        rows=200_000,
        files=40,
        repeat=2,
        repeat_help="runs of the workload's queries",
        out=RESULTS / "advisor.json",
    )
    parser.add_argument(
        "--prune-deadline",
        type=float,
        default=30.0,
        help="seconds one prune may plan (the sidecar's default is 2: this bench counts files, not time)",
    )
    args = parser.parse_args()
    began = time.perf_counter()
    with scratch_directory("lakeprune-advisor-", args.keep) as workdir:
        warehouse = workdir / "warehouse"
        location = str(warehouse / FACT)
        progress(f"sales: {args.rows:,} rows in ~{args.files} files, no index but the record index")
        build_in_child(build_unindexed, str(warehouse), args.rows, args.files)
        layout = check_layout(warehouse / FACT)
        log = WorkloadLog(workdir / "workload")
        uri = LakeTable.open(location).storage.uri
        queries = benchmark_queries(layout["rows"], args.files)
        with serving_sidecar(SCHEMA, warehouse, workdir / "workload", args.prune_deadline) as sidecar:
            grpc = NativeCatalog(f"127.0.0.1:{sidecar.grpc_port}")
            with local_engine(
                "trino", f"127.0.0.1:{sidecar.thrift_port}", {}, grpc=grpc, plugin=locate_plugin(TRINO)
            ) as engine:
                progress("the workload, before")
                before = run_workload(engine, queries, args.repeat, log, uri)
                advice = advise(LakeTable.open(location), log.entries(uri)[0])
                to_run = statements(advice.recommendations, len(advice.recommendations))
                progress(f"advice: {len(to_run)} statement(s); applying them")
                apply_seconds = build_in_child(apply_statements, location, to_run)
                progress("the workload, after")
                after = run_workload(engine, queries, args.repeat, log, uri)
        changed = [name for name in before if before[name]["answer"] != after[name]["answer"]]
        if changed:
            raise SystemExit(f"answers changed after the indexes were built: {', '.join(changed)}")
        result = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "rows": layout["rows"],
            "files": layout["files"],
            "repeat": args.repeat,
            "prune_deadline_seconds": args.prune_deadline,
            "fallbacks": sum(e.fallbacks for e in log.entries(uri)[0]),
            "advice": advice.to_json(),
            "apply_seconds": round(apply_seconds, 1),
            "queries": {
                name: {
                    "files_total": before[name]["files_total"],
                    "files_kept_before": before[name]["files_kept"],
                    "files_kept_after": after[name]["files_kept"],
                }
                for name in before
            },
            "seconds": round(time.perf_counter() - began, 1),
        }
    write_results(args.out, result, _summary)


def _summary(result: dict[str, Any]) -> None:
    print(
        f"{result['rows']:,} rows in {result['files']} files; advice applied in {result['apply_seconds']} s:"
    )
    for recommendation in result["advice"]["recommendations"]:
        print(f"  {recommendation['rank']}. {'; '.join(recommendation['statements'])}")
    print(f"{'query':<22} {'files':>6} {'kept before':>12} {'kept after':>11}")
    for name, counts in result["queries"].items():
        print(
            f"{name:<22} {counts['files_total']:>6} {counts['files_kept_before'][-1]:>12} "
            f"{counts['files_kept_after'][-1]:>11}"
        )


if __name__ == "__main__":
    main()
