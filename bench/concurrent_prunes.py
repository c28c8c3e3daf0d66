"""Concurrent prunes by sidecar workers (issue 17): the 2,000-file table of `prune_latency.py`
(built by its own builder), served by `lakeprune serve --workers 1` and by `--workers 2` (each a
real server process tree, gRPC only, default cache; both run for the whole benchmark, idle while
the other is measured), and the same random predicates of `prune_shapes.py` pruned over gRPC by 1,
4 and 16 concurrent clients — separate processes, so that the clients do not share one GIL. Each
server is warmed up first by 16 clients (every worker's cache then holds what the predicates read);
then, per kind of client and client count, the two servers are measured in alternating rounds (1,
2, 2, 1, ...), so that a change of the machine's load during the run (other work shares its cores)
falls on both alike. Two kinds of client: `full` ones call `PruningClient.prune` (a GetTable call
to bind the predicate, then Prune, and every split decoded into Python objects), as a Python
application would; `raw` ones send Prune requests encoded before the clock starts and do not decode
the answers, as little client work as a Python process can do per call. The clients run on the
same cores as the servers, so the `raw` figures are the nearer to what the sidecar itself serves.
Prunes per second (calls over the summed wall time of a level's rounds) and the latency median and
p99 measured in the clients, side by side; and where the machine's CPU time went while a level ran
(from /proc): the measured server's process tree (CPU ms per prune, cores used) and the whole
machine's busy cores — the rest is the clients' (and anything else running). Not a test.

    .venv/bin/python bench/concurrent_prunes.py [--files 2000] [--calls 560] [--rounds 2]
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from grpc_latency import SCHEMA, TABLE, Work, over_grpc, summary  # the sibling benchmark's client
from prune_latency import build  # the sibling benchmark: its table
from prune_shapes import predicate_shapes
from support import progress, write_results

from pruner.table.table import LakeTable

CLIENTS = (1, 4, 16)
# `full`: `PruningClient.prune` (binds the predicate with a GetTable call, decodes every split);
# `raw`: requests encoded before the clock starts, answers not decoded (the sidecar's capacity).
CLIENT_KINDS = ("full", "raw")
WORKERS = (1, 2)
REPO = Path(__file__).resolve().parents[1]
SERVE = "from pruner.cli.main import app\napp()\n"


def load() -> str:
    """The load averages (1, 5, 15 min): other work on the machine shares its cores."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def commit() -> str:
    result = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False
    )
    return result.stdout.strip() or "unknown"


class Server:
    """`lakeprune serve --workers N` on a free loopback gRPC port, stopped with SIGTERM."""

    def __init__(self, warehouse: Path, workers: int, log: Path) -> None:
        args = ["serve", "-w", f"{SCHEMA}={warehouse}", "--grpc-port", "0", "--thrift-port", "off"]
        args += ["--metrics-port", "off", "--workers", str(workers)]
        with open(log, "wb") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-c", SERVE, *args],
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                env={**os.environ, "COLUMNS": "200"},
            )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        found = re.search(r"grpc=127\.0\.0\.1:(\d+)", line)
        if found is None:
            self.stop()
            raise RuntimeError(f"the sidecar did not start: {log.read_text()[-2000:]}")
        self.address = f"127.0.0.1:{found.group(1)}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        self.process.wait(60)


