"""The `lakeprune` console command: assembles the command groups, sets up logging and sends the
output of a Spark JVM a command starts to a log file."""

from __future__ import annotations

from typing import Annotated

import typer

from builder.spark_output import cli_log_file, log_spark_output_to
from pruner.cli import (
    advise_cmds,
    engine_cmds,
    index_cmds,
    prune_cmds,
    serve_cmds,
    spark_job_cmds,
    table_cmds,
    write_cmds,
)
from pruner.cli.common import setup_logging

app = typer.Typer(
    name="lakeprune",
    help="Hudi-style indexes for Parquet data lakes, and the pruning sidecar for Trino and Presto.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(table_cmds.app, name="table")
write_cmds.register(app)
index_cmds.register(app)
prune_cmds.register(app)
engine_cmds.register(app)
serve_cmds.register(app)
spark_job_cmds.register(app)
advise_cmds.register(app)


@app.callback()
def main(
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Debug logging, and Spark's own output on the terminal.")
    ] = False,
) -> None:
    setup_logging(verbose)
    # Commands that start Spark print lakeprune's progress and results; the JVM's warnings and
    # log4j lines go to a log file (named if the command fails), or to $LAKEPRUNE_SPARK_LOG.
    log_spark_output_to(cli_log_file(verbose))


if __name__ == "__main__":
    app()
