"""An exclusive file lock for cache steps that must not run twice at once (unpacking an engine,
installing a Java runtime): the second caller waits, then finds the work done. Temporary
directories left by an interrupted step can be removed safely while the lock is held."""

from __future__ import annotations

import fcntl
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusive(lock_path: Path) -> Iterator[None]:
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def remove_leftovers(parent: Path, prefix: str) -> None:
    """Delete temporary directories `<parent>/<prefix>*` of an earlier, interrupted step."""
    if not parent.is_dir():
        return
    for leftover in parent.glob(f"{prefix}*"):
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
