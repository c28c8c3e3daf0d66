"""`lakeprune table create | adopt | alter-partitioning | show | read | history | check | analyze`:
define a table, adopt a directory of Parquet files as a table in place, change the partitioning of
its future writes (partition evolution), describe it, read a snapshot's rows (printed, or written
to Parquet / CSV), list its instants, verify it (and re-create a missing completion marker),
recompute column stats that lack what optimizers need. Only `adopt` and `analyze` start Spark (to
read the data files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import typer
from rich.markup import escape
from rich.table import Column as RichColumn
from rich.table import Table as RichTable

from pruner.cli.common import (
    JsonOption,
    TableArgument,
    WarehouseOption,
    cli_command,
    console,
    err_console,
    resolve,
)
from pruner.errors import InvalidInputError, InvalidSchemaError
from pruner.storage import Storage
from pruner.table.describe import describe
from pruner.table.describe import history as describe_history
from pruner.table.table import LakeTable

app = typer.Typer(help="Create, describe and read tables.", no_args_is_help=True)
PRINT_LIMIT = 20


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def _parse_properties(items: list[str]) -> dict[str, str]:
    properties = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InvalidInputError(f"--property expects key=value, got {item!r}")
        properties[key.strip()] = value.strip()
    return properties


def _schema_from_file(path: str) -> pa.Schema:
    storage = Storage.from_uri(path)
    if not storage.exists(""):
        raise InvalidInputError(f"--schema-from: {path} does not exist")
    target = storage
    if storage.is_dir(""):
        parquet = [e.rel for e in storage.list_files("", recursive=True) if e.rel.endswith(".parquet")]
        if not parquet:
            raise InvalidInputError(f"--schema-from: no .parquet file under {path}")
        return pq.read_schema(storage.path(parquet[0]), filesystem=storage.fs)
    try:
        return pq.read_schema(target.root, filesystem=target.fs)
    except (OSError, pa.ArrowInvalid) as exc:
        raise InvalidInputError(f"--schema-from: {path} is not a readable Parquet file ({exc})") from None


# Options that `create` and `adopt` share.
RecordKeyOption = Annotated[str, typer.Option(help="Record key column(s), comma-separated.")]
PropertyOption = Annotated[
    list[str] | None, typer.Option("--property", help="Table property key=value (repeatable).")
]
TableNameOption = Annotated[str | None, typer.Option(help="Table name (default: the directory name).")]


@app.command("create")
@cli_command
def create(
    table: TableArgument,
    record_key: RecordKeyOption,
    schema: Annotated[
        str | None, typer.Option(help='Columns, e.g. "id bigint, city string, ts timestamp".')
    ] = None,
    schema_from: Annotated[
        str | None, typer.Option(help="Take the schema from this Parquet file or directory.")
    ] = None,
    partition_by: Annotated[str | None, typer.Option(help="Partition column(s), comma-separated.")] = None,
    ordering_field: Annotated[
        str | None, typer.Option(help="Column that decides between duplicate keys in a batch.")
    ] = None,
    prop: PropertyOption = None,
    name: TableNameOption = None,
    warehouse: WarehouseOption = None,
) -> None:
    """Create an empty table."""
    from builder.create import create_table

    if (schema is None) == (schema_from is None):
        raise InvalidSchemaError("give exactly one of --schema and --schema-from")
    source: Any = schema if schema is not None else _schema_from_file(str(schema_from))
    location = resolve(table, warehouse)
    config = create_table(
        location,
        source,
        _split(record_key),
        _split(partition_by),
        ordering_field,
        _parse_properties(prop or []),
        name,
    )
    console.print(
        f"created table [bold]{config.name}[/] at {location} "
        f"({len(config.schema.columns)} columns, record key {', '.join(config.record_key)})"
    )


@app.command("adopt")
@cli_command
def adopt(
    table: TableArgument,
    record_key: RecordKeyOption,
    partition_by: Annotated[
        str | None, typer.Option(help="Partition column(s): the col=value directory levels, in order.")
    ] = None,
    ordering_field: Annotated[
        str | None, typer.Option(help="Column that decides between duplicate keys in later writes.")
    ] = None,
    prop: PropertyOption = None,
    name: TableNameOption = None,
    index: Annotated[
        list[str] | None,
        typer.Option("--index", help='A "CREATE INDEX ..." statement to build after adopting (repeatable).'),
    ] = None,
    warehouse: WarehouseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Make a directory of Parquet files (flat or Hive-style col=value/) a table in place: no data
    is copied; files added to the directory later are not part of the table."""
    from builder.adopt import adopt_table
    from builder.session import spark_session

    location = resolve(table, warehouse)
    properties = _parse_properties(prop or [])
    with err_console.status("starting Spark"):
        spark = spark_session()
    with err_console.status(f"adopting {location}: checking files and record keys"):
        result = adopt_table(
            spark,
            location,
            _split(record_key),
            _split(partition_by),
            ordering_field,
            properties,
            name,
            index or [],
        )
    if as_json:
        typer.echo(json.dumps(result.to_json(), indent=2))
        return
    stored = "" if result.path_columns_in_files else "; partition columns are read from the paths"
    console.print(
        f"adopted [bold]{result.name}[/] at {location} as snapshot {result.instant}: "
        f"{result.files:,} file(s), {result.rows:,} row(s) in {result.partitions:,} partition(s){stored}; "
        f"{result.indexes} index(es) built"
    )


