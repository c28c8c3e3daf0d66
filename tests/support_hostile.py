"""Helpers of the hostile-input suites (`tests/pruner/service/test_hostile_grpc.py`,
`tests/pruner/thrift/test_hostile_thrift.py`): the input sizes, the server log as `lakeprune serve`
writes it, an `Attacker` process that runs attacks while a normal request is timed alongside,
bounds on what an answer may echo, and the line count of `/metrics`."""

from __future__ import annotations

import importlib
import io
import logging
import multiprocessing
import os
import statistics
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

import pytest

from pruner.bounded import MESSAGE_CHARS
from pruner.serving.logs import PLAIN_FORMAT
from tests.support_http import metrics_text

T = TypeVar("T")

SIZES = [pytest.param(1024, id="1KB"), pytest.param(64 * 1024, id="64KB"), pytest.param(1024**2, id="1MB")]
LATENCY_FACTOR = 3.0
# Medians of a few milliseconds triple with any scheduling noise on 2 cores; a server whose normal
# calls stay within this under attack is not being starved by it.
LATENCY_FLOOR = 0.025
BASELINE_SAMPLES = 5
MIN_CALLS = 5
ATTACK_SECONDS = 0.5
STALL_FACTOR = 20.0
STALL_FLOOR = 0.25
# The share of calls under attack that may stall: one in a hundred, so that in a long attack (a
# thousand calls over ten seconds) one call held by the other test worker's JVM or a collector pause
# is not the server's fault, while in a short one (a few dozen calls) a single stall still fails.
STALL_SHARE = 0.01
ATTEMPTS = 2
# What an error message may be at most: the bound, which holds with the "…(N chars)" marker and
# any prefix of the wire layer ("GetSplits failed: ") included.
ECHO_LIMIT = MESSAGE_CHARS
# A request log line is a dozen `key=value` fields, each value at most 200 characters.
LOG_LINE_LIMIT = 3000


@contextmanager
def server_log() -> Iterator[io.StringIO]:
    """The sidecar's INFO log in the plain format `lakeprune serve` writes, captured."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter(PLAIN_FORMAT))
    logger = logging.getLogger("pruner")
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield stream
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)


def assert_lines_bounded(log: io.StringIO) -> None:
    longest = max((len(line) for line in log.getvalue().splitlines()), default=0)
    assert longest <= LOG_LINE_LIMIT, f"a log line of {longest:,} characters"


def timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


class Attacker:
    """A process of its own that runs attacks, as a remote client would. Its own work neither
    holds the test process's interpreter (where the sidecar runs) nor, at the lowest CPU priority,
    takes a core from it: what the normal request competes with is the sidecar's handling of the
    attack, as on a server whose attackers are elsewhere. An attack is a module-level function of
    a test module, imported in the attacker at start (`module`)."""

    def __init__(self, module: str) -> None:
        self._pool = ProcessPoolExecutor(
            1, mp_context=multiprocessing.get_context("spawn"), initializer=os.nice, initargs=(19,)
        )
        self._pool.submit(_load, module).result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def served_throughout(
        self, normal: Callable[[], object], attack: Callable[..., T], *args: object
    ) -> list[T]:
        """Run `attack(*args)` in the attacker, again and again for `ATTACK_SECONDS` (at least
        once), while calling `normal` here; the attack's result of every round (its exception is
        raised). The latency of `normal` is measured first, as the median of `BASELINE_SAMPLES`
        calls. Under attack, the median of the normal calls must stay within `LATENCY_FACTOR`
        times that (or `LATENCY_FLOOR` seconds if more), and at most `STALL_SHARE` of the calls
        may stall (`STALL_FACTOR` times, or `STALL_FLOOR` seconds if more): one call can wait for
        the GIL or for a busy machine longer than 3 x a few milliseconds without the server being
        at fault, and a server that one attack request blocks stalls a call per request. A
        measurement that breaks a bound is repeated, up to `ATTEMPTS` in all: a shared
        host's noise (another job's burst, a collector pause) does not recur on cue, a server
        starved by the attack is slow every time."""
        rounds: list[T] = []
        verdicts: list[str] = []
        while len(verdicts) < ATTEMPTS:
            verdict = self._measure(normal, attack, args, rounds)
            if verdict is None:
                return rounds
            verdicts.append(verdict)
        pytest.fail("; then ".join(verdicts))

    def _measure(
        self,
        normal: Callable[[], object],
        attack: Callable[..., T],
        args: tuple[object, ...],
        rounds: list[T],
    ) -> str | None:
        """One measurement of `served_throughout`: the attack's rounds are added to `rounds`;
        the bound the normal calls broke, or None."""
        normal()  # warm: connections, caches
        baseline = statistics.median(timed(normal) for _ in range(BASELINE_SAMPLES))
        future = self._pool.submit(_rounds, attack, args)
        latencies: list[float] = []
        while not future.done() or len(latencies) < MIN_CALLS:
            latencies.append(timed(normal))
        rounds.extend(future.result())
        return verdict(baseline, latencies)


def verdict(baseline: float, latencies: list[float]) -> str | None:
    """The bound of `Attacker.served_throughout` that the normal calls' `latencies` under attack
    broke, given their median `baseline` before it; None when they held."""
    shown = f"{len(latencies)} calls under attack, median of {baseline * 1000:.1f} ms before"
    typical = statistics.median(latencies)
    if typical > max(LATENCY_FACTOR * baseline, LATENCY_FLOOR):
        return f"median {typical * 1000:.1f} ms: {shown}"
    stall = max(STALL_FACTOR * baseline, STALL_FLOOR)
    stalled = sorted(latency for latency in latencies if latency > stall)
    if len(stalled) > STALL_SHARE * len(latencies):
        slowest = ", ".join(f"{latency * 1000:.1f}" for latency in stalled[-3:])
        return f"{len(stalled)} took over {stall * 1000:.0f} ms (slowest {slowest} ms): {shown}"
    return None


def _load(module: str) -> None:
    importlib.import_module(module)


def _rounds(attack: Callable[..., T], args: tuple[object, ...]) -> list[T]:
    """In the attacker: `attack(*args)` until `ATTACK_SECONDS` have passed, at least once."""
    until = time.monotonic() + ATTACK_SECONDS
    rounds = [attack(*args)]
    while time.monotonic() < until:
        rounds.append(attack(*args))
    return rounds


def metrics_lines(port: int | None) -> int:
    assert port is not None
    return len(metrics_text(port).splitlines())
