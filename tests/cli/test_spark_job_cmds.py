"""`lakeprune spark-job`: the job file it prints is the command line as a script spark-submit
accepts, and `--jars` lists lakeprune's Spark jar and the S3A jars (from lakeprune's cache) for
spark-submit's `--jars`. The
job file running on a cluster is `tests/builder/test_cluster.py`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from builder.object_stores import S3A_ARTIFACTS
from builder.spark_source import spark_jar
from tests.cli.test_cli import lakeprune


def test_the_job_file_is_the_command_line() -> None:
    job = Path(lakeprune("spark-job").strip())
    assert job.suffix == ".py"
    assert job.is_file()
    shown = subprocess.run([sys.executable, str(job), "--help"], capture_output=True, text=True, check=True)
    assert "Usage: lakeprune" in shown.stdout
    assert "spark-job" in shown.stdout


def test_jars_are_the_spark_jar_and_the_s3a_jars_as_a_jars_list() -> None:
    jars = [Path(j) for j in lakeprune("spark-job", "--jars").strip().split(",")]
    assert [j.name for j in jars] == [
        spark_jar().name,
        *(f"{a.artifact}-{a.version}.{a.packaging}" for a in S3A_ARTIFACTS),
    ]
    assert all(j.is_file() for j in jars)
