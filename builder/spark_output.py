"""Where the Spark JVM's own output goes. The JVM that PySpark launches inherits the Python
process's stdout and stderr, so its start-up notices (module warnings, log4j's profile banner), its
log4j console lines and its stack traces land in the middle of a command's progress and results.
The CLI names a log file before a command runs (`log_spark_output_to(cli_log_file(...))`:
`LAKEPRUNE_SPARK_LOG`, else a new file under the cache directory); `redirected_jvm_output` launches the
JVM — and the Python workers it starts — with stdout and stderr pointing at that file, while the
Python process keeps its own. The CLI names the file when a command fails. The default directory
keeps the newest `KEPT_LOGS` files. Nothing here imports Spark."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

LOG_ENV = "LAKEPRUNE_SPARK_LOG"
KEPT_LOGS = 20


@dataclass
class _Target:
    """The log file this process's CLI named, and the file a JVM was launched with since then
    (module state without a `global` statement)."""

    path: Path | None = None
    launched: Path | None = None


_named = _Target()


def default_log_file() -> Path:
    """A new file name under `$LAKEPRUNE_CACHE` (default `~/.cache/lakeprune`) `/logs/`, by time and
    pid; the directory's older Spark logs are removed but for the newest `KEPT_LOGS - 1`."""
    cache = Path(os.environ.get("LAKEPRUNE_CACHE") or Path.home() / ".cache" / "lakeprune")
    directory = cache / "logs"
    _remove_old_logs(directory)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return directory / f"spark-{stamp}-{os.getpid()}.log"


def log_spark_output_to(path: Path | None) -> None:
    """Send the output of a JVM started from now on in this process to `path` (None: the terminal)."""
    _named.path = path
    _named.launched = None


def spark_log_file() -> Path | None:
    """The file a JVM started now would write its output to, if any."""
    return _named.path


def cli_log_file(verbose: bool) -> Path | None:
    """Where a CLI command sends Spark's output: `$LAKEPRUNE_SPARK_LOG`, else a new default file;
    the terminal (None) with `--verbose`."""
    if verbose:
        return None
    named = os.environ.get(LOG_ENV)
    return Path(named) if named else default_log_file()


def written_spark_log() -> Path | None:
    """The log file of the JVM launched since the file was named, if it wrote to it (what a
    failed command points at; a JVM that was already running logs elsewhere)."""
    path = _named.launched
    try:
        return path if path is not None and path.stat().st_size > 0 else None
    except OSError:
        return None


@contextmanager
def redirected_jvm_output() -> Iterator[Path | None]:
    """Within the block, file descriptors 1 and 2 point at the log file (appended to), so that a JVM
    launched here inherits them; the Python process gets its own back afterwards. Without a log
    file, nothing changes."""
    path = spark_log_file()
    if path is None:
        yield None
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = (os.dup(1), os.dup(2))
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(log, 1)
        os.dup2(log, 2)
        _named.launched = path
        yield path
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, log):
            os.close(fd)


def _remove_old_logs(directory: Path) -> None:
    """Keep the newest `KEPT_LOGS - 1` Spark logs of `directory`, so a new one makes `KEPT_LOGS`
    (another command may remove the same files at the same time)."""
    dated = []
    for log in directory.glob("spark-*.log"):
        try:
            dated.append((log.stat().st_mtime, log))
        except OSError:
            continue
    for _, old in sorted(dated, reverse=True)[KEPT_LOGS - 1 :]:
        old.unlink(missing_ok=True)
