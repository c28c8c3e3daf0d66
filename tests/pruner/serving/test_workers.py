"""Running work under a deadline: the caller's remaining time or the configured default, a clear
DEADLINE_EXCEEDED when it passes, and the work's own errors (a storage timeout included) unchanged;
work cheaper than the hand-over runs in the caller's thread, refused as well once its deadline
passed."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator

import pytest

from pruner.serving.errors import DeadlineExceededError, Status, classify
from pruner.serving.workers import Workers


@pytest.fixture
def workers() -> Iterator[Workers]:
    pool = Workers(2, default_timeout=7.0)
    yield pool
    pool.shutdown()


def test_the_default_applies_without_a_deadline(workers: Workers) -> None:
    assert workers.timeout(None) == workers.timeout(math.inf) == workers.timeout(1e300) == 7.0
    assert workers.timeout(0.25) == 0.25 and workers.timeout(-1) == 0.0


def test_results_and_errors_pass_through(workers: Workers) -> None:
    assert workers.run(lambda: 42, 1) == 42
    with pytest.raises(KeyError):
        workers.run(lambda: {}["x"], 1)


def test_a_storage_timeout_is_not_a_deadline(workers: Workers) -> None:
    def slow_disk() -> None:
        raise TimeoutError("read timed out")

    with pytest.raises(TimeoutError) as raised:
        workers.run(slow_disk, 1)
    assert classify(raised.value).status == Status.UNAVAILABLE


def test_a_passed_deadline(workers: Workers) -> None:
    started = time.perf_counter()
    with pytest.raises(DeadlineExceededError, match=r"did not finish within its deadline \(0\.1 s\)"):
        workers.run(lambda: time.sleep(1), 0.1)
    assert time.perf_counter() - started < 0.5
    with pytest.raises(DeadlineExceededError, match="had passed before it could start"):
        workers.run(lambda: 1, 0)
    assert classify(DeadlineExceededError("x")).status == Status.DEADLINE_EXCEEDED


def test_inline_work_runs_in_the_callers_thread_and_is_refused_past_its_deadline(workers: Workers) -> None:
    here = threading.get_ident()
    assert workers.run_inline(threading.get_ident, 1) == here != workers.run(threading.get_ident, 1)
    with pytest.raises(KeyError):
        workers.run_inline(lambda: {}["x"], 1)
    with pytest.raises(DeadlineExceededError, match="had passed before it could start"):
        workers.run_inline(lambda: 1, 0)
