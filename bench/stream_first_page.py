"""PruneStream's first page (issue 36, item 4), before and after, side by side in one run: on the
prune benchmark's table (`prune_latency.build`, 100 rows a file), an in-process sidecar paging by
`--page` splits answers `PruneStream` over gRPC for predicates that keep every file (no predicate;
an unselective range that column stats evaluate for every file); the client times its first message
holding splits and its last message. The same run also times the unary prune of
`prune_latency.py`'s shapes (each prune opening the table as a fresh caller does), which the change
must leave as it was. The table is built once (or `--table` names one built before); measurement
rounds alternate between the two code trees in child processes, so both see the same machine load.
Not a test.

    mkdir /tmp/before && git archive <commit before the change> | tar -x -C /tmp/before
    .venv/bin/python bench/stream_first_page.py --before /tmp/before [--files 10000] [--rounds 4]
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

PRUNES_PER_SHAPE = 10
STREAMS = 3  # per predicate and round, after one warm-up stream


def measure(location: str, page: int) -> dict[str, Any]:
    """One round with whatever `pruner` this process imports (the tree on PYTHONPATH)."""
    import grpc
    from support import shape_medians

    from pruner.planner.prune import prune
    from pruner.predicate.domain import Domain, SortedRangeSet
    from pruner.predicate.ranges import Range
    from pruner.predicate.tuple_domain import TupleDomain
    from pruner.service import codec
    from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
    from pruner.service.gen.lakeprune.v1 import pruning_service_pb2_grpc as spb_grpc
    from pruner.serving.config import Limits, ServeConfig
    from pruner.sidecar import Sidecar
    from pruner.table.table import LakeTable

    files = LakeTable.open(location).snapshot().files()
    latency = shape_medians(
        sum(f.rows for f in files), lambda p: prune(LakeTable.open(location), p), PRUNES_PER_SHAPE
    )

    unselective = TupleDomain.with_domains(
        {"qty": Domain(SortedRangeSet.of_ranges(Range(0, True, None, False)), False)}
    )
    predicates = {"every file": None, "qty >= 0 (column stats)": unselective}
    schema, table = "bench", Path(location).name
    config = ServeConfig(
        {schema: str(Path(location).parent)},
        grpc_port=0,
        thrift_port=None,
        metrics_port=None,
        limits=Limits(max_splits_per_response=page),
    )
    streams: dict[str, dict[str, float]] = {}
    with Sidecar(config) as sidecar, grpc.insecure_channel(f"127.0.0.1:{sidecar.grpc_port}") as channel:
        assert sidecar.wait_ready(30)
        stub = spb_grpc.PruningServiceStub(channel)
        for label, predicate in predicates.items():
            request = spb.PruneRequest(table=spb.TableName(schema=schema, table=table))
            if predicate is not None:
                request.predicate.CopyFrom(codec.encode_tuple_domain(predicate))
            firsts, lasts = [], []
            for i in range(STREAMS + 1):
                start = time.perf_counter()
                first, splits = None, 0
                for message in stub.PruneStream(request, timeout=600):
                    splits += len(message.splits)
                    if first is None and message.splits:
                        first = time.perf_counter() - start
                last = time.perf_counter() - start
                assert splits == len(files), f"{label}: {splits} splits, {len(files)} files"
                if i:  # the first stream warms the sidecar's index cache
                    firsts.append((first or last) * 1000)
                    lasts.append(last * 1000)
            streams[label] = {
                "first_page_ms": statistics.median(firsts),
                "last_message_ms": statistics.median(lasts),
            }
    return {"prune_median_ms": latency, "stream": streams}


def _median(runs: list[dict[str, Any]], *path: str) -> float:
    values = []
    for run in runs:
        value: Any = run
        for key in path:
            value = value[key]
        values.append(value)
    return round(statistics.median(values), 1)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", type=Path, help="a checkout of the code before the change")
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--table", help="a table built before by prune_latency.build (default: build one)")
    parser.add_argument("--page", type=int, default=1_000, help="limits.max_splits_per_response")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # child mode: the table's location
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "stream_first_page.json"
    )
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.page)))
        return
    if args.before is None:
        parser.error("--before is required")
    from support import measure_in, write_results

    workdir = Path(tempfile.mkdtemp(prefix="lakeprune-bench-"))
    try:
        location = args.table
        if location is None:
            from prune_latency import build

            location = str(workdir / "t")
            build(location, args.files)
        trees = {"before": args.before.resolve(), "after": Path(__file__).parents[1].resolve()}
        rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
        started = datetime.now(UTC)
        load_before = os.getloadavg()
        for i in range(args.rounds):
            for name in list(trees) if i % 2 == 0 else list(reversed(trees)):
                rounds[name].append(
                    measure_in(trees[name], __file__, "--measure", location, "--page", str(args.page))
                )
                print(f"round {i + 1} {name}: {rounds[name][-1]}", flush=True)
        from pruner.table.table import LakeTable

        first = rounds["after"][0]
        report = {
            "date": started.isoformat(timespec="seconds"),
            "finished": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": f"{os.cpu_count()} cores, Python {sys.version.split()[0]}",
            "load_average_before_after": [round(load_before[0], 1), round(os.getloadavg()[0], 1)],
            "files": len(LakeTable.open(location).snapshot().files()),
            "page": args.page,
            "rounds": args.rounds,
            "results": {
                name: {
                    "stream": {
                        label: {key: _median(runs, "stream", label, key) for key in first["stream"][label]}
                        for label in first["stream"]
                    },
                    "prune_median_ms": {
                        shape: _median(runs, "prune_median_ms", shape) for shape in first["prune_median_ms"]
                    },
                }
                for name, runs in rounds.items()
            },
        }
        write_results(args.out, report)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
