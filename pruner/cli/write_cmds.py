"""`lakeprune write | compact | clean`: the commands that change a table. `write` runs the Spark
write path on the embedded session (or the one `spark-submit` provides); `compact` and `clean`
need only pyarrow."""

from __future__ import annotations

import json
from typing import Annotated

import pyarrow as pa
import pyarrow.parquet as pq
import typer

from pruner.cli.common import (
    JsonOption,
    TableArgument,
    WarehouseOption,
    cli_command,
    console,
    err_console,
    resolve,
)
from pruner.cli.spark_errors import unreadable_input
from pruner.errors import InvalidInputError
from pruner.storage import Storage
from pruner.table.table import LakeTable


def write(
    table: TableArgument,
    input_path: Annotated[str, typer.Option("--input", "-i", help="Parquet file or directory to write.")],
    mode: Annotated[
        str,
        typer.Option(
            help="insert | upsert | delete (needs only the key columns) | overwrite (replaces every record)."
        ),
    ],
    warehouse: WarehouseOption = None,
    as_json: JsonOption = False,
    sort_by: Annotated[
        list[str] | None,
        typer.Option(
            "--sort-by",
            help="Lay new files out by a column or an expression such as 'hour(ts)' (repeatable).",
        ),
    ] = None,
) -> None:
    """Insert, upsert or delete the records of a Parquet input, or replace the table's with them, as
    one commit."""
    from builder.write.writer import WriteMode

    modes = [WriteMode.INSERT, WriteMode.UPSERT, WriteMode.DELETE, WriteMode.OVERWRITE]
    write_mode = next((m for m in modes if m.value == mode.lower()), None)
    if write_mode is None:
        raise InvalidInputError(f"--mode must be insert, upsert, delete or overwrite, got {mode!r}")
    location = resolve(table, warehouse)
    # Fail fast, before Spark starts, if the table is missing or corrupt or has an unusable index.
    LakeTable.open(location).index_partition_specs()
    source = Storage.from_uri(input_path)
    _check_input(source, input_path)

    from builder.object_stores import require_hadoop_file_system
    from builder.session import spark_session
    from builder.write.writer import write as run_write

    with err_console.status("starting Spark"):
        spark = spark_session()
    require_hadoop_file_system(spark, source.uri)
    try:
        result = run_write(spark, location, spark.read.parquet(source.uri), write_mode, sort_by or ())
    except Exception as exc:  # a file of the input Spark cannot read is the user's; the rest is not
        failure = unreadable_input(exc, source)
        if failure is None:
            raise
        raise InvalidInputError(
            f"--input {input_path}: cannot read {failure.shown_path} ({failure.reason}); nothing was written"
        ) from None
    if as_json:
        typer.echo(json.dumps(result.to_json(), indent=2))
    elif result.instant is None:
        console.print(
            f"nothing to write ({result.input_rows} input row(s), {result.not_found} key(s) not found)"
        )
    else:
        console.print(
            f"committed {result.instant}: {result.inserted:,} inserted, {result.updated:,} updated "
            f"({result.moved:,} moved partition), {result.deleted:,} deleted, "
            f"{result.not_found:,} not found; "
            f"{result.files_added} file(s) written, {result.files_removed} replaced"
        )


def _check_input(source: Storage, input_path: str) -> None:
    """Refuse, before Spark starts, input Spark cannot read: a missing path, no Parquet files, or
    nanosecond timestamps (what pandas writes by default)."""
    if not source.exists(""):
        raise InvalidInputError(f"--input {input_path} does not exist")
    if source.is_dir(""):
        files = [e.rel for e in source.list_files("", recursive=True) if e.rel.endswith(".parquet")]
        if not files:
            raise InvalidInputError(f"--input {input_path} holds no .parquet files")
        path = source.path(files[0])
    else:
        path = source.root
    try:
        schema = pq.read_schema(path, filesystem=source.fs)
    except (OSError, pa.ArrowInvalid) as exc:
        raise InvalidInputError(f"--input {input_path} is not readable Parquet ({exc})") from None
    for field in schema:
        if pa.types.is_timestamp(field.type) and field.type.unit == "ns":
            raise InvalidInputError(
                f"input column {field.name!r} holds nanosecond timestamps, which Spark cannot read; "
                "write the file with microsecond timestamps (pandas: "
                "df.to_parquet(path, coerce_timestamps='us', allow_truncated_timestamps=True))"
            )


def compact(table: TableArgument, warehouse: WarehouseOption = None) -> None:
    """Fold index log files into new base files (every bucket that has logs)."""
    from builder.compaction import compact as run_compact

    report = run_compact(resolve(table, warehouse), force=True)
    if report.instant is None:
        console.print("nothing to compact")
    else:
        console.print(
            f"compacted {report.bucket_count} bucket(s) at {report.instant}: "
            + ", ".join(f"{name} {len(b)}" for name, b in report.buckets.items())
        )


def clean(table: TableArgument, warehouse: WarehouseOption = None) -> None:
    """Delete files that no retained snapshot needs (and files of failed writes)."""
    from builder.cleaner import clean as run_clean

    report = run_clean(resolve(table, warehouse))
    console.print(
        f"deleted {report.deleted_data_files} data file(s) and {report.deleted_index_files} "
        f"index file(s); earliest retained snapshot: {report.earliest_retained or '-'}"
    )


def register(app: typer.Typer) -> None:
    app.command("write")(cli_command(write))
    app.command("compact")(cli_command(compact))
    app.command("clean")(cli_command(clean))
