"""The `lakeprune` command line: table create/show/read/history, write, compact, clean, addressing
by path or by warehouse + name, and one-line errors with exit code 2 for user mistakes and for a
writer that loses the table's lock (on a local disk, on S3 and on Cloud Storage)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from builder.api import LakepruneTable
from builder.lock import table_lock
from pruner.cli.main import app
from pruner.errors import SparkSetupError
from pruner.storage import Storage
from pruner.types import TableSchema
from tests.support import CITIES, SCHEMA, make_row

runner = CliRunner()


def lakeprune(*args: str, expect: int = 0) -> str:
    """Run the CLI; stdout on success, stderr for an expected failure."""
    result = runner.invoke(app, list(args))
    assert result.exit_code == expect, result.stdout + result.stderr + repr(result.exception)
    return result.stdout if expect == 0 else result.stderr


def write_input(path: Path, keys: range, version: int = 0) -> Path:
    schema = TableSchema.parse(SCHEMA).to_arrow()
    rows = [make_row(k, CITIES[k % 3], version) for k in keys]
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


def create_trips(warehouse: str, *options: str) -> str:
    """`lakeprune table create trips` under a warehouse, partitioned by city, keyed by id."""
    return lakeprune(
        "table",
        "create",
        "trips",
        "-w",
        warehouse,
        "--schema",
        SCHEMA,
        "--record-key",
        "id",
        "--partition-by",
        "city",
        *options,
    )


def write_trips(warehouse: str, source: Path, mode: str, *options: str) -> str:
    return lakeprune("write", "trips", "-w", warehouse, "--input", str(source), "--mode", mode, *options)


def test_create_show_and_user_errors(tmp_path: Path) -> None:
    table = str(tmp_path / "t")
    assert "created table t" in lakeprune(
        "table", "create", table, "--schema", SCHEMA, "--record-key", "id", "--partition-by", "city"
    )
    info = json.loads(lakeprune("table", "show", table, "--json"))
    assert info["snapshot"] is None and info["record_key"] == ["id"]
    assert [i["name"] for i in info["indexes"]] == ["files", "record_index"]

    sample = write_input(tmp_path / "sample.parquet", range(3))
    from_file = str(tmp_path / "t2")
    lakeprune("table", "create", from_file, "--schema-from", str(sample), "--record-key", "id")
    assert json.loads(lakeprune("table", "show", from_file, "--json"))["schema"] == info["schema"]

    (tmp_path / "empty_dir.parquet").mkdir()  # an --out that is a directory
    nanos = tmp_path / "nanos.parquet"
    pq.write_table(pa.table({"id": [1], "ts": pa.array([0], pa.timestamp("ns"))}), nanos)
    (tmp_path / "empty_dir").mkdir()
    errors = {
        ("write", table, "--input", str(nanos), "--mode", "upsert"): "nanosecond timestamps",
        ("write", table, "--input", str(tmp_path / "empty_dir"), "--mode", "upsert"): "no .parquet files",
        ("table", "show", str(tmp_path / "missing")): "no lakeprune table",
        ("table", "create", table, "--schema", SCHEMA, "--record-key", "id"): "already exists",
        ("table", "create", str(tmp_path / "x"), "--record-key", "id"): "exactly one of --schema",
        (
            "table",
            "create",
            str(tmp_path / "x"),
            "--schema",
            "id bigint",
            "--record-key",
            "nope",
        ): "not in the schema",
        (
            "table",
            "create",
            str(tmp_path / "x"),
            "--schema",
            "id map",
            "--record-key",
            "id",
        ): "unsupported column type",
        ("table", "read", table, "--out", str(tmp_path / "o.json")): "--out must end in",
        ("table", "read", table, "--out", "/proc/x.parquet"): "--out /proc/x.parquet: cannot write the file",
        ("table", "read", table, "--out", str(tmp_path / "empty_dir.parquet")): "[errno 21] Is a directory",
        (
            "table",
            "read",
            table,
            "--out",
            str(sample / "x.csv"),
        ): f"cannot write the file (File exists: {sample})",
        ("table", "read", table, "--snapshot", "20200101000000000"): "no completed instant",
        ("table", "read", table, "--snapshot", "\uff12\uff10\uff12\uff10" + "0" * 13): "is not an instant",
        ("write", table, "--input", str(tmp_path / "none.parquet"), "--mode", "upsert"): "does not exist",
        ("write", table, "--input", str(sample), "--mode", "merge"): "--mode must be",
    }
    for args, message in errors.items():
        output = lakeprune(*args, expect=2)
        assert message in output, (args, output)
        assert output.strip().startswith("error:") and "Traceback" not in output


def warehouse_root(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A new, empty warehouse root on a local disk, on the session's S3 server or on its Cloud
    Storage server (with the variables pointing every client there)."""
    if backend == "s3":
        return str(request.getfixturevalue("s3_root"))
    if backend == "gcs":
        return cast(Storage, request.getfixturevalue("gcs_storage")).uri
    return str(tmp_path / "wh")


