"""Helpers of the racing-writer tests (`tests/builder/test_commit_race.py`,
`tests/builder/test_racing_writers.py`): writer processes that run rounds in step with the test
through barriers and report each round's outcome on a queue, started together and always stopped
within a bound (the barriers aborted when the test fails, so no writer waits out its timeout)."""

from __future__ import annotations

import queue
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Barrier
from typing import Any

import pytest


@contextmanager
def racing(writers: Sequence[BaseProcess], barriers: Sequence[Barrier], wait_s: float) -> Iterator[None]:
    """Start the writers; after the block, join them (killing one that does not end within
    `wait_s`) and check that each exited cleanly."""
    for process in writers:
        process.start()
    finished = False
    try:
        yield
        finished = True
    finally:
        if not finished:  # let the writers stop at their next wait instead of timing out
            for barrier in barriers:
                barrier.abort()
        for process in writers:
            process.join(timeout=wait_s)
            if process.is_alive():
                process.kill()
                process.join()
    assert [p.exitcode for p in writers] == [0] * len(writers)


def reported(results: Any, round_no: int, wait_s: float) -> tuple[str, str]:
    """The next (writer, outcome) a writer put on `results`, which must be of round `round_no`."""
    try:
        got_round, writer, outcome = results.get(timeout=wait_s)
    except queue.Empty:
        pytest.fail(f"round {round_no}: a writer did not report")
    assert got_round == round_no, (got_round, writer, outcome)
    return writer, outcome
