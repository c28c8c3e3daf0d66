"""Text indexes (issue 37, RFC-51): what a trigram index on `msg` and a words index on `lower(msg)`
cost to build and store, how fast a prune with them is, and what they save Trino against its Hive
connector over the same files, side by side in one run. Not a test.

1. Data. Spark (`local[2]`, UTC, TIMESTAMP_MICROS, in a child process so that its JVM is gone before
   anything else is timed) generates a log table (`id bigint, ts timestamp, level string, msg
   string`; `--rows` rows in ~`--files` files of contiguous ids; request-log lines with a large
   vocabulary: paths with ids, hex session and trace ids, status codes, durations, host and user
   names; `OutOfMemoryError` in one row of each of ~0.5% of the files, `SIGSEGV` in one row), caches
   it and writes it three times, insert-only through `builder.LakepruneTable` (one commit, so Hive
   sees exactly the table's rows): `logs_plain` (no text index), `logs_grams` (`USING text (msg)`,
   trigrams) and `logs_words` (`USING text (lower(msg)) OPTIONS (tokenizer = 'words')`), each index
   created on the empty table so that the insert maintains it; each insert runs once, in that
   order, after an untimed small write that warms Spark up. Ground truth: the files and rows
   holding each rare term, by scanning every file.
2. Build cost and size: each insert's wall time and its ratio to the plain insert; each text index
   partition's bytes on disk against its table's data bytes (issue 37's goals: <= 15% for trigrams,
   <= 5% for words), each goal reported as met or not.
3. Prune latency in process: `prune(table, where)` for `msg LIKE '%<term>%'` (trigrams) and
   `lower(msg) LIKE '% <term> %'` (words: a fragment requires only the words it holds whole, so the
   spaces make the term a word; `text_match` reads only a column as written, and `regexp_like(...,
   '\\bterm\\b')` requires a fragment, not a word), after one warm-up, `--repeat` runs: p50 and p95
   ms, the `text_index` step's files in / out and the files that hold the term. Two ways: `cached`,
   the table looked up per prune in a sidecar's catalog with its index cache (as the sidecar
   serves a request), and `uncached`, `LakeTable.open(location)` per prune (the OS page cache
   warm). The same LIKE on `logs_plain` is the prune without a text index. A prune that drops a
   file holding the term stops the bench. Goal: warm p50 <= 20 ms at 2,000 files.
4. Trino: an in-process sidecar over the warehouse and a local Trino 476 with the `lakeprune` native
   catalog (gRPC) and `hive` (external tables on the same directories), as `trino_vs_hive.py` starts
   them. Both catalogs must agree (a whole-table check and every timed query, whose counts must be
   the ground truth's), then `SELECT count(*) ... WHERE <predicate>` for each term and index, one
   warm-up, then `--repeat` runs alternating the catalogs: median wall time, Trino's splits, the
   sidecar's prune counters (files considered / kept), the ratio lakeprune / Hive (goal: <= 0.2x at
   2,000 files). If the connector does not send the text predicate (kept == considered), that is
   printed and recorded, not an error.

    PYTHONPATH=. .venv/bin/python bench/text_index.py [--rows 2000000] [--files 2000] [--repeat 20]
        [--keep] [--out bench/results/text_index.json]

Writes `bench/results/text_index.json` (the machine and its load averages included) and prints a
summary; progress goes to stderr.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import statistics
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# The repository root: the end-to-end helpers (`tests.e2e`) start Trino and read the counters.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from support import progress, scratch_directory, table_bench_parser, write_results
from text_index_table import (
    FEW_SHARE,
    FEW_TERM,
    GRAMS,
    HIVE_COLUMNS,
    INDEXES,
    ONE_TERM,
    PLAIN,
    WORDS,
    build_tables,
    holding,
    index_bytes,
)
from trino_vs_hive import machine, query_line
from trino_vs_hive_queries import (
    HIVE,
    NATIVE,
    Query,
    check_agreement,
    qualified,
    register_hive_tables,
    run,
    time_queries,
)
from trino_vs_hive_table import SCHEMA, check_layout

from pruner.engines import engine_spec, hive_file_catalog
from pruner.engines.native_catalog import NativeCatalog
from pruner.engines.plugin import locate_plugin
from pruner.engines.spec import TRINO
from pruner.metadata.index_partition import BucketCache
from pruner.planner.prune import prune
from pruner.planner.result import PruneResult
from pruner.serving.catalog import Catalog, TableName
from pruner.serving.config import ServeConfig
from pruner.sidecar import Sidecar
from pruner.table.table import LakeTable
from tests.e2e.engines import local_engine

CATALOGS = (NATIVE, HIVE)
# Issue 37's goals: index bytes over data bytes, at most; warm prune p50; lakeprune over Hive.
SIZE_GOALS = {GRAMS: 0.15, WORDS: 0.05}
PRUNE_GOAL_MS = 20.0
TRINO_GOAL = 0.2
GOAL_FILES = 2000  # the file count the latency goals are stated at
CHECK = Query(
    "whole table",
    "SELECT count(*), count(msg), sum(id), min(ts), max(ts), count(DISTINCT level), sum(length(msg)) "
    "FROM {t}",
)


@dataclass(frozen=True)
class TextQuery:
    name: str
    table: str
    where: str
    needle: str  # the substring a matching row's msg (lower-cased with `lower`) holds
    lower: bool


def _words(term: str) -> str:
    return f" {term.lower()} "


FEW = f"~{FEW_SHARE:.1%} files"
TEXT_QUERIES = [
    TextQuery(f"trigrams {FEW}", GRAMS, f"msg LIKE '%{FEW_TERM}%'", FEW_TERM, False),
    TextQuery("trigrams 1 file", GRAMS, f"msg LIKE '%{ONE_TERM}%'", ONE_TERM, False),
    TextQuery(f"words {FEW}", WORDS, f"lower(msg) LIKE '%{_words(FEW_TERM)}%'", _words(FEW_TERM), True),
    TextQuery("words 1 file", WORDS, f"lower(msg) LIKE '%{_words(ONE_TERM)}%'", _words(ONE_TERM), True),
]
BASELINE = TextQuery(f"no index {FEW}", PLAIN, TEXT_QUERIES[0].where, FEW_TERM, False)


def build(workdir: Path, warehouse: Path, rows: int, files: int) -> dict[str, Any]:
    """Write the three tables in a Spark child process; their layouts, insert times and index sizes."""
    timings = workdir / "writes.json"
    builder = multiprocessing.get_context("spawn").Process(
        target=build_tables, args=(str(warehouse), str(workdir / "scratch"), rows, files, str(timings))
    )
    builder.start()
    builder.join()
    if builder.exitcode != 0:
        raise SystemExit(f"building the tables failed (exit code {builder.exitcode})")
    seconds = json.loads(timings.read_text())
    plain = seconds["writes_s"][PLAIN]
    tables: dict[str, Any] = {}
    for table, index in INDEXES.items():
        layout = check_layout(warehouse / table)
        entry = layout | {
            "write_s": seconds["writes_s"][table],
            "write_x_plain": round(seconds["writes_s"][table] / plain, 3),
        }
        if index is not None:
            size = index_bytes(warehouse / table, index[0])
            share = size / layout["table_bytes"]
            entry |= {
                "index": index[1],
                "index_bytes": size,
                "index_share_of_data": round(share, 4),
                "size_goal": SIZE_GOALS[table],
                "size_goal_met": share <= SIZE_GOALS[table],
            }
        tables[table] = entry
    return {
        "generate_s": seconds["generate_s"],
        "warm_up_write_s": seconds["warm_up_write_s"],
        "tables": tables,
    }


def ground_truth(warehouse: Path) -> dict[str, dict[str, Any]]:
    """Per query name: the files (names) and rows of its table that hold its needle."""
    truth: dict[str, dict[str, Any]] = {}
    for table in INDEXES:
        mine = [q for q in [*TEXT_QUERIES, BASELINE] if q.table == table]
        found = holding(warehouse / table, [(q.needle, q.lower) for q in mine])
        truth |= {q.name: found[q.needle, q.lower] for q in mine}
    return truth


def prune_latency(
    location: Path, query: TextQuery, repeat: int, cached: bool, holds: set[str]
) -> dict[str, Any]:
    """`prune` of `query.where` on the table at `location`: one warm-up, then `repeat` timed runs
    (ms). `cached`: the table from a sidecar's catalog with its index cache, looked up per prune as
    a request does (a timeline check); else `LakeTable.open(location)` per prune, no index cache."""
    warehouses = {SCHEMA: str(location.parent)}
    catalog = Catalog(warehouses, BucketCache(ServeConfig(warehouses).cache_bytes))  # the default cache
    name = TableName(SCHEMA, location.name)

    def once() -> PruneResult:
        return prune(catalog.table(name) if cached else LakeTable.open(str(location)), query.where)

    once()
    samples = []
    for _ in range(repeat):
        begin = time.perf_counter()
        result = once()
        samples.append((time.perf_counter() - begin) * 1000)
    kept = {s.path.rsplit("/", 1)[-1] for s in result.splits}
    if not holds <= kept:
        raise SystemExit(f"{query.where} on {location.name} dropped files holding the term: {holds - kept}")
    step = next((s for s in result.explain if s.step == "text_index"), None)
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(samples), 2),
        "p95_ms": round(ordered[math.ceil(0.95 * len(ordered)) - 1], 2),
        "runs_ms": [round(s, 2) for s in samples],
        "files_total": result.files_total,
        "files_selected": result.files_selected,
        "text_step": step.to_json() if step is not None else None,
    }


def latencies(warehouse: Path, truth: dict[str, dict[str, Any]], repeat: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for query in [*TEXT_QUERIES, BASELINE]:
        out[query.name] = {
            "table": query.table,
            "where": query.where,
            "files_holding": len(truth[query.name]["files"]),
        }
        for mode in ("cached", "uncached"):
            out[query.name][mode] = prune_latency(
                warehouse / query.table, query, repeat, mode == "cached", truth[query.name]["files"]
            )
        progress(
            f"prune {query.name}: p50 {out[query.name]['cached']['p50_ms']} ms cached, "
            f"{out[query.name]['uncached']['p50_ms']} ms uncached"
        )
    return out


def trino(
    workdir: Path, warehouse: Path, tables: dict[str, Any], truth: dict[str, dict[str, Any]], repeat: int
) -> dict[str, Any]:
    """Start the sidecar and Trino, check the catalogs agree, time the text queries on both."""
    plugin = locate_plugin(TRINO)  # built by connector/trino/build.sh if need be
    config = ServeConfig(
        {SCHEMA: str(warehouse)}, host="127.0.0.1", grpc_port=0, thrift_port=0, metrics_port=None
    )
    sidecar = Sidecar(config).start()
    try:
        if not sidecar.wait_ready(120):
            raise SystemExit("the sidecar did not load its catalog")
        grpc = NativeCatalog(f"127.0.0.1:{sidecar.grpc_port}")
        hive = {"hive": hive_file_catalog(engine_spec("trino"), workdir / "metastore")}
        progress(f"sidecar gRPC {sidecar.grpc_port}; starting Trino 476")
        begin = time.perf_counter()
        with local_engine(
            "trino", f"127.0.0.1:{sidecar.thrift_port}", hive, grpc=grpc, plugin=plugin
        ) as engine:
            startup = time.perf_counter() - begin
            progress(f"Trino answers on port {engine.port} ({startup:.0f} s); registering the Hive tables")
            register_hive_tables(
                engine, warehouse, [GRAMS, WORDS], columns=HIVE_COLUMNS, partitioned_by=(), dimension=False
            )
            load_start = os.getloadavg()
            timed: dict[str, Any] = {}
            for table in (GRAMS, WORDS):
                mine = [q for q in TEXT_QUERIES if q.table == table]
                queries = [Query(q.name, f"SELECT count(*) FROM {{t}} WHERE {q.where}") for q in mine]
                check_agreement(
                    engine, [CHECK, *queries], tables[table], table, checks=False, catalogs=CATALOGS
                )
                for q, sql in zip(mine, queries, strict=True):
                    count = run(engine, qualified(sql.sql, NATIVE, table))[0][0][0]
                    if count != truth[q.name]["rows"]:
                        raise SystemExit(
                            f"{q.where}: Trino counts {count} rows, {truth[q.name]['rows']} hold it"
                        )
                progress(f"{table}: the catalogs agree with each other and the files; timing")
                timed |= time_queries(engine, sidecar, queries, repeat, table, catalogs=CATALOGS)
            load_end = os.getloadavg()
            info = machine(engine)
    finally:
        sidecar.stop(2)
    for q in TEXT_QUERIES:
        entry, native = timed[q.name], timed[q.name][NATIVE]
        ratio = native["median_s"] / entry[HIVE]["median_s"]
        considered, kept = native["sidecar_prune_files_in"], native["sidecar_prune_files_out"]
        entry |= {
            "files_holding": len(truth[q.name]["files"]),
            "rows_matching": truth[q.name]["rows"],
            "ratio_vs_hive": round(ratio, 3),
            "goal": TRINO_GOAL,
            "goal_met": ratio <= TRINO_GOAL,
            # The sidecar kept fewer files than it considered: the text predicate reached it.
            "text_pushed_down": kept < considered,
        }
    return {
        "machine": info,
        "trino_startup_s": round(startup, 1),
        "load_average_queries_start": [round(x, 2) for x in load_start],
        "load_average_queries_end": [round(x, 2) for x in load_end],
        "queries": timed,
    }


def _met(met: bool) -> str:
    return "met" if met else "NOT met"


def print_summary(result: dict[str, Any]) -> None:
    b, files = result["build"], result["build"]["tables"][PLAIN]["files"]
    plain = b["tables"][PLAIN]
    print(
        f"\n{plain['rows']:,} rows in {files:,} files ({plain['table_bytes'] / 1e6:.1f} MB of data); "
        f"{result['machine']['cores']} cores, Trino {result['machine']['trino']}"
    )
    at = "" if files == GOAL_FILES else f" (stated at {GOAL_FILES:,} files; this run has {files:,})"
    print(f"{'write':<14}{'insert s':>10}{'x plain':>9}{'index MB':>10}{'% of data':>11}  size goal")
    for table, t in b["tables"].items():
        size = (
            f"{t['index_bytes'] / 1e6:>10.2f}{t['index_share_of_data']:>11.1%}  "
            f"<= {t['size_goal']:.0%}: {_met(t['size_goal_met'])}"
            if "index_bytes" in t
            else ""
        )
        print(f"{table:<14}{t['write_s']:>10.1f}{t['write_x_plain']:>9.2f}{size}")
    print(f"\n{'prune in process':<22}{'mode':<10}{'p50 ms':>8}{'p95 ms':>8}{'text step':>12}{'holding':>9}")
    for name, p in result["prune"].items():
        for mode in ("cached", "uncached"):
            step = p[mode]["text_step"]
            text = "none" if step is None else f"{step['files_in']}->{step['files_out']}"
            print(
                f"{name:<22}{mode:<10}{p[mode]['p50_ms']:>8.1f}{p[mode]['p95_ms']:>8.1f}{text:>12}"
                f"{p['files_holding']:>9}"
            )
    for name, p in result["prune"].items():
        if p["table"] != PLAIN:
            print(
                f"goal warm p50 <= {PRUNE_GOAL_MS:.0f} ms{at}, {name}: cached {p['cached']['p50_ms']} ms "
                f"{_met(p['cached']['p50_ms'] <= PRUNE_GOAL_MS)}, uncached {p['uncached']['p50_ms']} ms "
                f"{_met(p['uncached']['p50_ms'] <= PRUNE_GOAL_MS)}"
            )
    header = f"{'catalog':<18}{'median s':>10}{'x Hive':>8}{'rows':>6}{'splits':>8}{'kept/of':>12}"
    print(f"\n{'Trino count(*)':<22}{header}")
    for name, q in result["trino"]["queries"].items():
        for catalog in CATALOGS:
            print(query_line(name, catalog, q))
    for name, q in result["trino"]["queries"].items():
        native = q[NATIVE]
        pushed = (
            "the text predicate reached the sidecar"
            if q["text_pushed_down"]
            else "the text predicate did NOT reach the sidecar's text index"
        )
        print(
            f"{name}: {pushed} (kept {native['sidecar_prune_files_out']:.0f} of "
            f"{native['sidecar_prune_files_in']:.0f} files, {q['files_holding']} hold the term); "
            f"goal <= {TRINO_GOAL}x Hive{at}: {q['ratio_vs_hive']}x, {_met(q['goal_met'])}"
        )


def main() -> None:
    parser = table_bench_parser(
        __doc__,
        rows=2_000_000,
        files=GOAL_FILES,
        repeat=20,
        repeat_help="timed runs per prune, and per query and catalog",
        out=Path(__file__).parent / "results" / "text_index.json",
    )
    args = parser.parse_args()
    if args.repeat < 1 or args.files < 1 or args.rows < args.files:
        parser.error("--repeat and --files must be positive and --rows at least --files")
    load_before = os.getloadavg()
    began = time.perf_counter()
    with scratch_directory("lakeprune-text-index-", args.keep) as workdir:
        warehouse = workdir / "warehouse"
        progress(f"writing {args.rows:,} rows in ~{args.files} files, three times, under {warehouse}")
        built = build(workdir, warehouse, args.rows, args.files)
        progress(
            "inserts: "
            + ", ".join(f"{t} {e['write_s']} s ({e['files']} files)" for t, e in built["tables"].items())
        )
        truth = ground_truth(warehouse)
        progress("ground truth: " + ", ".join(f"{n} {len(t['files'])} files" for n, t in truth.items()))
        load_prunes = os.getloadavg()
        pruned = latencies(warehouse, truth, args.repeat)
        queried = trino(workdir, warehouse, built["tables"], truth, args.repeat)
        result = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "total_s": round(time.perf_counter() - began, 1),
            "machine": queried.pop("machine")
            | {
                # 1/5/15-minute load averages: other jobs may share the 2 cores.
                "load_average_at_start": [round(x, 2) for x in load_before],
                "load_average_prunes_start": [round(x, 2) for x in load_prunes],
                "load_average_queries_start": queried.pop("load_average_queries_start"),
                "load_average_queries_end": queried.pop("load_average_queries_end"),
                "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
            },
            "command": " ".join(sys.argv),
            "arguments": {"rows": args.rows, "files_aimed": args.files, "repeat": args.repeat},
            "terms": {"few": FEW_TERM, "one": ONE_TERM},
            "build": built,
            "prune": pruned,
            "trino": queried,
        }
    write_results(args.out, result, print_summary)
    progress(f"wrote {args.out}")


if __name__ == "__main__":
    main()
