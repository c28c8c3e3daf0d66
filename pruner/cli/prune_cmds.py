"""`lakeprune prune`: plan a prune for a SQL predicate and print the splits (and, with
`--explain`, what each step did and, for each index of the table, how many files it pruned or why
it pruned none). Reads index partitions with pyarrow only; no Spark. With
`--server HOST:PORT`, TABLE is `SCHEMA.TABLE` on a running sidecar: the predicate is translated
here with the schema the sidecar reports, and the sidecar plans the prune; the output is the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table as RichTable

from pruner.cli.common import JsonOption, TableArgument, WarehouseOption, cli_command, console, resolve
from pruner.errors import InvalidInputError
from pruner.planner.prune import prune as prune_table
from pruner.planner.result import PruneResult
from pruner.table.table import LakeTable


def prune(
    table: TableArgument,
    where: Annotated[
        str, typer.Option(help="SQL predicate, e.g. \"city = 'oslo' AND ts >= TIMESTAMP '2026-11-01'\".")
    ],
    snapshot: Annotated[
        str | None, typer.Option(help="Completed instant to prune (default: latest).")
    ] = None,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain", help="Show what each pruning step did, and why each index did or did not prune."
        ),
    ] = False,
    warehouse: WarehouseOption = None,
    as_json: JsonOption = False,
    server: Annotated[
        str | None,
        typer.Option(help="HOST:PORT of a running sidecar; TABLE is then SCHEMA.TABLE there."),
    ] = None,
    token_file: Annotated[
        Path | None, typer.Option(help="With --server: file holding the sidecar's bearer token.")
    ] = None,
    tls_ca: Annotated[
        Path | None, typer.Option(help="With --server: use TLS, trusting this CA certificate (PEM).")
    ] = None,
) -> None:
    """List the files that may hold rows matching a predicate."""
    if server is not None:
        if warehouse is not None:
            raise InvalidInputError("--warehouse and --server exclude each other")
        result = _prune_remote(server, table, where, snapshot, explain or as_json, token_file, tls_ca)
    else:
        if token_file is not None or tls_ca is not None:
            raise InvalidInputError("--token-file and --tls-ca need --server")
        result = prune_table(LakeTable.open(resolve(table, warehouse)), where, snapshot=snapshot)
    _show(result, explain, as_json)


def _prune_remote(
    server: str,
    table: str,
    where: str,
    snapshot: str | None,
    explain: bool,
    token_file: Path | None,
    tls_ca: Path | None,
) -> PruneResult:
    from pruner.client import PruningClient

    schema, dot, name = table.partition(".")
    if not dot or not schema or not name:
        raise InvalidInputError(f"with --server, TABLE is SCHEMA.TABLE, got {table!r}")
    try:
        token = token_file.read_text(encoding="utf-8").strip() if token_file is not None else None
        ca = tls_ca.read_bytes() if tls_ca is not None else None
    except OSError as exc:
        raise InvalidInputError(f"cannot read {exc.filename}: {exc.strerror}") from None
    with PruningClient(server, token=token, tls_root_cert=ca) as client:
        return client.prune(schema, name, where, snapshot=snapshot, explain=explain)


def _show(result: PruneResult, explain: bool, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(result.to_json(), indent=2, default=str))
        return
    console.print(
        f"snapshot {result.snapshot}: {result.files_selected} of {result.files_total} file(s) "
        f"may match {result.predicate}"
    )
    for note in result.widened:
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
        _show_index_report(result)
        console.print(f"storage requests: {result.storage}")


def _show_index_report(result: PruneResult) -> None:
    """Each index of the table: the files it pruned, or why none (one line each, unwrapped)."""
    if not result.index_report:
        return
    console.print("indexes:")
    for entry in result.index_report:
        name = escape(f"{entry.index} ({entry.kind})")
        if entry.why_not is None:
            console.print(f"  {name}: pruned {entry.files_pruned:,} file(s)", soft_wrap=True)
        else:
            console.print(f"  {name}: [yellow]pruned none:[/] {escape(entry.why_not)}", soft_wrap=True)


def register(root: typer.Typer) -> None:
    root.command("prune")(cli_command(prune))
