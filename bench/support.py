"""Helpers that any benchmark script may share: `progress`, a line on stderr stamped with the
seconds since the benchmark started, so that the figures on stdout and in `bench/results/` stay
apart from the running commentary; `write_results`, a bench's results as JSON in `bench/results/`
and on stdout (as JSON or its summary); `shape_medians`, the median time of a prune per predicate shape of
`prune_shapes`; `measure_in`, one measurement in a child process that imports another code tree's
`pruner` (for before / after comparisons in one run); `table_bench_parser`, the command line a bench
over one generated table starts from (`--rows --files --repeat --keep --out`), and its
`scratch_directory`, a temporary directory removed at the end unless kept; `build_in_child`, a
function (Spark's table building) run in a spawned child process so that its JVM is gone before
anything is timed; `serving_sidecar`, an in-process sidecar serving one warehouse over gRPC and
Thrift on loopback for the length of a `with` block."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pruner.sidecar import Sidecar

STARTED = time.monotonic()


def progress(message: str) -> None:
    print(f"[{time.monotonic() - STARTED:7.1f} s] {message}", file=sys.stderr, flush=True)


def write_results(
    path: Path, results: dict[str, Any], summary: Callable[[dict[str, Any]], None] | None = None
) -> None:
    """A bench's results as JSON at `path` (directories made), and on stdout: `summary(results)`,
    or the JSON itself."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    if summary is not None:
        summary(results)
    else:
        print(json.dumps(results, indent=2))


def measure_in(tree: Path, script: str, *args: str) -> dict[str, Any]:
    """Run `script` (a bench file) with `args` in a child process whose `pruner` is `tree`'s (the
    bench modules come from the script's folder) and return the JSON on its last line of output."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, script, *args], env=env, cwd=tree, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"measuring {tree} failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def shape_medians(rows: int, plan: Callable[[Any], object], per_shape: int) -> dict[str, float]:
    """Median milliseconds of `plan(predicate)` over `per_shape` predicates of each shape of
    `prune_shapes.predicate_shapes(rows)`, drawn from one seed (every tree plans the same ones)."""
    from prune_shapes import predicate_shapes

    rng = random.Random(7)
    medians: dict[str, float] = {}
    for name, shape in predicate_shapes(rows).items():
        samples = []
        for _ in range(per_shape):
            predicate = shape(rng)
            start = time.perf_counter()
            plan(predicate)
            samples.append((time.perf_counter() - start) * 1000)
        medians[name] = statistics.median(samples)
    return medians


def table_bench_parser(
    doc: str | None, rows: int, files: int, repeat: int, repeat_help: str, out: Path
) -> argparse.ArgumentParser:
    """The options of a bench over a generated table of `--rows` rows in ~`--files` files, timed
    `--repeat` times, that works in a temporary directory (`--keep` keeps it) and writes `--out`; the
    module docstring `doc` is its description. A bench adds its own options."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=rows)
    parser.add_argument("--files", type=int, default=files, help="files to aim for (~)")
    parser.add_argument("--repeat", type=int, default=repeat, help=repeat_help)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--out", type=Path, default=out)
    return parser


@contextmanager
def scratch_directory(prefix: str, keep: bool) -> Iterator[Path]:
    """A new temporary directory, removed on exit unless `keep` (then its path is shown)."""
    directory = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield directory
    finally:
        if keep:
            progress(f"kept {directory}")
        else:
            shutil.rmtree(directory, ignore_errors=True)


def build_in_child(target: Callable[..., None], *args: Any) -> float:
    """Run `target(*args)` in a spawned child process (Spark's JVM exits with it); its seconds."""
    begin = time.perf_counter()
    child = multiprocessing.get_context("spawn").Process(target=target, args=args)
    child.start()
    child.join()
    if child.exitcode != 0:
        raise SystemExit(f"building the tables failed (exit code {child.exitcode})")
    return time.perf_counter() - begin


@contextmanager
def serving_sidecar(
    schema: str, warehouse: Path, workload: Path | None = None, prune_deadline_seconds: float | None = None
) -> Iterator[Sidecar]:
    """A sidecar in this process serving `warehouse` as `schema` (gRPC and Thrift on free loopback
    ports, no metrics port), ready; stopped on exit. Its workload log goes to `workload` (default:
    off, so that a bench leaves nothing in the user's state directory); `prune_deadline_seconds`
    replaces the default deadline of one prune's planning."""
    from pruner.serving.config import Limits, ServeConfig, WorkloadSettings
    from pruner.sidecar import Sidecar

    logged = WorkloadSettings(directory=str(workload)) if workload else WorkloadSettings(enabled=False)
    config = ServeConfig(
        {schema: str(warehouse)},
        host="127.0.0.1",
        grpc_port=0,
        thrift_port=0,
        metrics_port=None,
        workload=logged,
        limits=Limits()
        if prune_deadline_seconds is None
        else Limits(prune_deadline_seconds=prune_deadline_seconds),
    )
    sidecar = Sidecar(config).start()
    try:
        if not sidecar.wait_ready(120):
            raise SystemExit("the sidecar did not load its catalog")
        yield sidecar
    finally:
        sidecar.stop(2)
