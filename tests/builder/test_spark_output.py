"""Where the Spark JVM's own output goes: a process launched inside `redirected_jvm_output` writes
to the log file and the caller keeps its terminal; the default directory keeps the newest logs; a
`lakeprune` command that starts Spark prints lakeprune's lines only, and names the log when it
fails after Spark started."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builder import spark_output
from builder.spark_output import (
    KEPT_LOGS,
    cli_log_file,
    default_log_file,
    log_spark_output_to,
    redirected_jvm_output,
    written_spark_log,
)
from pruner.engines.cache import CacheLayout

LAKEPRUNE = str(Path(sys.executable).with_name("lakeprune"))
# What Spark's JVM prints on its own when it starts and logs (none of it is lakeprune's).
JVM_NOISE = ("log4j", "WARN ", "WARNING:", "Setting default log level", "NativeCodeLoader")


@pytest.fixture
def named_log(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "logs" / "spark.log"
    log_spark_output_to(path)
    yield path
    log_spark_output_to(None)


def test_a_process_launched_in_the_block_writes_to_the_log_and_the_caller_keeps_its_own(
    named_log: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    assert written_spark_log() is None  # nothing launched yet
    with redirected_jvm_output() as path:
        subprocess.run(["sh", "-c", "echo jvm-out; echo jvm-err >&2"], check=True)
    print("caller-out")
    print("caller-err", file=sys.stderr)
    assert path == named_log
    assert named_log.read_text().split() == ["jvm-out", "jvm-err"]
    captured = capfd.readouterr()
    assert "caller-out" in captured.out and "caller-err" in captured.err
    assert "jvm" not in captured.out + captured.err
    assert written_spark_log() == named_log
    log_spark_output_to(named_log)  # a new command: the JVM it did not launch is not its log
    assert written_spark_log() is None


def test_without_a_named_log_nothing_is_redirected(capfd: pytest.CaptureFixture[str]) -> None:
    log_spark_output_to(None)
    with redirected_jvm_output() as path:
        subprocess.run(["sh", "-c", "echo on-the-terminal >&2"], check=True)
    assert path is None and "on-the-terminal" in capfd.readouterr().err


def test_the_cli_log_file_and_the_kept_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKEPRUNE_CACHE", str(tmp_path))
    monkeypatch.delenv(spark_output.LOG_ENV, raising=False)
    logs = tmp_path / "logs"
    logs.mkdir()
    for n in range(KEPT_LOGS + 5):
        old = logs / f"spark-old-{n:02d}.log"
        old.write_text("x")
        os.utime(old, (1_000_000 + n, 1_000_000 + n))
    other = logs / "unrelated.txt"
    other.write_text("kept")
    fresh = cli_log_file(verbose=False)
    assert fresh is not None and fresh.parent == logs and fresh.name.startswith("spark-")
    remaining = sorted(p.name for p in logs.glob("spark-*.log"))
    assert remaining == [f"spark-old-{n:02d}.log" for n in range(6, KEPT_LOGS + 5)]  # newest 19
    assert other.exists()
    assert cli_log_file(verbose=True) is None
    monkeypatch.setenv(spark_output.LOG_ENV, str(tmp_path / "mine.log"))
    assert cli_log_file(verbose=False) == tmp_path / "mine.log"
    assert default_log_file().parent == logs


@pytest.mark.spark
def test_a_command_that_starts_spark_prints_only_lakeprunes_lines(tmp_path: Path) -> None:
    env = {**os.environ, "LAKEPRUNE_CACHE": str(tmp_path / "cache")}
    env.pop(spark_output.LOG_ENV, None)
    # The new cache shares the downloaded jars (`m2/`): an empty one would fetch ~670 MB of S3A jars
    # first. Its `logs/` is its own, the directory under test.
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "m2").symlink_to(CacheLayout.default().m2, target_is_directory=True)
    table = str(tmp_path / "t")
    pq.write_table(
        pa.table({"id": pa.array([1, 2], pa.int64()), "note": ["a", "b"]}), tmp_path / "in.parquet"
    )
    pq.write_table(pa.table({"other": [1]}), tmp_path / "wrong.parquet")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [LAKEPRUNE, *args], check=False, env=env, capture_output=True, text=True, timeout=600
        )

    assert (
        run("table", "create", table, "--schema", "id bigint, note string", "--record-key", "id").returncode
        == 0
    )
    done = run("write", table, "--input", str(tmp_path / "in.parquet"), "--mode", "insert")
    assert done.returncode == 0, done.stderr
    assert "committed" in done.stdout
    output = done.stdout + done.stderr
    assert not [noise for noise in JVM_NOISE if noise in output], output
    (log,) = (tmp_path / "cache" / "logs").glob("spark-*.log")
    assert "log4j" in log.read_text()  # the JVM's start-up lines went there
    assert "Spark's own output" not in output  # named on failure only

    failed = run("write", table, "--input", str(tmp_path / "wrong.parquet"), "--mode", "insert")
    assert failed.returncode == 2
    lines = [line for line in failed.stderr.splitlines() if line.strip()]
    assert lines[0].startswith("error: input is missing column(s) id, note")
    assert "Traceback" not in failed.stderr and not [n for n in JVM_NOISE if n in failed.stderr]
    (named,) = [line for line in lines if line.startswith("Spark's own output is in ")]
    assert Path(named.removeprefix("Spark's own output is in ")).read_text().count("log4j") >= 1
