"""Running request work with a deadline. A request's handler hands its work (open the snapshot,
decode, plan) to a bounded pool and waits at most until the request's deadline, or for
`limits.request_timeout_seconds` when the caller set none; then it stops waiting and the request
fails with DEADLINE_EXCEEDED. Python cannot interrupt the work itself: it finishes in the
background and its result is dropped, so the pool is sized like the server's own thread pool and a
flood of hopeless requests queues (and times out) instead of piling up threads. Work cheaper than
the hand-over itself runs in the caller's thread (`run_inline`)."""

from __future__ import annotations

import concurrent.futures
import math
from collections.abc import Callable
from typing import TypeVar

from pruner.serving.errors import DeadlineExceededError

T = TypeVar("T")


class Workers:
    def __init__(self, max_workers: int, default_timeout: float) -> None:
        self.default_timeout = default_timeout
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers, thread_name_prefix="lakeprune-work")

    def timeout(self, remaining: float | None) -> float:
        """Seconds to wait: the caller's remaining time, else the configured default."""
        if remaining is None or math.isinf(remaining) or remaining > 10 * 365 * 86400:
            return self.default_timeout
        return max(remaining, 0.0)

    def run(self, work: Callable[[], T], timeout: float) -> T:
        if timeout <= 0:
            raise DeadlineExceededError("the request's deadline had passed before it could start")
        future = self._pool.submit(work)
        try:
            return future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            if future.done():  # finished after all, or the work's own TimeoutError (storage)
                return future.result()
            future.cancel()
            raise DeadlineExceededError(
                f"the request did not finish within its deadline ({timeout:.3g} s)"
            ) from None

    def run_inline(self, work: Callable[[], T], timeout: float) -> T:
        """`work` in the calling thread, for work cheaper than its hand-over to the pool: the two
        thread switches cost about 1 ms each on a 2-core VM whose other core is busy (ad-hoc
        probes, bench/notes/tpc.md), more than describing a table does. It is refused past its
        deadline as `run` refuses it, but not abandoned at the deadline once started: its storage
        reads have timeouts of their own."""
        if timeout <= 0:
            raise DeadlineExceededError("the request's deadline had passed before it could start")
        return work()

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
