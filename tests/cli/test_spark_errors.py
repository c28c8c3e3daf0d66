"""pruner.cli.spark_errors without a JVM: Spark's FAILED_READ_FILE is found on a Py4JJavaError's
cause chain or on a captured exception, attributed to the user's input only when the file it names
is inside the input, and summarised in one line; every other failure is left alone."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from pruner.cli.spark_errors import read_failure, unreadable_input
from pruner.storage import Storage


@dataclass
class _Throwable:
    """A JVM exception as py4j shows it; only SparkThrowables have a condition."""

    message: str
    cause: _Throwable | None = None

    def getMessage(self) -> str:  # noqa: N802 - the Java method's name
        return self.message

    def getCause(self) -> _Throwable | None:  # noqa: N802
        return self.cause


@dataclass
class _SparkThrowable(_Throwable):
    condition: str = ""
    path: str = ""

    def getCondition(self) -> str:  # noqa: N802
        return self.condition

    def getMessageParameters(self) -> dict[str, str]:  # noqa: N802
        return {"path": self.path} if self.path else {}


class _Py4JJavaError(Exception):
    """What `df.count()` raises: the JVM exception is `java_exception`."""

    def __init__(self, java_exception: _Throwable) -> None:
        super().__init__("An error occurred while calling o123.count.")
        self.java_exception = java_exception


class _CapturedError(Exception):
    """One of PySpark's converted exceptions: condition and parameters on the exception itself."""

    def __init__(self, condition: str, path: str) -> None:
        super().__init__(f"[{condition}] Encountered error while reading file {path}.\n\nJVM stacktrace: ...")
        self._condition, self._path = condition, path

    def getCondition(self) -> str:  # noqa: N802
        return self._condition

    def getMessageParameters(self) -> dict[str, str]:  # noqa: N802
        return {"path": self._path}


def _decode_failure(path: str) -> _SparkThrowable:
    return _SparkThrowable(
        f"[FAILED_READ_FILE.NO_HINT] Encountered error while reading file {path}.",
        _Throwable(
            "java.io.IOException: could not read page Page [...] in col [city]",
            _Throwable("could not read page Page [...] in col [city]", _Throwable("FAILED_TO_UNCOMPRESS(5)")),
        ),
        condition="FAILED_READ_FILE.NO_HINT",
        path=path,
    )


def test_a_read_failure_at_the_top_or_under_a_job_abort(tmp_path: Path) -> None:
    path = f"file://{tmp_path}/in/part%20one.parquet"
    for top in [
        _decode_failure(path),
        _SparkThrowable("Job aborted due to stage failure", _decode_failure(path), condition="", path=""),
    ]:
        failure = read_failure(_Py4JJavaError(top))
        assert failure is not None
        assert failure.path == path and failure.shown_path == f"{tmp_path}/in/part one.parquet"
        assert failure.reason == "could not read page Page [...] in col [city]: FAILED_TO_UNCOMPRESS(5)"


def test_a_captured_exception() -> None:
    failure = read_failure(_CapturedError("FAILED_READ_FILE.CANNOT_READ_FILE_FOOTER", "s3a://b/in/x.parquet"))
    assert failure is not None and failure.path == "s3a://b/in/x.parquet"
    assert failure.reason.startswith("[FAILED_READ_FILE.CANNOT_READ_FILE_FOOTER] Encountered error")
    assert "JVM stacktrace" not in failure.reason


@pytest.mark.parametrize(
    "exc",
    [
        ValueError("a bug"),
        _Py4JJavaError(_Throwable("java.lang.NullPointerException", _Throwable("deeper"))),
        _Py4JJavaError(
            _SparkThrowable("lost executor", condition="TASK_FAILED", path="file:///in/a.parquet")
        ),
        _Py4JJavaError(_SparkThrowable("no path", condition="FAILED_READ_FILE.NO_HINT")),
        _CapturedError("DIVIDE_BY_ZERO", "file:///in/a.parquet"),
    ],
)
def test_other_failures_are_not_read_failures(exc: Exception) -> None:
    assert read_failure(exc) is None


@pytest.mark.parametrize(
    ("spark_path", "inside"),
    [
        ("file://{input}", True),
        ("file://{input}/part-0.parquet", True),
        ("file:{input}/sub/part-0.parquet", True),
        ("file://{input}-other/part-0.parquet", False),  # a sibling whose name starts the same
        ("file:///elsewhere/table/part-0.parquet", False),  # e.g. a file of the table
    ],
)
def test_attribution_to_a_local_input(tmp_path: Path, spark_path: str, inside: bool) -> None:
    source = Storage.from_uri(str(tmp_path / "input"))
    error = _Py4JJavaError(_decode_failure(spark_path.format(input=tmp_path / "input")))
    assert (unreadable_input(error, source) is not None) == inside


def test_attribution_to_an_object_store_input() -> None:
    source = Storage(pafs.LocalFileSystem(), "bucket/in", "s3://bucket/in")  # as from_uri makes it
    assert unreadable_input(_Py4JJavaError(_decode_failure("s3a://bucket/in/p.parquet")), source) is not None
    assert unreadable_input(_Py4JJavaError(_decode_failure("s3a://bucket/out/p.parquet")), source) is None


def test_reasons_stay_one_short_line() -> None:
    long = _SparkThrowable(
        "x",
        _Throwable("line one\nline two " + "y" * 1000),
        condition="FAILED_READ_FILE.NO_HINT",
        path="file:///a",
    )
    failure = read_failure(_Py4JJavaError(long))
    assert failure is not None and "\n" not in failure.reason and len(failure.reason) <= 403