def tree_cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` and of its descendants now running (Linux /proc)."""
    ticks, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(child) for child in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):  # a process or thread that just ended
            continue
    return ticks / os.sysconf("SC_CLK_TCK")


def machine_busy_seconds() -> float:
    """CPU time all cores spent not idle since boot (Linux /proc/stat, summed over cores)."""
    ticks = [int(v) for v in Path("/proc/stat").read_text().split()[1:11]]
    idle, iowait = ticks[3], ticks[4]
    return (sum(ticks[:8]) - idle - iowait) / os.sysconf("SC_CLK_TCK")  # not guest time (in user)


def slices(work: Work, clients: int) -> list[Work]:
    """`work` cut into one equal list per client."""
    per_client = len(work) // clients
    return [work[i * per_client : (i + 1) * per_client] for i in range(clients)]


def measure(servers: dict[int, Server], work: Work, rounds: int, raw: bool) -> dict[str, Any]:
    """Per server (by workers) and client count: the summary of every round's calls, made by
    `PruningClient`s or (`raw`) by clients that send pre-encoded requests and decode nothing."""
    kind = "raw" if raw else "full"
    results: dict[str, Any] = {f"workers_{workers}": {} for workers in servers}
    for clients in CLIENTS:
        samples: dict[int, list[tuple[str, float, int]]] = {workers: [] for workers in servers}
        walls, server_cpu, machine_busy = (dict.fromkeys(servers, 0.0) for _ in range(3))
        for round_ in range(rounds):
            for workers in sorted(servers, reverse=round_ % 2 == 1):
                server = functools.partial(tree_cpu_seconds, servers[workers].process.pid)
                meters: dict[str, Callable[[], float]] = {"server": server, "machine": machine_busy_seconds}
                taken, wall, grown = over_grpc(servers[workers].address, slices(work, clients), raw, meters)
                server_cpu[workers] += grown["server"]
                machine_busy[workers] += grown["machine"]
                samples[workers] += taken
                walls[workers] += wall
        for workers in servers:
            calls = len(samples[workers])
            level = {
                **summary(samples[workers]),
                "prunes_per_second": round(calls / walls[workers], 1),
                "server_cpu_ms_per_prune": round(server_cpu[workers] * 1000 / calls, 1),
                "server_cores": round(server_cpu[workers] / walls[workers], 2),
                "machine_busy_cores": round(machine_busy[workers] / walls[workers], 2),
            }
            results[f"workers_{workers}"][f"{clients}_clients"] = level
            progress(
                f"  {kind} clients, --workers {workers}, {clients:2d} clients: "
                f"{level['prunes_per_second']} prunes/s, server {level['server_cpu_ms_per_prune']} "
                f"CPU ms/prune on {level['server_cores']} cores"
            )
    results["speedup_2_workers"] = {
        f"{clients}_clients": round(
            results["workers_2"][f"{clients}_clients"]["prunes_per_second"]
            / results["workers_1"][f"{clients}_clients"]["prunes_per_second"],
            2,
        )
        for clients in CLIENTS
    }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=560, help="prunes per round (a multiple of 16)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds per server and client count")
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "concurrent_prunes.json"
    )
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="lakeprune-bench-"))
    try:
        progress(f"building the {args.files}-file table")
        build(str(workdir / TABLE), args.files)
        files = LakeTable.open(str(workdir / TABLE)).snapshot().files()
        shapes = predicate_shapes(sum(f.rows for f in files))
        rng = random.Random(7)
        names = list(shapes)
        work = [(names[i % len(names)], shapes[names[i % len(names)]](rng)) for i in range(args.calls)]
        load_before = load()
        servers: dict[int, Server] = {}
        try:
            for workers in WORKERS:
                servers[workers] = Server(workdir, workers, workdir / f"serve-{workers}.log")
            progress(f"servers up: {', '.join(f'--workers {w} at {s.address}' for w, s in servers.items())}")
            for server in servers.values():
                over_grpc(server.address, slices(work, 16))  # warm-up: every worker's cache
            results = {kind: measure(servers, work, args.rounds, kind == "raw") for kind in CLIENT_KINDS}
        finally:
            for server in servers.values():
                server.stop()
        result_json = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "commit": commit(),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            "load_average_before": load_before,
            "load_average_after": load(),
            "files": len(files),
            "rows": sum(f.rows for f in files),
            "calls_per_round": len(work),
            "rounds": args.rounds,
            "clients": results,
        }
        write_results(args.out, result_json)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