@app.command("alter-partitioning")
@cli_command
def alter_partitioning(
    table: TableArgument,
    partition_by: Annotated[
        str | None, typer.Option(help="Partition column(s) of future writes, comma-separated.")
    ] = None,
    unpartitioned: Annotated[bool, typer.Option(help="Write future records unpartitioned.")] = False,
    warehouse: WarehouseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Change the partitioning of future writes; existing files keep their partition paths."""
    from builder.partitioning import alter_partitioning as alter

    fields = _split(partition_by)
    if bool(fields) == unpartitioned:
        raise InvalidInputError("give exactly one of --partition-by COL[,COL] and --unpartitioned")
    change = alter(resolve(table, warehouse), fields)
    if as_json:
        info = {"before": list(change.before), "after": list(change.after), "until": change.until}
        typer.echo(json.dumps(info, indent=2))
        return
    console.print(
        f"table [bold]{change.config.name}[/]: new records are partitioned by "
        f"{', '.join(change.after) or '(none)'}; existing file groups keep their partition paths "
        f"({', '.join(change.before) or 'unpartitioned'}, written up to {change.until or 'no commit yet'})"
    )


@app.command("show")
@cli_command
def show(table: TableArgument, warehouse: WarehouseOption = None, as_json: JsonOption = False) -> None:
    """Describe a table: schema, latest snapshot, files, indexes."""
    info = describe(LakeTable.open(resolve(table, warehouse)))
    if as_json:
        typer.echo(json.dumps(info, indent=2))
        return
    console.print(f"[bold]{info['name']}[/]  {info['location']}")
    console.print(
        f"snapshot {info['snapshot'] or '(none: no commits yet)'} · {info['commits']} commit(s) · "
        f"{info['file_count']} file(s) in {info['partitions']} partition(s) · "
        f"{info['row_count']:,} row(s) · {info['total_bytes']:,} bytes"
    )
    console.print(
        f"record key: {', '.join(info['record_key'])} · partitioned by: "
        f"{', '.join(info['partition_fields']) or '(none)'} · ordering field: "
        f"{info['ordering_field'] or '(none)'}"
    )
    for earlier in info["partition_history"]:
        console.print(
            f"earlier partitioning: {', '.join(earlier['fields']) or '(none)'}, "
            f"for records written up to {earlier['until'] or '(no commit)'}"
        )
    if info["pending_instants"]:
        console.print(
            f"[yellow]pending (rolled back by the next writer):[/] {', '.join(info['pending_instants'])}"
        )
    columns = RichTable("column", "type", "nullable", title="schema", title_justify="left")
    for column in info["schema"]:
        columns.add_row(column["name"], column["type"], "yes" if column["nullable"] else "no")
    console.print(columns)
    indexes = RichTable(
        "index", "state", "buckets", "base files", "log files", "up to", title="indexes", title_justify="left"
    )
    for index in info["indexes"]:
        indexes.add_row(
            index["name"],
            index["state"],
            str(index["buckets"]),
            str(index["base_files"]),
            str(index["log_files"]),
            index["complete_up_to"] or "-",
        )
    console.print(indexes)


@app.command("read")
@cli_command
def read(
    table: TableArgument,
    snapshot: Annotated[str | None, typer.Option(help="Completed instant to read (default: latest).")] = None,
    limit: Annotated[
        int | None, typer.Option(min=0, help=f"At most N rows (printing defaults to {PRINT_LIMIT}).")
    ] = None,
    columns: Annotated[str | None, typer.Option(help="Only these columns, comma-separated.")] = None,
    out: Annotated[
        Path | None, typer.Option(help="Write the rows to FILE.parquet or FILE.csv instead of printing.")
    ] = None,
    warehouse: WarehouseOption = None,
) -> None:
    """Print a snapshot's rows, or write them to a Parquet or CSV file."""
    if out is not None and out.suffix.lower() not in (".parquet", ".csv"):
        raise InvalidInputError(f"--out must end in .parquet or .csv, got {out.name}")
    snap = LakeTable.open(resolve(table, warehouse)).snapshot(snapshot)
    wanted = _split(columns) or None
    if out is not None:
        rows = snap.read(wanted, limit)
        _write_rows(rows, out)
        console.print(f"wrote {rows.num_rows:,} row(s) of snapshot {snap.instant} to {out}")
        return
    rows = snap.read(wanted, PRINT_LIMIT if limit is None else limit)
    grid = RichTable(*rows.column_names, title=f"snapshot {snap.instant}", title_justify="left")
    for record in rows.to_pylist():
        grid.add_row(*["NULL" if v is None else str(v) for v in record.values()])
    console.print(grid)
    console.print(f"{rows.num_rows} row(s) shown")


def _write_rows(rows: pa.Table, out: Path) -> None:
    """Write `--out` (Parquet or CSV by suffix); a file that cannot be written (no such directory,
    no permission, a directory in the way, a full disk, /proc) is a one-line error."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.suffix.lower() == ".parquet":
            pq.write_table(rows, out)
        else:
            pacsv.write_csv(rows, out)
    except OSError as exc:
        reason = (exc.strerror or str(exc)).splitlines()[0]  # pyarrow's names the file
        if exc.filename:  # Python's (mkdir) do not: say which path it was about
            reason = f"{reason}: {exc.filename}"
        raise InvalidInputError(f"--out {out}: cannot write the file ({reason})") from None


@app.command("history")
@cli_command
def history(table: TableArgument, warehouse: WarehouseOption = None, as_json: JsonOption = False) -> None:
    """List completed instants (snapshots), oldest first."""
    entries = describe_history(LakeTable.open(resolve(table, warehouse)))
    if as_json:
        typer.echo(json.dumps(entries, indent=2))
        return
    grid = RichTable("what", "inserted", "updated", "deleted", "files +/-")
    grid.columns.insert(0, RichColumn("instant", no_wrap=True, min_width=17))
    for e in entries:
        stats = e["stats"] or {}
        files = f"{stats['files_added']}/{stats['files_removed']}" if stats else ""
        counts = [str(stats.get(k, "")) for k in ("inserted", "updated", "deleted")]
        grid.add_row(e["instant"], e["operation"] or e["action"], *counts, files)
    console.print(grid)


# `table check`'s exit status when it finds damage (a user mistake, as elsewhere, is 2).
DAMAGE_FOUND_EXIT = 1


@app.command("check")
@cli_command
def check(
    table: TableArgument,
    warehouse: WarehouseOption = None,
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="Re-create a missing completion marker where everything its instant wrote is present.",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Verify the timeline, the files index and the index files; exit 1 if anything is damaged."""
    from pruner.table.check import check as check_table

    location = resolve(table, warehouse)
    outcomes = []
    if repair:
        from builder.repair import repair as repair_table

        outcomes = repair_table(location)
    report = check_table(location)
    if as_json:
        repairs = [{"instant": o.instant, "repaired": o.repaired, "reason": o.reason} for o in outcomes]
        typer.echo(json.dumps({**report.to_json(), "repairs": repairs}, indent=2))
    else:
        for outcome in outcomes:
            verb = "re-created the completion marker of" if outcome.repaired else "did not repair"
            console.print(f"{verb} {outcome.instant}: {escape(outcome.reason)}", highlight=False)
        if report.intact:
            console.print(
                f"{report.location}: intact (snapshot {report.snapshot or 'none'})", highlight=False
            )
        for finding in report.findings:
            console.print(f"[red]damaged:[/] {escape(finding.what)}", highlight=False, soft_wrap=True)
            console.print(f"  repair: {escape(finding.repair)}", highlight=False, soft_wrap=True)
    if not report.intact:
        raise typer.Exit(DAMAGE_FOUND_EXIT)


@app.command("analyze")
@cli_command
def analyze(table: TableArgument, warehouse: WarehouseOption = None, as_json: JsonOption = False) -> None:
    """Give engines' optimizers distinct-value estimates, data sizes and exact decimal ranges for
    files indexed without them (adopted or written by an older lakeprune): recomputes those files'
    column stats as a new instant (a Spark job)."""
    from builder.index_build import analyze as run_analyze
    from builder.session import spark_session

    location = resolve(table, warehouse)
    with err_console.status("starting Spark"):
        spark = spark_session()
    with err_console.status(f"analyzing {location}: recomputing the column stats of files without them"):
        files, instant = run_analyze(location, spark)
    if as_json:
        typer.echo(json.dumps({"files": files, "instant": instant}, indent=2))
    elif instant is None:
        console.print(f"{location}: every live file has optimizer statistics; nothing to do", highlight=False)
    else:
        console.print(
            f"{location}: column stats of {files:,} file(s) recomputed as {instant}", highlight=False
        )
