"""How many of a TPC suite's prunes repeat a request the same query already made (issue 41): every
query of the suite once through the native catalog to warm up, then once more with every
`PruneStream` request the sidecar serves logged (its table, a hash of the request's bytes, its
latency in the handler), and the repeats counted: a request whose bytes equal an earlier one of the
same query (same table, snapshot, predicate) is a plan the sidecar made twice. The sidecar runs in
this process (the servicer's `PruneStream` wrapped to log), so its latencies include the queueing
of concurrent scans in one interpreter, as a one-worker `lakeprune serve` has it. Not a test, not
timed against Hive: `tpc.py` does that.

    PYTHONPATH=. nice -n 5 .venv/bin/python bench/tpc_repeated_prunes.py [--suite tpcds] [--scale sf1]

Uses the lake `tpc.py` made (or makes it). Writes `bench/results/tpc_repeated_prunes_<suite>.json`
(every logged prune, and the summary it prints)."""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# The repository root: the TPC lakes and Trino come from the end-to-end helpers (`tests.e2e`).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from support import progress

from pruner.service import grpc_service
from tests.e2e.tpc_lake import SCALES, SUITES, adopt_in_child, default_root, side_by_side
from tests.e2e.tpc_queries import run, suite_queries

RESULTS = Path(__file__).parent / "results"


class PruneLog:
    """The `PruneStream` requests served while it is installed, tagged with the query running."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.query: str | None = None
        self._lock = threading.Lock()

    def install(self) -> None:
        served = grpc_service.PruningServicer.PruneStream
        log = self

        def logged(servicer: Any, request: Any, context: Any) -> Iterator[Any]:
            key = hashlib.sha1(request.SerializeToString(deterministic=True)).hexdigest()
            begin = time.perf_counter()
            try:
                yield from served(servicer, request, context)
            finally:
                entry = {
                    "query": log.query,
                    "table": request.table.table,
                    "request": key[:16],
                    "ms": round((time.perf_counter() - begin) * 1000, 2),
                }
                with log._lock:
                    log.entries.append(entry)

        grpc_service.PruningServicer.PruneStream = logged  # type: ignore[method-assign]


def summarise(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Prunes and their summed latency; those repeating an earlier request of the same query, by
    query and by table; the latencies of first requests and of repeats."""
    seen: set[tuple[str, str]] = set()
    firsts, repeats = [], []
    by_query: Counter[str] = Counter()
    by_table: Counter[str] = Counter()
    for e in entries:
        key = (e["query"], e["request"])
        if key in seen:
            repeats.append(e["ms"])
            by_query[e["query"]] += 1
            by_table[e["table"]] += 1
        else:
            firsts.append(e["ms"])
            seen.add(key)
    return {
        "prunes": len(entries),
        "prune_ms": round(sum(firsts) + sum(repeats), 1),
        "repeats": len(repeats),
        "repeat_ms": round(sum(repeats), 1),
        "first_ms_median": round(statistics.median(firsts), 2) if firsts else None,
        "repeat_ms_median": round(statistics.median(repeats), 2) if repeats else None,
        "repeats_by_query": dict(by_query.most_common()),
        "repeats_by_table": dict(by_table.most_common()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--suite", default="tpcds", choices=SUITES)
    parser.add_argument("--scale", default="sf1", choices=SCALES)
    args = parser.parse_args()
    log = PruneLog()
    log.install()
    root = default_root(args.suite, args.scale)
    progress(f"starting an in-process sidecar and Trino 476 over {root}")
    with side_by_side([(args.suite, args.scale, root)], adopt_in_child, "1s", in_process=True) as (
        engine,
        _served,
        _lakes,
    ):
        queries = suite_queries(args.suite)
        progress(f"{len(queries)} queries: a warm-up pass, then the logged pass")
        for query in queries:
            run(engine, "lakeprune", args.suite, query.sql)
        log.entries.clear()
        walls: dict[str, float] = {}
        for query in queries:
            log.query = query.name
            walls[query.name] = round(run(engine, "lakeprune", args.suite, query.sql).wall, 3)
    summary = summarise(log.entries) | {"queries_wall_s": round(sum(walls.values()), 1)}
    result = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
        "summary": summary,
        "walls_s": walls,
        "prunes": log.entries,
    }
    out = RESULTS / f"tpc_repeated_prunes_{args.suite}.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(summary, indent=1))
    progress(f"wrote {out}")


if __name__ == "__main__":
    main()
