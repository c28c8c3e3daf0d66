"""TPC-H (22 queries) and TPC-DS (99 queries) through Trino 476, the `lakeprune` catalog (the native
connector) and the `hive` catalog side by side over the very same Parquet files. Not a test.

1. A sidecar serving the suites' directories over gRPC, in processes of its own (a supervisor of
   `--workers` workers, as `lakeprune serve` runs), and a local Trino 476 with the
   native `lakeprune` catalog and a `hive` catalog (file metastore in a temporary directory) over
   the same directories; both wait the same `--df-wait` for a join's dynamic filter.
2. The data, once per suite and scale (`--scale tiny|sf1`), cached in
   ~/.cache/lakeprune/tpc/<suite>-<scale>: written by that Trino from its `tpch` / `tpcds`
   connectors (TPC-H's money columns as decimals, as its specification has them) through its Hive
   connector as Parquet, each table directory then adopted in place as
   a lakeprune table with column stats and a secondary index on one foreign key, by Spark in a
   child process (see `tests/e2e/tpc_lake.py`). A re-run skips both steps and registers the
   directories as Hive tables, analyzed (as the CTAS that wrote them had left them).
3. Every query once on both catalogs (the warm-up), answers compared (`tests/e2e/tpc_queries.py`:
   in order under an ORDER BY, decimals exact, doubles to 1e-9; a query whose answers differ is
   run once more, and kept with `first_verdict` if they then agree), then `--repeat` timed runs
   alternating the catalogs and which goes first: per query and catalog the median client wall
   time, Trino's splits and input rows (its query stats), its analysis and planning time (the
   query's `/v1/query` info: the fixed cost a catalog adds before any split runs), for the native
   catalog the sidecar's files considered / kept, prune time and GetTable time; the ratio
   lakeprune / Hive and its geometric mean over the queries both answered equally. Machine load
   (1/5/15-minute averages) at the start, before and after the timing.

    .venv/bin/python bench/tpc.py [--suite tpch,tpcds] [--scale sf1] [--repeat 3] [--df-wait 1s] [--workers 2]
        [--queries q01,q18]

Writes `bench/results/tpc_<suite>_<scale>.json` per suite and prints a summary; progress goes to
stderr."""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import statistics
import sys
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# The repository root: the end-to-end helpers (`tests.e2e`) make the lakes and start Trino.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from support import progress
from trino_vs_hive_queries import run_summary

from pruner.engines.native_catalog import duration_millis
from tests.e2e.engines import USER, Engine
from tests.e2e.native import prune_counters
from tests.e2e.tpc_lake import SCALES, SUITES, Lake, Served, adopt_in_child, default_root, side_by_side
from tests.e2e.tpc_queries import ADAPTED, EQUAL, TIES, TpcQuery, check_answers, run, suite_queries

NATIVE, HIVE = "lakeprune", "hive"
CATALOGS = (NATIVE, HIVE)


def time_suite(
    engine: Engine, served: Served, suite: str, queries: list[TpcQuery], repeat: int
) -> dict[str, Any]:
    """`repeat` timed runs of each query, alternating the catalogs, summarised per catalog."""
    timed: dict[str, Any] = {}
    for query in queries:
        samples: dict[str, list[dict[str, Any]]] = {c: [] for c in CATALOGS}
        for attempt in range(repeat):
            # alternate, so that background load hits both alike, and which goes first too (a run
            # may leave the machine's caches warmer for the one after it)
            for catalog in CATALOGS if attempt % 2 == 0 else CATALOGS[::-1]:
                before, seconds_before = prune_counters(served.sample), _sidecar_seconds(served)
                outcome = run(engine, catalog, suite, query.sql)
                after, seconds_after = prune_counters(served.sample), _sidecar_seconds(served)
                if outcome.error:
                    raise SystemExit(f"{suite} {query.name} failed on {catalog}: {outcome.error}")
                samples[catalog].append(
                    {"wall": outcome.wall, "rows": len(outcome.rows), "stats": outcome.stats}
                    | {f"files_{k}": after[k] - before[k] for k in after}
                    | {f"{k}_s": seconds_after[k] - seconds_before[k] for k in seconds_after}
                    | phases(engine, outcome.stats["queryId"])
                )
        timed[query.name] = {c: _summary(c, s) for c, s in samples.items()}
        timed[query.name]["ratio"] = round(
            timed[query.name][NATIVE]["median_s"] / timed[query.name][HIVE]["median_s"], 3
        )
        progress(
            f"{suite} {query.name}: lakeprune {timed[query.name][NATIVE]['median_s'] * 1000:.0f} ms, "
            f"hive {timed[query.name][HIVE]['median_s'] * 1000:.0f} ms ({timed[query.name]['ratio']}x)"
        )
    return timed


