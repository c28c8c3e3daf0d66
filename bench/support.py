"""Helpers that any benchmark script may share. For now, `progress`: a line on stderr stamped with
the seconds since the benchmark started, so that the figures on stdout and in `bench/results/` stay
apart from the running commentary."""

from __future__ import annotations

import sys
import time

STARTED = time.monotonic()


def progress(message: str) -> None:
    print(f"[{time.monotonic() - STARTED:7.1f} s] {message}", file=sys.stderr, flush=True)
