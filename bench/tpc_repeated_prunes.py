"""How many of a TPC suite's prunes repeat a request the same query already made (issue 41): every
query of the suite once through the native catalog to warm up, then once more with every
`PruneStream` request the sidecar serves logged (its table, its key as the sidecar shares plans by
it, when it arrived and its latency in the handler), and the repeats counted: a request whose key
equals an earlier one of the same query (same table, snapshot, predicate) is a plan the sidecar
would make twice without sharing. A repeat that arrives before its first request has finished is
counted as one in flight (it waits for that plan), a later one as one after (it replays a
remembered plan). The sidecar runs in this process (the servicer's `PruneStream` wrapped to log),
so its latencies include the queueing of concurrent scans in one interpreter, as a one-worker
`lakeprune serve` has it. Not a test, not timed against Hive: `tpc.py` does that.

    PYTHONPATH=. nice -n 5 .venv/bin/python bench/tpc_repeated_prunes.py [--suite tpcds] [--scale sf1]
        [--out FILE]

Uses the lake `tpc.py` made (or makes it). Writes `bench/results/tpc_repeated_prunes_<suite>.json`
unless `--out` names another file: the summary it prints, each query's wall time and every logged
prune, one line each."""

from __future__ import annotations

import argparse
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
from pruner.service.shared_prunes import request_key
from tests.e2e.tpc_lake import SCALES, SUITES, adopt_in_child, default_root, side_by_side
from tests.e2e.tpc_queries import run, suite_queries

RESULTS = Path(__file__).parent / "results"


class PruneLog:
    """The `PruneStream` requests served while it is installed, tagged with the query running."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.query: str | None = None
        self.epoch = time.perf_counter()
        self._lock = threading.Lock()

    def restart(self) -> None:
        """Forget what was logged; arrival times count from now."""
        with self._lock:
            self.entries.clear()
            self.epoch = time.perf_counter()

    def install(self) -> None:
        served = grpc_service.PruningServicer.PruneStream
        log = self

        def logged(servicer: Any, request: Any, context: Any) -> Iterator[Any]:
            key = request_key(request)
            begin = time.perf_counter()
            try:
                yield from served(servicer, request, context)
            finally:
                entry = {
                    "query": log.query,
                    "table": request.table.table,
                    # A request without a key (no pinned snapshot) is never a repeat.
                    "request": key.hex()[:16] if key is not None else f"unkeyed-{id(request)}",
                    "at_ms": round((begin - log.epoch) * 1000, 2),
                    "ms": round((time.perf_counter() - begin) * 1000, 2),
                }
                with log._lock:
                    log.entries.append(entry)

        grpc_service.PruningServicer.PruneStream = logged  # type: ignore[method-assign,assignment]


def summarise(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Prunes and their summed latency; those repeating an earlier request of the same query, by
    query and by table, and how many of them arrived while their first was still running; the
    latencies of first requests and of repeats."""
    first_ends: dict[tuple[str, str], float] = {}
    firsts, repeats = [], []
    in_flight = 0
    by_query: Counter[str] = Counter()
    by_table: Counter[str] = Counter()
    for e in sorted(entries, key=lambda e: float(e["at_ms"])):
        key = (e["query"], e["request"])
        first_end = first_ends.get(key)
        if first_end is None:
            firsts.append(e["ms"])
            first_ends[key] = e["at_ms"] + e["ms"]
            continue
        repeats.append(e["ms"])
        in_flight += e["at_ms"] < first_end
        by_query[e["query"]] += 1
        by_table[e["table"]] += 1
    return {
        "prunes": len(entries),
        "prune_ms": round(sum(firsts) + sum(repeats), 1),
        "repeats": len(repeats),
        "repeats_in_flight": in_flight,
        "repeats_after": len(repeats) - in_flight,
        "repeat_ms": round(sum(repeats), 1),
        "first_ms_median": round(statistics.median(firsts), 2) if firsts else None,
        "repeat_ms_median": round(statistics.median(repeats), 2) if repeats else None,
        "repeats_by_query": dict(by_query.most_common()),
        "repeats_by_table": dict(by_table.most_common()),
    }


def with_prunes(result_json: str, prunes: list[dict[str, Any]]) -> str:
    """The result's JSON with the logged prunes added as its last field, one prune a line."""
    lines = ",\n  ".join(json.dumps(p) for p in sorted(prunes, key=lambda p: float(p["at_ms"])))
    return result_json.removesuffix("\n}") + ',\n "prunes": [\n  ' + lines + "\n ]\n}\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--suite", default="tpcds", choices=SUITES)
    parser.add_argument("--scale", default="sf1", choices=SCALES)
    parser.add_argument("--out", type=Path, help="the result's file (default: bench/results/...)")
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
        log.restart()
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
    }
    out = args.out or RESULTS / f"tpc_repeated_prunes_{args.suite}.json"
    out.write_text(with_prunes(json.dumps(result, indent=1), log.entries))
    print(json.dumps(summary, indent=1))
    progress(f"wrote {out}")


if __name__ == "__main__":
    main()
