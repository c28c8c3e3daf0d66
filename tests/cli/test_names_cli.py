"""Names on the command line (issue 13: no name bricks a table). Table, column and index names that
break the naming rule are one-line errors that write nothing; a table bricked by an index defined,
before names were checked, with a name too long for a directory recovers with DROP INDEX."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pruner.index.definitions import INDEX_DEFS
from tests.cli.test_cli import lakeprune

LONG = "a" * 100_000  # the prober's name: fits one command-line argument (128 KiB), not a directory


def _assert_one_line(output: str, message: str) -> None:
    assert output.startswith("error:") and "Traceback" not in output, output[:500]
    assert message in output, output[:500]
    assert len(output) < 500, "one short line, even for a 100,000-character name"


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
