"""`lakeprune advise TABLE`: the index advisor over the sidecar's workload log
(`pruner.advisor`). Prints the `CREATE INDEX` statements ranked by the bytes they would save over
the logged prunes against what their build reads, each with its evidence, and the defined indexes
that pruned no file (drop candidates); `--apply N` then runs the first N recommendations' statements
(the build is a Spark job, as `lakeprune sql` runs it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table as RichTable

from pruner.advisor.advise import Advice, advise, statements
from pruner.advisor.evidence import DEFAULT_SAMPLE_FILES
from pruner.advisor.workload import WorkloadLog, default_directory
from pruner.cli.common import JsonOption, TableArgument, WarehouseOption, cli_command, console, resolve
from pruner.errors import InvalidInputError
from pruner.serving.config import ServeConfig
from pruner.table.table import LakeTable


def advise_command(
    table: TableArgument,
    warehouse: WarehouseOption = None,
    workload: Annotated[
        Path | None,
        typer.Option(help="The sidecar's workload log directory (default: its default directory)."),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(help="The sidecar's config file: read its workload.directory."),
    ] = None,
    sample_files: Annotated[
        int, typer.Option(min=1, help="Data files read to estimate what each index would keep.")
    ] = DEFAULT_SAMPLE_FILES,
    apply: Annotated[
        int, typer.Option(min=0, help="Run the first N recommendations' statements (builds the indexes).")
    ] = 0,
    as_json: JsonOption = False,
) -> None:
    """Recommend indexes for TABLE from the prunes the sidecar logged, and name unused ones."""
    if workload is not None and config is not None:
        raise InvalidInputError("--workload and --config exclude each other")
    directory = workload if workload is not None else _configured_directory(config)
    location = resolve(table, warehouse)
    opened = LakeTable.open(location)
    entries, unreadable = WorkloadLog(directory).entries(opened.storage.uri)
    advice = advise(opened, entries, sample_files)
    if unreadable:
        advice = Advice(
            advice.table,
            advice.prunes,
            advice.files,
            advice.recommendations,
            advice.unused,
            (*advice.notes, f"{unreadable} line(s) of the log could not be read and were skipped"),
        )
    if as_json:
        typer.echo(json.dumps({"workload": str(directory), **advice.to_json()}, indent=2))
    else:
        _show(advice, directory)
    if apply:
        _apply(location, statements(advice.recommendations, apply))


def _configured_directory(config: Path | None) -> Path:
    if config is None:
        return default_directory()
    settings = ServeConfig.load(config).workload
    return Path(settings.directory) if settings.directory else default_directory()


def _show(advice: Advice, directory: Path) -> None:
    console.print(
        f"table {advice.table}: {advice.prunes} logged prune(s) in {directory}, {advice.files} data file(s)",
        highlight=False,
    )
    if advice.recommendations:
        grid = RichTable(
            "#", "statement", "prunes", "files now", "files with", "saved", "build", "upkeep", "size"
        )
        for r in advice.recommendations:
            grid.add_row(
                str(r.rank),
                "\n".join(r.statements),
                str(r.prunes_served),
                f"{r.files_now:,.1f}",
                f"{r.files_with:,.1f}",
                _bytes(r.bytes_saved),
                _bytes(r.build_bytes),
                _bytes(r.upkeep_bytes),
                _bytes(r.index_bytes),
            )
        console.print(grid)
        for r in advice.recommendations:
            for line in r.evidence:
                console.print(f"  [{r.rank}] {line}", highlight=False, markup=False)
    else:
        console.print("no index would pay for itself on the logged prunes", highlight=False)
    for unused in advice.unused:
        console.print(
            f"unused: {unused.index_type} index {unused.name} pruned no file in {unused.prunes} logged "
            f"prune(s); to drop it: {unused.statement}",
            highlight=False,
            markup=False,
        )
        for reason, count in unused.reasons:
            console.print(f"  {count}x: {reason}", highlight=False, markup=False)
    for note in advice.notes:
        console.print(f"note: {note}", highlight=False, markup=False)


def _apply(location: str, to_run: list[str]) -> None:
    from builder.index_build import execute

    if not to_run:
        console.print("nothing to apply", highlight=False)
        return
    for number, statement in enumerate(to_run, start=1):
        console.print(f"[{number}/{len(to_run)}] {statement}", highlight=False, markup=False)
        result = execute(location, statement, build=True)
        console.print(f"  {result.message}", highlight=False, markup=False)


def _bytes(count: float) -> str:
    size = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or unit == "GiB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{size:,.1f} GiB"


def register(root: typer.Typer) -> None:
    root.command("advise")(cli_command(advise_command))
