"""`lakeprune prune`: plan a prune for a SQL predicate and print the splits (and, with
`--explain`, what each step did). Reads index partitions with pyarrow only; no Spark."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table as RichTable

from pruner.cli.common import JsonOption, TableArgument, WarehouseOption, cli_command, console, resolve
from pruner.planner.planner import Planner
from pruner.predicate.sql import translate
from pruner.table.table import LakeTable


def prune(
    table: TableArgument,
    where: Annotated[
        str, typer.Option(help="SQL predicate, e.g. \"city = 'oslo' AND ts >= TIMESTAMP '2026-11-01'\".")
    ],
    snapshot: Annotated[
        str | None, typer.Option(help="Completed instant to prune (default: latest).")
    ] = None,
    explain: Annotated[bool, typer.Option("--explain", help="Show what each pruning step did.")] = False,
    warehouse: WarehouseOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the files that may hold rows matching a predicate."""
    lake = LakeTable.open(resolve(table, warehouse))
    translation = translate(where, lake.config.schema)
    result = Planner(lake.snapshot(snapshot)).prune(translation.domain)
    if as_json:
        payload = result.to_json()
        payload["widened"] = list(translation.widened)
        typer.echo(json.dumps(payload, indent=2, default=str))
        return
    console.print(
        f"snapshot {result.snapshot}: {result.files_selected} of {result.files_total} file(s) "
        f"may match {result.predicate}"
    )
    for note in translation.widened:
        console.print(f"[yellow]widened:[/] {note}")
    for split in result.splits:
        console.print(f"  {split.path}  ({split.row_count:,} rows, {split.length:,} bytes)")
    if explain:
        grid = RichTable("step", "files in", "files out", "ms", "note")
        for step in result.explain:
            grid.add_row(
                step.step,
                str(step.files_in),
                str(step.files_out),
                f"{step.millis:.1f}",
                f"[red]fallback: {step.fallback}[/]" if step.fallback else (step.skipped or ""),
            )
        console.print(grid)


def register(root: typer.Typer) -> None:
    root.command("prune")(cli_command(prune))