@pytest.mark.parametrize(
    "backend", ["local", pytest.param("s3", marks=pytest.mark.s3), pytest.param("gcs", marks=pytest.mark.gcs)]
)
def test_write_read_time_travel_compact_clean_by_warehouse(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest, spark: SparkSession
) -> None:
    """The whole write/read cycle on a local disk, on S3 and on Cloud Storage; on S3, Spark also
    reads an `--input` from the bucket and the table itself (`LakepruneTable.read()`), both through
    S3A. The test session has no Hadoop connector for `gs://`: Spark's own read of a `gs://` table is
    a one-line error, while lakeprune's jobs write it through pyarrow."""
    warehouse = warehouse_root(backend, tmp_path, request)
    create_trips(warehouse, "--ordering-field", "ts")
    first = json.loads(
        write_trips(warehouse, write_input(tmp_path / "a.parquet", range(10)), "insert", "--json")
    )
    assert first["inserted"] == 10
    write_trips(warehouse, write_input(tmp_path / "b.parquet", range(5, 15), version=1), "upsert")
    deletes = pa.table({"id": pa.array([0, 1], pa.int64())})
    delete_input = f"{warehouse}/inputs/del.parquet" if backend == "s3" else str(tmp_path / "del.parquet")
    pq.write_table(deletes, delete_input)
    lakeprune("write", "trips", "-w", warehouse, "--input", delete_input, "--mode", "delete")

    out = tmp_path / "out.csv"
    lakeprune("table", "read", "trips", "-w", warehouse, "--out", str(out))
    ids = sorted(pacsv.read_csv(out).column("id").to_pylist())
    assert ids == list(range(2, 15))
    if backend == "gcs":
        with pytest.raises(SparkSetupError, match="no Hadoop file system for gs://"):
            LakepruneTable.in_warehouse(warehouse, "trips", spark).read()
    else:
        through_spark = LakepruneTable.in_warehouse(warehouse, "trips", spark).read()
        assert sorted(row.id for row in through_spark.select("id").collect()) == ids
    old = tmp_path / "old.parquet"
    lakeprune("table", "read", "trips", "-w", warehouse, "--snapshot", first["instant"], "--out", str(old))
    assert sorted(pq.read_table(old).column("id").to_pylist()) == list(range(10))
    printed = lakeprune("table", "read", "trips", "-w", warehouse, "--limit", "3", "--columns", "id,city")
    assert "3 row(s) shown" in printed

    history = json.loads(lakeprune("table", "history", "trips", "-w", warehouse, "--json"))
    assert [h["operation"] for h in history] == ["insert", "upsert", "delete"]
    assert "compacted" in lakeprune("compact", "trips", "-w", warehouse)
    assert "earliest retained snapshot" in lakeprune("clean", "trips", "-w", warehouse)
    assert json.loads(lakeprune("table", "show", "trips", "-w", warehouse, "--json"))["row_count"] == 13


def _corrupt_pages(path: Path, rows: int = 5000) -> None:
    """A real Parquet file (snappy, one data page per column) whose `note` page has garbage in its
    middle: the footer stays valid, so the schema reads and only decoding the page fails."""
    table = pa.table(
        {
            "id": pa.array(range(rows), pa.int64()),
            "note": [f"note {i} of {i * 7919 % 1009}" for i in range(rows)],
        }
    )
    pq.write_table(table, path, compression="snappy", use_dictionary=False)
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(1)
    with path.open("r+b") as f:
        f.seek(chunk.data_page_offset + chunk.total_compressed_size // 2)
        f.write(b"\xff" * 64)
    assert pq.read_schema(path).names == ["id", "note"]
    with pytest.raises(OSError, match="Corrupt snappy"):
        pq.read_table(path)


@pytest.mark.usefixtures("spark")
def test_an_input_file_with_corrupt_pages_is_a_one_line_error(tmp_path: Path) -> None:
    table = str(tmp_path / "t")
    lakeprune("table", "create", table, "--schema", "id bigint, note string", "--record-key", "id")
    good = tmp_path / "good.parquet"
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "note": ["a", "b"]}), good)
    lakeprune("write", table, "--input", str(good), "--mode", "insert")
    before = sorted(p.relative_to(table) for p in Path(table).rglob("*") if p.is_file())
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    pq.write_table(pa.table({"id": pa.array([3], pa.int64()), "note": ["c"]}), inputs / "a.parquet")
    _corrupt_pages(inputs / "b.parquet")

    for given, named in [(inputs / "b.parquet", inputs / "b.parquet"), (inputs, inputs / "b.parquet")]:
        output = lakeprune("write", table, "--input", str(given), "--mode", "upsert", expect=2)
        (error,) = [line for line in output.splitlines() if line.strip()]
        assert (
            error.startswith(f"error: --input {given}: cannot read {named} (") and "Traceback" not in output
        )
        assert "FAILED_TO_UNCOMPRESS" in error and error.endswith("nothing was written")
        assert sorted(p.relative_to(table) for p in Path(table).rglob("*") if p.is_file()) == before
        info = json.loads(lakeprune("table", "show", table, "--json"))
        assert info["row_count"] == 2 and info["commits"] == 1 and not info["pending_instants"]


@pytest.mark.parametrize(
    "backend", ["local", pytest.param("s3", marks=pytest.mark.s3), pytest.param("gcs", marks=pytest.mark.gcs)]
)
def test_a_writer_that_finds_the_table_locked_exits_2_with_one_line(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    """The lock's loser on a local disk, on S3 and on Cloud Storage: exit status 2, one line, the
    table untouched."""
    warehouse = warehouse_root(backend, tmp_path, request)
    create_trips(warehouse)
    table = Storage.from_uri(f"{warehouse}/trips")
    before = table.list_files("", recursive=True)
    with table_lock(table, "upsert"):
        for command in ("compact", "clean"):
            error = lakeprune(command, "trips", "-w", warehouse, expect=2)
            assert error.startswith(f"error: table {table.uri} is locked by upsert on host ")
            assert error.count("\n") == 1
    assert table.list_files("", recursive=True) == before
