"""`lakeprune table alter-partitioning`: the change is recorded in table.json (with the earlier
partitioning and the last commit written with it), shown by `table show`, refused with a one-line
error for bad input (nothing written then), and works by warehouse + name. No Spark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pruner.format.config import EVOLVED_FORMAT_VERSION
from pruner.format.layout import TABLE_JSON
from tests.cli.test_cli import create_trips, lakeprune
from tests.support import SCHEMA


def test_alter_partitioning_records_the_change(tmp_path: Path) -> None:
    warehouse = str(tmp_path / "wh")
    create_trips(warehouse)
    out = json.loads(
        lakeprune("table", "alter-partitioning", "trips", "-w", warehouse, "--partition-by", "day", "--json")
    )
    assert out == {"before": ["city"], "after": ["day"], "until": None}
    stored = json.loads((Path(warehouse) / "trips" / TABLE_JSON).read_text())
    assert stored["format_version"] == EVOLVED_FORMAT_VERSION
    assert stored["partition_fields"] == ["day"]
    assert stored["partition_history"] == [{"fields": ["city"], "until": None}]

    printed = lakeprune("table", "alter-partitioning", "trips", "-w", warehouse, "--unpartitioned")
    assert "new records are partitioned by (none)" in printed
    info = json.loads(lakeprune("table", "show", "trips", "-w", warehouse, "--json"))
    assert info["partition_fields"] == [] and info["format_version"] == EVOLVED_FORMAT_VERSION
    assert [e["fields"] for e in info["partition_history"]] == [["city"], ["day"]]
    shown = lakeprune("table", "show", "trips", "-w", warehouse)
    assert "earlier partitioning: city, for records written up to (no commit)" in shown


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--partition-by", "nope"), "partition column 'nope' is not in the schema"),
        (("--partition-by", "score"), "partition column 'score' has type double"),
        (("--partition-by", "ts"), "partition column 'ts' has type timestamp"),
        (("--partition-by", "city"), "table t is already partitioned by city; nothing to change"),
        (("--partition-by", "day,day"), "partition columns must be distinct"),
        ((), "give exactly one of --partition-by COL[,COL] and --unpartitioned"),
        (("--partition-by", "day", "--unpartitioned"), "give exactly one of"),
    ],
)
def test_bad_changes_are_one_line_errors_and_write_nothing(
    tmp_path: Path, options: tuple[str, ...], message: str
) -> None:
    table = str(tmp_path / "t")
    lakeprune("table", "create", table, "--schema", SCHEMA, "--record-key", "id", "--partition-by", "city")
    before = (tmp_path / "t" / TABLE_JSON).read_bytes()
    output = lakeprune("table", "alter-partitioning", table, *options, expect=2)
    assert output.strip().startswith("error:") and message in output and "Traceback" not in output
    assert len(output.strip().splitlines()) == 1
    assert (tmp_path / "t" / TABLE_JSON).read_bytes() == before
    assert not (tmp_path / "t" / ".lakeprune" / "lock.json").exists()


def test_missing_table(tmp_path: Path) -> None:
    output = lakeprune("table", "alter-partitioning", str(tmp_path / "x"), "--partition-by", "a", expect=2)
    assert "no lakeprune table" in output
