"""Helpers that any benchmark script may share: `progress`, a line on stderr stamped with the
seconds since the benchmark started, so that the figures on stdout and in `bench/results/` stay
apart from the running commentary; `write_results`, a bench's results as JSON in `bench/results/`
and on stdout."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

STARTED = time.monotonic()


def progress(message: str) -> None:
    print(f"[{time.monotonic() - STARTED:7.1f} s] {message}", file=sys.stderr, flush=True)


def write_results(path: Path, results: dict[str, Any]) -> None:
    """A bench's results as JSON at `path` (directories made), and on stdout."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
