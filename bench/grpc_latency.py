"""gRPC prune latency (issue 5): the 2,000-file table of `prune_latency.py` (built by its own
builder), served by an in-process sidecar; the same random predicates pruned
  - in process, through the sidecar's catalog and index cache (no transport),
  - over gRPC by 1 client, and by 16 concurrent clients (separate processes),
after one warm-up pass, so that every figure is measured with the same, warm cache and the
difference is the transport: encoding, the call, decoding the splits. The in-process figures are
also taken with 16 threads, which shows what concurrency costs without any transport. Not a test.

    .venv/bin/python bench/grpc_latency.py [--files 2000] [--predicates 700] [--clients 16]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.message import Message

sys.path.insert(0, str(Path(__file__).resolve().parent))

from prune_latency import build  # the sibling benchmark: its table
from prune_shapes import predicate_shapes
from support import write_results

from pruner.client import MAX_MESSAGE_BYTES, PruningClient
from pruner.planner.prune import prune
from pruner.predicate.tuple_domain import TupleDomain
from pruner.serving.catalog import TableName
from pruner.serving.config import ServeConfig
from pruner.sidecar import Sidecar

SCHEMA, TABLE = "bench", "t"
Work = list[tuple[str, TupleDomain]]


def summary(samples: list[tuple[str, float, int]]) -> dict[str, Any]:
    ms = sorted(m for _, m, _ in samples)
    by_shape: dict[str, list[float]] = {}
    for shape, m, _ in samples:
        by_shape.setdefault(shape, []).append(m)
    return {
        "calls": len(ms),
        "median_ms": round(statistics.median(ms), 2),
        "p99_ms": round(ms[max(0, int(len(ms) * 0.99) - 1)], 2),
        "by_shape_median_ms": {k: round(statistics.median(v), 2) for k, v in by_shape.items()},
    }


def _client(address: str, work: Work, ready: Any, start: Any, out: Any) -> None:
    """One client process: connect, wait for the start signal, prune every predicate, report."""
    samples = []
    with PruningClient(address) as client:
        client.list_tables()  # connect before the clock starts
        ready.put(os.getpid())
        start.wait()
        for shape, predicate in work:
            begin = time.perf_counter()
            result = client.prune(SCHEMA, TABLE, predicate)
            samples.append((shape, (time.perf_counter() - begin) * 1000, result.files_selected))
    out.put(samples)


def _method_path(request: Message, name: str) -> str:
    """The HTTP/2 path of a method of the `PruningService` that `request`'s proto file defines."""
    return f"/{request.DESCRIPTOR.file.services_by_name['PruningService'].full_name}/{name}"


def _raw_client(address: str, work: Work, ready: Any, start: Any, out: Any) -> None:
    """One client process that sends `Prune` requests encoded before the clock starts and does not
    decode the answers (an answer too large for one message is fetched with `PruneStream`, as
    `PruningClient.prune` does). It leaves as little client work on the machine's cores as a
    Python client can: what it measures is the sidecar's capacity. The samples' third field is the
    answer's size in bytes."""
    with PruningClient(address) as client:
        messages = [(shape, client.prune_request(SCHEMA, TABLE, p)[0]) for shape, p in work]
    requests = [(shape, message.SerializeToString()) for shape, message in messages]
    options = [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.use_local_subchannel_pool", 1),
    ]
    samples = []
    with grpc.insecure_channel(address, options=options) as channel:
        prune_raw = channel.unary_unary(_method_path(messages[0][1], "Prune"))
        stream_raw = channel.unary_stream(_method_path(messages[0][1], "PruneStream"))
        streamed: set[int] = set()
        grpc.channel_ready_future(channel).result(timeout=60)  # connect before the clock starts
        ready.put(os.getpid())
        start.wait()
        for number, (shape, request) in enumerate(requests):
            begin = time.perf_counter()
            if number not in streamed:
                try:
                    size = len(prune_raw(request, timeout=60))
                except grpc.RpcError as exc:
                    if exc.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                        raise
                    streamed.add(number)
            if number in streamed:
                size = sum(len(message) for message in stream_raw(request, timeout=60))
            samples.append((shape, (time.perf_counter() - begin) * 1000, size))
    out.put(samples)