def _sidecar_seconds(served: Served) -> dict[str, float]:
    """The sidecar's handler seconds so far: of its prunes, and of its GetTable calls (one per table
    of a query, before Trino can plan it)."""
    return {
        key: served.sample("lakeprune_request_seconds_sum", api="grpc", method=method, status="ok")
        for key, method in (("prune", "PruneStream"), ("get_table", "GetTable"))
    }


def phases(engine: Engine, query_id: str) -> dict[str, float]:
    """Trino's analysis and planning time of a finished query, in ms (its `/v1/query` info)."""
    request = urllib.request.Request(
        f"http://{engine.host}:{engine.port}/v1/query/{query_id}", headers={"X-Trino-User": USER}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        stats = json.load(response)["queryStats"]
    return {f"{phase}_ms": duration_millis(stats[f"{phase}Time"]) for phase in ("analysis", "planning")}


def _prunes_per_worker(served: Served) -> dict[str, float]:
    """PruneStream calls each worker served (empty for a single sidecar process)."""
    counts = served.per_worker("lakeprune_requests_total", api="grpc", method="PruneStream")
    return {f"worker pid {pid}": count for pid, count in sorted(counts.items())}


def _summary(catalog: str, samples: list[dict[str, Any]]) -> dict[str, Any]:
    summary = run_summary(samples)
    for phase in ("analysis", "planning"):
        summary[f"trino_{phase}_ms"] = round(statistics.median(s[f"{phase}_ms"] for s in samples), 2)
    if catalog == NATIVE:
        summary["sidecar_files_in"] = statistics.median(s["files_in"] for s in samples)
        summary["sidecar_files_out"] = statistics.median(s["files_out"] for s in samples)
        summary["sidecar_prune_s"] = round(statistics.median(s["prune_s"] for s in samples), 4)
        summary["sidecar_get_table_s"] = round(statistics.median(s["get_table_s"] for s in samples), 4)
    return summary


# The joins whose plans `estimates` compares (EXPLAIN of the native catalog against Hive's).
EXPLAINED = {"tpch": ("q03", "q18"), "tpcds": ("q03", "q19")}
ROW_ESTIMATE = re.compile(r"Estimates: \{rows: ([0-9,?]+)")


def estimates(engine: Engine, lake: Lake, queries: list[TpcQuery]) -> dict[str, Any]:
    """What each catalog tells Trino's planner: per table `SHOW STATS` (row count, per column the
    distinct-value and data-size estimates) and, for the joins of `EXPLAINED`, every plan node's
    row estimate in plan order, side by side."""
    tables: dict[str, Any] = {}
    for table in lake.tables:
        shown = {c: engine.query(f"SHOW STATS FOR {c}.{lake.suite}.{table}") for c in CATALOGS}
        tables[table] = {
            c: {
                "rows": next((r[4] for r in rows if r[0] is None), None),
                "columns": {r[0]: {"ndv": r[2], "data_size": r[1]} for r in rows if r[0] is not None},
            }
            for c, rows in shown.items()
        }
    plans = {}
    for query in queries:
        if query.name in EXPLAINED.get(lake.suite, ()):
            plans[query.name] = {
                c: ROW_ESTIMATE.findall(_explain(engine, c, lake.suite, query.sql)) for c in CATALOGS
            }
    return {"show_stats": tables, "explain_row_estimates": plans}


def _explain(engine: Engine, catalog: str, schema: str, sql: str) -> str:
    outcome = run(engine, catalog, schema, f"EXPLAIN {sql}")
    if outcome.error:
        raise SystemExit(f"EXPLAIN failed on {catalog}: {outcome.error}")
    return "\n".join(str(row[0]) for row in outcome.rows)


def ndv_ratios(shown: dict[str, Any]) -> list[float]:
    """lakeprune's distinct-value estimate over Hive's, for every column both estimate."""
    ratios = []
    for table in shown.values():
        for column, hive in table[HIVE]["columns"].items():
            native = table[NATIVE]["columns"].get(column, {}).get("ndv")
            if native and hive["ndv"]:
                ratios.append(native / hive["ndv"])
    return ratios


def geometric_mean(ratios: list[float]) -> float | None:
    return round(math.exp(statistics.fmean(math.log(r) for r in ratios)), 3) if ratios else None


def recheck(engine: Engine, suite: str, queries: list[TpcQuery], answers: dict[str, Any]) -> dict[str, Any]:
    """Each query whose answers differed run once more on both catalogs; one that then agrees is
    kept with `first_verdict` saying it did not (a query over doubles whose sums depend on the
    order the rows arrive in: TPC-H q15 was one until the lake's money columns became decimals). A
    pruning error would drop the same files every time and fail both runs."""
    again = [q for q in queries if answers[q.name]["verdict"] not in (EQUAL, TIES)]
    if not again:
        return answers
    second = check_answers(engine, suite, again, CATALOGS)
    for query in again:
        if second[query.name]["verdict"] in (EQUAL, TIES):
            progress(f"{suite} {query.name}: answers differed, then agreed on a second run")
            answers[query.name] = second[query.name] | {"first_verdict": answers[query.name]["verdict"]}
    return answers


def suite_result(
    lake: Lake,
    answers: dict[str, Any],
    timed: dict[str, Any],
    planner: dict[str, Any],
    context: dict[str, Any],
) -> dict[str, Any]:
    agreed = [n for n, a in answers.items() if a["verdict"] in (EQUAL, TIES)]
    ratios = [timed[n]["ratio"] for n in agreed if n in timed]
    return context | {
        "suite": lake.suite,
        "scale": lake.scale,
        "tables": {t: info["rows"] for t, info in lake.tables.items()},
        "adapted_by_hand": {k.split()[1]: v for k, v in ADAPTED.items() if k.startswith(f"{lake.suite} ")},
        "queries_run": len(answers),
        "answers_equal": len(agreed),
        "answers_equal_on_second_run": sorted(n for n, a in answers.items() if "first_verdict" in a),
        "answers": answers,
        "timing": timed,
        "geometric_mean_ratio": geometric_mean(ratios),
        "queries_above_1_1x": sorted(n for n in agreed if n in timed and timed[n]["ratio"] > 1.1),
        "sidecar_prune_s": round(sum(t[NATIVE]["sidecar_prune_s"] for t in timed.values()), 3),
        "lakeprune_total_s": round(sum(t[NATIVE]["median_s"] for t in timed.values()), 3),
        "sidecar_get_table_s": round(sum(t[NATIVE]["sidecar_get_table_s"] for t in timed.values()), 3),
        "analysis_planning_s": {
            c: round(
                sum(t[c]["trino_analysis_ms"] + t[c]["trino_planning_ms"] for t in timed.values()) / 1000, 3
            )
            for c in CATALOGS
        },
        "planner_estimates": planner,
    }


def print_summary(result: dict[str, Any]) -> None:
    print(
        f"\n{result['suite']} {result['scale']}: {result['answers_equal']} of {result['queries_run']} "
        f"answers equal; load {result['load_average_timing_start']} -> {result['load_average_timing_end']}"
    )
    for name, answer in result["answers"].items():
        if answer["verdict"] != EQUAL:
            print(f"  {name}: {answer['verdict']} {answer.get('errors', '')}")
    if result["timing"]:
        print(f"{'query':<7}{'lakeprune s':>12}{'hive s':>9}{'x Hive':>8}{'splits':>14}{'input rows':>24}")
        for name, t in result["timing"].items():
            n, h = t[NATIVE], t[HIVE]
            print(
                f"{name:<7}{n['median_s']:>12.3f}{h['median_s']:>9.3f}{t['ratio']:>8.2f}"
                f"{n['trino_total_splits']:>7.0f}/{h['trino_total_splits']:<6.0f}"
                f"{n['trino_processed_rows']:>12,.0f}/{h['trino_processed_rows']:<11,.0f}"
            )
        print(
            f"geometric mean {result['geometric_mean_ratio']}x Hive; "
            f"above 1.1x: {', '.join(result['queries_above_1_1x']) or 'none'}; sidecar prune time "
            f"{result['sidecar_prune_s']:.2f} s of {result['lakeprune_total_s']:.2f} s (medians)"
        )
        before_splits = result["analysis_planning_s"]
        print(
            f"Trino's analysis + planning, summed medians: lakeprune {before_splits[NATIVE]:.2f} s, "
            f"hive {before_splits[HIVE]:.2f} s; the sidecar's GetTable {result['sidecar_get_table_s']:.2f} s"
        )
    ratios = ndv_ratios(result["planner_estimates"]["show_stats"])
    if ratios:
        print(
            f"distinct values, lakeprune / Hive over {len(ratios)} columns: geometric mean "
            f"{geometric_mean(ratios)}, from {min(ratios):.2f} to {max(ratios):.2f}"
        )
    for name, plans in result["planner_estimates"]["explain_row_estimates"].items():
        print(f"EXPLAIN {name} row estimates: lakeprune {plans[NATIVE]}\n{'':>23}hive {plans[HIVE]}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--suite", default="tpch,tpcds", help="comma-separated: tpch, tpcds")
    parser.add_argument("--scale", default="sf1", choices=SCALES)
    parser.add_argument(
        "--repeat", type=int, default=3, help="timed runs per query and catalog (0: answers only)"
    )
    parser.add_argument(
        "--df-wait", default="1s", help="dynamic filtering wait timeout, native and Hive alike"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="sidecar planning processes, a supervisor's workers (one: one process apart from the "
        "bench's, as `lakeprune serve` runs); above 1, the workers' own gRPC ports the "
        "catalog lists (and the result counts each worker's prunes)",
    )
    parser.add_argument("--queries", default="", help="only these queries, comma-separated (q01, q18, ...)")
    parser.add_argument("--out-dir", type=Path, default=Path(__file__).parent / "results")
    args = parser.parse_args()
    suites = [s for s in args.suite.split(",") if s]
    if not suites or any(s not in SUITES for s in suites):
        parser.error(f"--suite takes a comma-separated subset of {', '.join(SUITES)}")
    if args.workers < 1:
        parser.error(f"--workers takes a positive number of planning processes, got {args.workers}")
    only = {q for q in args.queries.split(",") if q}
    load_start = os.getloadavg()
    cache = default_root("*", args.scale).parent
    progress(
        f"starting the sidecar and Trino 476; {', '.join(suites)} at scale {args.scale} cached in {cache}"
    )
    begin = time.perf_counter()
    wanted = [(s, args.scale, default_root(s, args.scale)) for s in suites]
    with side_by_side(
        wanted, adopt_in_child, args.df_wait, analyze_hive=True, workers=args.workers, in_process=False
    ) as (
        engine,
        served,
        lakes,
    ):
        prepare_s = time.perf_counter() - begin
        progress(f"data ready ({prepare_s:.0f} s)")
        trino = engine.query("SELECT node_version FROM system.runtime.nodes")[0][0]
        for lake in lakes:
            queries = [q for q in suite_queries(lake.suite) if not only or q.name in only]
            progress(f"{lake.suite}: {len(queries)} queries on both catalogs (answers, warm-up)")
            answers = recheck(
                engine, lake.suite, queries, check_answers(engine, lake.suite, queries, CATALOGS)
            )
            agreed = [q for q in queries if answers[q.name]["verdict"] in (EQUAL, TIES)]
            progress(f"{lake.suite}: {len(agreed)} of {len(queries)} answers equal; timing them")
            load_timing_start = os.getloadavg()
            per_worker_before = _prunes_per_worker(served)
            timed = time_suite(engine, served, lake.suite, agreed, args.repeat) if args.repeat else {}
            per_worker = {w: n - per_worker_before.get(w, 0.0) for w, n in _prunes_per_worker(served).items()}
            planner = estimates(engine, lake, queries)
            context = {
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "command": " ".join(sys.argv),
                "machine": {
                    "platform": f"{platform.system()} {platform.machine()}",
                    "cores": os.cpu_count(),
                    "trino": trino,
                },
                "load_average_at_start": [round(x, 2) for x in load_start],
                "load_average_timing_start": [round(x, 2) for x in load_timing_start],
                "load_average_timing_end": [round(x, 2) for x in os.getloadavg()],
                "prepare_s": round(prepare_s, 1),
                "dynamic_filtering_wait_timeout": args.df_wait,
                "repeat": args.repeat,
                "sidecar_workers": args.workers,
                "timed_prunes_per_worker": per_worker,
            }
            result = suite_result(lake, answers, timed, planner, context)
            out = args.out_dir / f"tpc_{lake.suite}_{lake.scale}.json"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(result, indent=2) + "\n")
            print_summary(result)
            progress(f"wrote {out}")


if __name__ == "__main__":
    main()
