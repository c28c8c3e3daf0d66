"""`lakeprune sql` (CREATE INDEX / DROP INDEX / SHOW INDEXES / REFRESH INDEX) and `lakeprune index
build`. Building an index over existing files runs a Spark job; everything else is metadata only."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table as RichTable

from pruner.cli.common import JsonOption, TableArgument, WarehouseOption, cli_command, console, resolve
from pruner.errors import InvalidInputError
from pruner.identifiers import abbreviate
from pruner.index.sql import parse_statement

app = typer.Typer(help="Build and inspect indexes.", no_args_is_help=True)


def sql(
    statement: Annotated[
        str, typer.Argument(help="CREATE INDEX ..., DROP INDEX ..., SHOW INDEXES ON t or REFRESH INDEX name.")
    ],
    table: Annotated[str | None, typer.Option("--table", "-t", help="Table path or URI.")] = None,
    warehouse: WarehouseOption = None,
    build: Annotated[bool, typer.Option(help="Build a created index for existing data now.")] = True,
    as_json: JsonOption = False,
) -> None:
    """Run an index statement. With --warehouse, the statement's table name selects the table."""
    from builder.index_build import execute

    parsed = parse_statement(statement)
    if table is None:
        if warehouse is None or parsed.table is None:
            raise InvalidInputError(
                "give --table PATH, or --warehouse ROOT with a table name in the statement"
            )
        location = resolve(parsed.table, warehouse)
    else:
        location = resolve(table, warehouse)
    result = execute(location, statement, build=build)
    if as_json:
        typer.echo(json.dumps({"message": result.message, "rows": result.rows}, indent=2))
        return
    if result.rows:
        grid = RichTable("name", "type", "columns", "state", "complete up to", "options")
        for row in result.rows:
            grid.add_row(
                row["name"],
                row["type"],
                ", ".join(row["columns"]),
                row["state"],
                row["complete_up_to"] or "-",
                json.dumps(row["options"]) if row["options"] else "",
            )
        console.print(grid)
    console.print(result.message)


@app.command("build")
@cli_command
def build_index(
    table: TableArgument,
    name: Annotated[str, typer.Argument(help="Name of a defined index.")],
    warehouse: WarehouseOption = None,
) -> None:
    """Build a defined index for existing files, catch up, and mark it ready."""
    from builder.index_build import build_index as run_build

    instant = run_build(resolve(table, warehouse), name)
    shown = abbreviate(name)
    console.print(f"index {shown} is ready" + (f" up to {instant}" if instant else " (it already was)"))


def register(root: typer.Typer) -> None:
    root.command("sql")(cli_command(sql))
    root.add_typer(app, name="index")
