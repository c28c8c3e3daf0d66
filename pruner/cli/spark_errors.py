"""Spark failures that are the user's input, as one-line messages. Spark reports a bad input path or
an unreadable schema as an `AnalysisException` (its first line is the message), and a file it could
not read while running a job (a corrupt page, a truncated file, a read that failed in storage) as
an error with the condition `FAILED_READ_FILE` and the file's path, which reaches Python as a
`Py4JJavaError` (the condition may sit on a cause, under a "job aborted" wrapper) or as one of
PySpark's captured exceptions. A read failure is the user's only when the file it names is inside
the input they gave; anything else (a bug, a lost executor, a file of the table) is left alone, so
it stays a traceback."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

from pruner.storage import Storage

READ_FAILURE = "FAILED_READ_FILE"  # Spark's condition, e.g. FAILED_READ_FILE.NO_HINT
_MAX_CAUSES = 8
_MAX_REASON = 400


@dataclass(frozen=True)
class ReadFailure:
    """A file Spark could not read: its path as Spark names it, and why (one line)."""

    path: str
    reason: str

    @property
    def shown_path(self) -> str:
        """The path as the user wrote it for local files (Spark says `file:///...`)."""
        parsed = urlparse(self.path)
        return unquote(parsed.path) if parsed.scheme == "file" else self.path


def analysis_error(exc: BaseException) -> str | None:
    """The first line of a Spark AnalysisException (bad input path, unreadable file), else None."""
    try:
        from pyspark.errors import AnalysisException
    except ImportError:  # pragma: no cover - pyspark is a dependency
        return None
    if isinstance(exc, AnalysisException):
        return str(exc).strip().splitlines()[0]
    return None


def unreadable_input(exc: BaseException, source: Storage) -> ReadFailure | None:
    """The read failure `exc` reports, if the file it names is inside `source` (the user's input)."""
    failure = read_failure(exc)
    return failure if failure is not None and _inside(failure.path, source) else None


def read_failure(exc: BaseException) -> ReadFailure | None:
    """Spark's `FAILED_READ_FILE` in `exc` or the JVM exceptions it wraps, else None."""
    condition = _call(exc, "getCondition")
    if isinstance(condition, str) and condition.startswith(READ_FAILURE):  # a captured exception
        parameters = _call(exc, "getMessageParameters") or {}
        lines = str(exc).strip().splitlines()
        return _failure(parameters, lines[0] if lines else condition)
    throwable = getattr(exc, "java_exception", None)  # a Py4JJavaError
    for _ in range(_MAX_CAUSES):
        if throwable is None:
            return None
        condition = _call(throwable, "getCondition")
        if isinstance(condition, str) and condition.startswith(READ_FAILURE):
            return _failure(_call(throwable, "getMessageParameters") or {}, _causes(throwable))
        throwable = _call(throwable, "getCause")
    return None


def _failure(parameters: Any, reason: str) -> ReadFailure | None:
    path = dict(parameters).get("path")
    if not path:
        return None
    reason = " ".join(reason.split())
    if len(reason) > _MAX_REASON:
        reason = reason[:_MAX_REASON] + "..."
    return ReadFailure(str(path), reason)


def _causes(throwable: Any) -> str:
    """The messages of the exceptions under a read failure, outermost first, skipping a wrapper
    whose message only repeats its cause's (`RuntimeException: java.io.IOException: ...`)."""
    messages: list[str] = []
    cause = _call(throwable, "getCause")
    for _ in range(_MAX_CAUSES):
        if cause is None:
            break
        messages.append(str(_call(cause, "getMessage") or _call(cause, "toString") or ""))
        cause = _call(cause, "getCause")
    inner = [*messages[1:], ""][: len(messages)]  # each message's cause's message ("" for the last)
    kept = [m for m, i in zip(messages, inner, strict=True) if m and not (i and i in m)]
    return ": ".join(kept) or "no reason given"


def _call(target: Any, method: str) -> Any:
    """`target.method()`, or None when it has no such method (a JVM object that is not a
    SparkThrowable answers a missing method with a Py4JError)."""
    function = getattr(target, method, None)
    if function is None:
        return None
    try:
        return function()
    except Exception:  # Py4JError; the JVM's answer is only a hint, never worth a second failure
        return None


def _inside(path: str, source: Storage) -> bool:
    """Whether a path Spark names (`file:///in/a.parquet`, `s3a://bucket/in/a.parquet`,
    `hdfs://nn:8020/in/a.parquet`) is `source`'s root or under it."""
    parsed = urlparse(path)
    root = source.root.strip("/")
    candidates = {unquote(parsed.path).strip("/"), unquote(parsed.netloc + parsed.path).strip("/")}
    return any(c == root or c.startswith(f"{root}/") for c in candidates)
