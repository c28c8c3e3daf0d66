"""The `lakeprune` console command: assembles the command groups and sets up logging."""

from __future__ import annotations

from typing import Annotated

import typer

from pruner.cli import (
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


@app.callback()
def main(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Debug logging.")] = False) -> None:
    setup_logging(verbose)


if __name__ == "__main__":
    app()
