"""`lakeprune spark-job`: what `spark-submit` needs to run a lakeprune command on a cluster. It
prints the path of the job file (`builder/job.py`, the command line as a `.py` file spark-submit
accepts) or, with `--jars`, a `--jars` list: lakeprune's Spark jar (`format("lakeprune")` and its
Spark SQL extensions, which a submitted session can load only from its class path) and the S3A
jars (downloaded into lakeprune's cache first): `spark-submit --master spark://HOST:7077 --jars
"$(lakeprune spark-job --jars)" "$(lakeprune spark-job)" write s3://lake/trips --input
s3://lake/incoming/ --mode upsert`."""

from __future__ import annotations

import importlib.util
import os
from typing import Annotated

import typer

from pruner.cli.common import cli_command
from pruner.errors import LakepruneError

JOB_MODULE = "builder.job"


def job_file() -> str:
    """The path of the job file, as installed (its module is not imported)."""
    spec = importlib.util.find_spec(JOB_MODULE)
    if spec is None or spec.origin is None:
        raise LakepruneError(f"{JOB_MODULE} is not installed beside this lakeprune command")
    return spec.origin


def spark_job(
    jars: Annotated[
        bool,
        typer.Option("--jars", help="Print lakeprune's Spark jar and the S3A jars for --jars."),
    ] = False,
) -> None:
    """Print the file to give spark-submit (or, with --jars, the jars to ship with it)."""
    if not jars:
        typer.echo(job_file())
        return
    from builder.object_stores import s3a_classpath
    from builder.spark_source import spark_jar

    classpath = s3a_classpath()
    if classpath is None:
        raise LakepruneError("the S3A jars could not be downloaded (see the warning above)")
    typer.echo(",".join([str(spark_jar()), *classpath.split(os.pathsep)]))


def register(root: typer.Typer) -> None:
    root.command("spark-job")(cli_command(spark_job))
