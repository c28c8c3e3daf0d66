"""One plan per query (issue 14), before and after, side by side in one run: prune latency on the
prune benchmark's table (2,000 files; the shapes of `prune_latency.py`, each prune opening the
table as a fresh caller does), and the cost of listing every split of that table through the Thrift
connector's `GetSplits` in pages of 100 (20 pages: before, each page re-planned the whole prune;
after, one plan). The table is built once; measurement rounds alternate between the two code trees
in child processes, so both see the same machine load. Not a test.

    git worktree add /tmp/before <commit before the change>
    .venv/bin/python bench/plan_once.py --before /tmp/before [--files 2000] [--rounds 6]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

PAGE = 100
PRUNES_PER_SHAPE = 20


def measure(location: str) -> dict[str, Any]:
    """One round with whatever `pruner` this process imports (the tree on PYTHONPATH)."""
    from support import shape_medians

    from pruner.table.table import LakeTable

    try:  # after: the one entry point
        from pruner.planner.prune import prune

        def plan(predicate: Any) -> int:
            return prune(LakeTable.open(location), predicate).files_selected
    except ImportError:  # before
        from pruner.planner.planner import Planner

        def plan(predicate: Any) -> int:
            return Planner(LakeTable.open(location).snapshot()).prune(predicate).files_selected

    rows = sum(f.rows for f in LakeTable.open(location).snapshot().files())
    latency = shape_medians(rows, plan, PRUNES_PER_SHAPE)
    return {"prune_median_ms": latency, "paged_get_splits_ms": _paged_get_splits(location)}


def _paged_get_splits(location: str) -> float:
    """Milliseconds to list every split of the table in pages of `PAGE` (a new query each time)."""
    from pruner.metadata.cache import IndexCache
    from pruner.serving.catalog import Catalog
    from pruner.serving.config import ServeConfig
    from pruner.serving.metrics import Metrics
    from pruner.thrift import idl
    from pruner.thrift.endpoint import ThriftEndpoint

    table = idl.SchemaTableName("bench", Path(location).name)
    config = ServeConfig(
        {"bench": str(Path(location).parent)}, grpc_port=None, thrift_port=0, metrics_port=None
    )
    cache = IndexCache(config.cache_bytes)
    endpoint = ThriftEndpoint(config, Catalog(config.warehouses, cache), Metrics(cache))
    endpoint.start()  # splits name the endpoint's address; the calls below go to the connector directly
    try:
        columns, everything = idl.NullableColumnSet(None), idl.TupleDomain({})
        start = time.perf_counter()
        token, count = None, 0
        while True:
            batch = endpoint.connector.get_splits(table, columns, everything, PAGE, idl.NullableToken(token))
            count += len(batch.splits)
            if batch.nextToken is None:
                break
            token = batch.nextToken
        elapsed = (time.perf_counter() - start) * 1000
    finally:
        endpoint.stop(0)
    from pruner.table.table import LakeTable

    assert count == len(LakeTable.open(location).snapshot().files()), "every split listed once"
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", type=Path, help="a checkout of the code before the change")
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # child mode: the table's location
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "plan_once.json")
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return
    if args.before is None:
        parser.error("--before is required")
    from prune_latency import build
    from support import measure_in

    workdir = Path(tempfile.mkdtemp(prefix="lakeprune-bench-"))
    try:
        location = str(workdir / "t")
        build(location, args.files)
        trees = {"before": args.before.resolve(), "after": Path(__file__).parents[1].resolve()}
        rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
        for i in range(args.rounds):
            for name in list(trees) if i % 2 == 0 else list(reversed(trees)):
                rounds[name].append(measure_in(trees[name], __file__, "--measure", location))
                print(f"round {i + 1} {name}: {rounds[name][-1]}", flush=True)
        report = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": f"{os.cpu_count()} cores, Python {sys.version.split()[0]}",
            "files": args.files,
            "rounds": args.rounds,
            "page": PAGE,
            "results": {
                name: {
                    "prune_median_ms": {
                        shape: round(statistics.median(r["prune_median_ms"][shape] for r in runs), 1)
                        for shape in runs[0]["prune_median_ms"]
                    },
                    "paged_get_splits_ms": round(
                        statistics.median(r["paged_get_splits_ms"] for r in runs), 1
                    ),
                }
                for name, runs in rounds.items()
            },
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
        print(json.dumps(report, indent=2))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
