"""Shared CLI plumbing: consoles, logging set-up, table location options, and `cli_command`, which
turns a `LakepruneError` (or a Spark analysis error about the user's input) into a one-line
`error: ...` on stderr and exit code 2 instead of a traceback, and after any failure names the log
file the Spark JVM wrote its own output to (`builder.spark_output`)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Annotated, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.logging import RichHandler
from rich.markup import escape

from builder.spark_output import written_spark_log
from pruner.cli.spark_errors import analysis_error
from pruner.errors import LakepruneError
from pruner.table.table import table_location

console = Console()
err_console = Console(stderr=True)
USER_ERROR_EXIT = 2

P = ParamSpec("P")
R = TypeVar("R")

WarehouseOption = Annotated[
    str | None,
    typer.Option("--warehouse", "-w", help="Warehouse root; TABLE is then a table name under it."),
]
TableArgument = Annotated[str, typer.Argument(help="Table path or URI (or a name, with --warehouse).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a human summary.")]


def setup_logging(verbose: bool = False) -> None:
    handler = RichHandler(console=err_console, show_path=False, show_time=False, markup=False)
    logging.basicConfig(level=logging.WARNING, format="%(message)s", handlers=[handler], force=True)
    for name in ("builder", "pruner"):
        logging.getLogger(name).setLevel(logging.DEBUG if verbose else logging.INFO)


def resolve(table: str, warehouse: str | None) -> str:
    return table_location(table, warehouse)


def print_error(message: str) -> None:
    """`error: <message>` on stderr, the message printed as it is: unescaped, rich would take text
    in brackets (pyarrow's `[errno 2]`, Spark's `[FAILED_READ_FILE]`) for markup and drop it."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)


def point_at_spark_log() -> None:
    """Name the file the Spark JVM wrote its own output to, if it wrote any (after a failure)."""
    log = written_spark_log()
    if log is not None:
        err_console.print(
            f"Spark's own output is in {escape(str(log))}", style="dim", highlight=False, soft_wrap=True
        )


def cli_command(fn: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except LakepruneError as exc:
            print_error(str(exc))
            point_at_spark_log()
            raise typer.Exit(USER_ERROR_EXIT) from None
        except Exception as exc:
            message = analysis_error(exc)
            if message is None:
                point_at_spark_log()
                raise
            print_error(message)
            point_at_spark_log()
            raise typer.Exit(USER_ERROR_EXIT) from None

    return wrapper