def over_grpc(
    address: str, work: list[Work], raw: bool = False, meters: Mapping[str, Callable[[], float]] | None = None
) -> tuple[list[tuple[str, float, int]], float, dict[str, float]]:
    """Run one client process per work list at once (`raw`: `_raw_client`s, else `PruningClient`s);
    all samples, the wall time, and how much each of `meters` (e.g. a CPU time) grew while the
    calls ran (from when every client is connected to when the last one reports)."""
    context = multiprocessing.get_context("spawn")  # no fork of a process running a gRPC server
    ready, start, out = context.Queue(), context.Event(), context.Queue()
    target = _raw_client if raw else _client
    processes = [context.Process(target=target, args=(address, w, ready, start, out)) for w in work]
    for p in processes:
        p.start()
    for _ in processes:  # every client imported and connected: the clock starts now
        ready.get(timeout=600)
    meters = meters or {}
    before = {name: meter() for name, meter in meters.items()}
    begin = time.perf_counter()
    start.set()
    samples = [s for _ in processes for s in out.get(timeout=900)]
    wall = time.perf_counter() - begin
    grown = {name: meter() - before[name] for name, meter in meters.items()}
    for p in processes:
        p.join()
    return samples, wall, grown


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--predicates", type=int, default=700)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "grpc_latency.json")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="lakeprune-bench-"))
    try:
        build(str(workdir / TABLE), args.files)
        config = ServeConfig({SCHEMA: str(workdir)}, grpc_port=0, thrift_port=None, metrics_port=None)
        with Sidecar(config) as sidecar:
            assert sidecar.wait_ready(60)
            address = f"127.0.0.1:{sidecar.grpc_port}"
            name = TableName(SCHEMA, TABLE)
            files = sidecar.catalog.snapshot(name).files()
            shapes = predicate_shapes(sum(f.rows for f in files))
            rng = random.Random(7)
            names = list(shapes)
            work = [
                (names[i % len(names)], shapes[names[i % len(names)]](rng)) for i in range(args.predicates)
            ]

            def plan_all(items: Work) -> list[tuple[str, float, int]]:
                samples = []
                for shape, predicate in items:
                    begin = time.perf_counter()
                    result = prune(sidecar.catalog.table(name), predicate)
                    samples.append((shape, (time.perf_counter() - begin) * 1000, result.files_selected))
                return samples

            plan_all(work)  # warm-up: the cache now holds what these predicates read
            cache_warm = sidecar.cache.stats()

            begin = time.perf_counter()
            local = plan_all(work)
            local_wall = time.perf_counter() - begin

            per_client = max(1, args.predicates // args.clients)
            slices = [work[i * per_client % len(work) :][:per_client] for i in range(args.clients)]

            begin = time.perf_counter()
            with ThreadPoolExecutor(args.clients) as pool:
                local_many = [s for part in pool.map(plan_all, slices) for s in part]
            local_many_wall = time.perf_counter() - begin

            one, one_wall, _ = over_grpc(address, [work])
            many, many_wall, _ = over_grpc(address, slices)
            cache_end = sidecar.cache.stats()
        result_json = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            "files": len(files),
            "rows": sum(f.rows for f in files),
            "predicates": args.predicates,
            "cache": {
                "max_bytes": cache_end.max_bytes,
                "bytes_after_warm_up": cache_warm.bytes,
                "entries": cache_end.entries,
                "misses_after_warm_up": cache_end.misses - cache_warm.misses,
                "evictions": cache_end.evictions,
            },
            "in_process_1_thread": {**summary(local), "calls_per_second": round(len(local) / local_wall, 1)},
            f"in_process_{args.clients}_threads": {
                **summary(local_many),
                "calls_per_second": round(len(local_many) / local_many_wall, 1),
            },
            "grpc_1_client": {**summary(one), "calls_per_second": round(len(one) / one_wall, 1)},
            f"grpc_{args.clients}_clients": {
                **summary(many),
                "calls_per_second": round(len(many) / many_wall, 1),
            },
            "median_files_selected": {
                shape: statistics.median(n for s, _, n in local if s == shape) for shape in names
            },
        }
        write_results(args.out, result_json)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
