"""Names on the command line (issue 13: no name bricks a table). Table, column and index names that
break the naming rule are one-line errors that write nothing; a table bricked by an index defined,
before names were checked, with a name too long for a directory recovers with DROP INDEX."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from builder import LakepruneTable
from pruner.errors import InvalidInputError
from pruner.format import timeline as tl
from pruner.format.layout import DataFileName, data_file_path
from pruner.index.definitions import INDEX_DEFS
from pruner.storage import Storage
from pruner.table.table import LakeTable
from tests.cli.test_cli import create_trips, lakeprune, write_input, write_trips
from tests.support import make_row, to_df

LONG = "a" * 100_000  # the prober's name: fits one command-line argument (128 KiB), not a directory


def _assert_one_line(output: str, message: str) -> None:
    """One `error:` line (after any log lines, such as a rollback's), short whatever the name."""
    (error,) = [line for line in output.splitlines() if line.startswith("error:")]
    assert "Traceback" not in output and message in error, output[:1000]
    assert len(error) < 500, "one short line, even for a 100,000-character name"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--name", "a" * 129), "table name 'aaaa"),
        (("--name", "Trips"), "table name 'Trips' is not allowed"),
        (("--name", "t\u0456ps"), "non-ASCII"),
        (("--name", "_lp_t"), "reserved prefix"),
        (("--schema", f"id bigint, {'c' * 129} string"), "column name 'cccc"),
        (("--schema", "id bigint, \uff43ity string"), "U+FF43 FULLWIDTH LATIN SMALL LETTER C"),
    ],
)
def test_create_refuses_bad_names(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    schema = () if "--schema" in args else ("--schema", "id bigint")
    output = lakeprune("table", "create", str(tmp_path / "t"), *schema, *args, "--record-key", "id", expect=2)
    _assert_one_line(output, message)
    assert not (tmp_path / "t").exists()


def test_schema_from_a_parquet_file_with_bad_column_names(tmp_path: Path) -> None:
    for column, message in [("c" * 200, "is too long"), ("c\u0456ty", "non-ASCII"), ("City", "not allowed")]:
        source = tmp_path / "source.parquet"
        pq.write_table(pa.table({"id": pa.array([1], pa.int64()), column: ["x"]}), source)
        output = lakeprune(
            "table",
            "create",
            str(tmp_path / "t"),
            "--schema-from",
            str(source),
            "--record-key",
            "id",
            expect=2,
        )
        _assert_one_line(output, message)
        assert not (tmp_path / "t").exists()


def test_paths_too_long_for_the_file_system(tmp_path: Path) -> None:
    """A path no file system can hold does not exist: the usual one-line errors, no OSError."""
    table = str(tmp_path / "t")
    lakeprune("table", "create", table, "--schema", "id bigint", "--record-key", "id")
    long = str(tmp_path / ("a" * 300))
    for args, message in [
        (("table", "show", long), "no lakeprune table at"),
        (("write", table, "--input", f"{long}.parquet", "--mode", "insert"), "does not exist"),
        (
            ("table", "create", str(tmp_path / "u"), "--schema-from", long, "--record-key", "id"),
            "does not exist",
        ),
        (
            ("table", "create", long, "--schema", "id bigint", "--record-key", "id"),
            "cannot create a table at",
        ),
        (("table", "read", table, "--out", f"{long}.parquet"), "cannot write the file"),
    ]:
        output = lakeprune(*args, expect=2)
        (error,) = [line for line in output.splitlines() if line.startswith("error:")]
        assert message in error and "Traceback" not in output, output


def test_default_table_name_from_the_directory(tmp_path: Path) -> None:
    output = lakeprune(
        "table", "create", str(tmp_path / "trips-2024"), "--schema", "id bigint", "--record-key", "id"
    )
    assert "created table trips_2024" in output
    lakeprune(
        "sql", "--table", str(tmp_path / "trips-2024"), "CREATE INDEX s ON trips_2024 USING column_stats"
    )


@pytest.mark.parametrize(
    "statement",
    [
        f"CREATE INDEX {LONG} ON t USING secondary_index (city)",
        f"CREATE INDEX {LONG} ON t (city)",
        f"CREATE INDEX {LONG} ON t (lower(city))",
        f"CREATE INDEX {LONG} ON t USING column_stats",
        "CREATE INDEX \uff43ity_idx ON t (city)",
        "CREATE INDEX _lp_idx ON t (city)",
    ],
)
def test_create_index_refuses_bad_names(tmp_path: Path, statement: str) -> None:
    table = str(tmp_path / "t")
    lakeprune("table", "create", table, "--schema", "id bigint, city string", "--record-key", "id")
    _assert_one_line(lakeprune("sql", "--table", table, statement, expect=2), "index name")
    assert not (tmp_path / "t" / INDEX_DEFS).exists()


def _brick(location: Path) -> list[str]:
    """What the prober's table looked like: a secondary index defined with a 100,000-character name
    (written straight to index_defs.json, since the validator now refuses it; `building`, as CREATE
    INDEX leaves it on a table with data) and the inflight instant of the write that crashed on its
    directory, with a data file it had written. Returns the files of that instant."""
    storage = Storage.from_uri(str(location))
    definitions = (
        json.loads(storage.read_bytes(INDEX_DEFS)) if storage.exists(INDEX_DEFS) else {"indexes": []}
    )
    definitions["indexes"].append(
        {"name": LONG, "type": "secondary_index", "columns": ["city"], "options": {}, "state": "building"}
    )
    storage.publish(INDEX_DEFS, json.dumps(definitions).encode())
    instant = tl.request(storage, tl.Action.COMMIT, {"operation": "upsert"})
    instant = tl.mark_inflight(
        storage,
        instant,
        {
            "data_partitions": ["city=ams"],
            "index_partitions": ["files", "record_index", "column_stats", f"secondary_index_{LONG}"],
        },
    )
    partial = data_file_path("city=ams", DataFileName("f" * 32, "0-0", instant.timestamp))
    storage.write_bytes(partial, b"partial")
    return [partial]


@pytest.mark.usefixtures("spark")
def test_a_table_bricked_by_a_long_index_name_recovers_with_drop_index(
    spark: SparkSession, tmp_path: Path
) -> None:
    warehouse = str(tmp_path / "wh")
    location = tmp_path / "wh" / "trips"
    create_trips(warehouse)
    write_trips(warehouse, write_input(tmp_path / "a.parquet", range(10)), "insert")
    lakeprune("sql", "-w", warehouse, "CREATE INDEX stats ON trips USING column_stats")
    before = LakeTable.open(str(location)).snapshot()
    leftovers = _brick(location)

    # While the definition exists: writes, builds, compaction and show stop with the way out.
    update = write_input(tmp_path / "b.parquet", range(5, 15), version=1)
    for args in [
        ("write", "trips", "-w", warehouse, "--input", str(update), "--mode", "upsert"),
        ("compact", "trips", "-w", warehouse),
        ("table", "show", "trips", "-w", warehouse),
        ("index", "build", "trips", LONG, "-w", warehouse),
    ]:
        _assert_one_line(lakeprune(*args, expect=2), "cannot be used: drop it")
    with pytest.raises(InvalidInputError, match="cannot be used: drop it"):  # the Python API as well
        LakepruneTable(str(location), spark).upsert(to_df(spark, [make_row(99, "ams")]))
    table = LakeTable.open(str(location))
    assert table.snapshot().instant == before.instant, "nothing was committed"
    assert [i.timestamp for i in table.timeline.instants] == [
        i.timestamp for i in before.table.timeline.instants
    ], "the crashed instant is rolled back (it used to fail for ever), and no new one is left behind"
    assert not any((location / rel).exists() for rel in leftovers)

    # Clean works with the definition still there; DROP INDEX takes it away.
    assert "earliest retained snapshot" in lakeprune("clean", "trips", "-w", warehouse)
    dropped = lakeprune("sql", "-w", warehouse, f"DROP INDEX {LONG} ON trips")
    assert "dropped index 'aaaa" in dropped and "…(100,000 chars)" in dropped

    # From here on the table is back to normal.
    committed = json.loads(write_trips(warehouse, update, "upsert", "--json"))
    assert committed["inserted"] == 5 and committed["updated"] == 5
    assert "compacted" in lakeprune("compact", "trips", "-w", warehouse)
    assert "earliest retained snapshot" in lakeprune("clean", "trips", "-w", warehouse)
    info = json.loads(lakeprune("table", "show", "trips", "-w", warehouse, "--json"))
    assert info["row_count"] == 15 and not info["pending_instants"]
    assert [i["name"] for i in info["indexes"]] == ["files", "record_index", "stats"]
