"""Functional indexes (RFC-63) on the Spark side: CREATE INDEX on expressions, the definition in
index_defs.json, rows maintained by writes and built for existing data, value lists tombstoned
when a write removes a file; and RFC-63 use case 1 (hourly files, time-of-day query: 2 of 24 per day)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pyarrow.compute as pc
import pytest
from pyspark.sql import SparkSession

from builder import LakepruneTable
from builder.index_build import execute
from pruner.errors import InvalidInputError
from pruner.index.definitions import INDEX_DEFS, IndexState
from pruner.table.table import LakeTable
from tests.support_events import BASE, DAYS


def _covered(location: str, index: str) -> set[tuple[str, str]]:
    table = LakeTable.open(location)
    rows = table.snapshot().index_partition(table.spec(table.definition(index))).read_all()
    return set(zip(rows["partition"].to_pylist(), rows["file_name"].to_pylist(), strict=True))


def test_definitions_are_recorded(events_table: str) -> None:
    data = json.loads((Path(events_table) / INDEX_DEFS).read_text())
    by_name = {d["name"]: d for d in data["indexes"]}
    assert by_name["datestr"] | {"state": None, "complete_up_to": None, "created_after": None} == {
        "name": "datestr",
        "type": "functional",
        "function": "date_format",
        "expression": "date_format(ts, '%Y-%m-%d')",
        "columns": ["ts"],
        "index_type": "column_stats",
        "options": {},
        "state": None,
        "complete_up_to": None,
        "created_after": None,
        "expression_format": 2,
    }
    assert by_name["hour_list"]["index_type"] == "value_list"
    # a tree over two columns: both are its columns, and it has no outermost function
    tree = by_name["hour_org"]
    assert (tree["expression"], tree["columns"]) == ("(10 * hour(ts)) + length(org_id)", ["org_id", "ts"])
    assert "function" not in tree
    table = LakeTable.open(events_table)
    assert all(d.state == IndexState.READY for d in table.definitions)
    assert table.spec(table.definition("hour_of_day")).name == "func_index_hour_of_day"
    assert (Path(events_table) / ".lakeprune/metadata/func_index_hour_of_day").is_dir()


@pytest.mark.parametrize("index", ["hour_of_day", "datestr", "hour_list", "name_lower", "name_length"])
def test_every_live_file_is_covered_and_removed_files_are_not(events_table: str, index: str) -> None:
    live = {(f.partition, f.file_name) for f in LakeTable.open(events_table).snapshot().files()}
    assert _covered(events_table, index) == live


def test_value_list_rows(events_table: str) -> None:
    table = LakeTable.open(events_table)
    rows = table.snapshot().index_partition(table.spec(table.definition("hour_list"))).read_all()
    per_file = rows.group_by(["partition", "file_name"]).aggregate([("value", "count_distinct")])
    counts = sorted(per_file["value_count_distinct"].to_pylist())
    assert counts[0] == 1 and counts[-1] == 2  # one hour per file; the rewritten file got 6 too
    lowered = table.snapshot().index_partition(table.spec(table.definition("name_lower"))).read_all()
    assert "=ßtraße" in lowered["value"].to_pylist() and "" in lowered["value"].to_pylist()  # NULL
    assert pc.sum(lowered["null_count"]).as_py() > 0


def test_use_case_1_time_of_day_selects_two_files_of_24_per_day(events_table: str) -> None:
    table = LakepruneTable(events_table)
    assert len(table.snapshot().files()) == 24 * DAYS
    for where in [
        "hour_of_day BETWEEN 12 AND 13",
        "hour(ts) BETWEEN 12 AND 13",
        "hour_list IN (12, 13)",
    ]:
        result = table.prune(where)
        assert result.files_selected == 2 * DAYS, where
        step = next(s for s in result.explain if s.step == "functional_index")
        assert (step.files_in, step.files_out) == (24 * DAYS, 2 * DAYS)


def test_value_list_is_exact_where_min_max_is_not(events_table: str) -> None:
    table = LakepruneTable(events_table)
    where = "day = DATE '2026-03-01' AND "
    # The rewritten hour-5 file holds 05:xx and 06:59: min / max [5, 6] cannot exclude it for 6 ...
    assert table.prune(where + "hour_of_day = 6").files_selected == 2
    assert table.prune(where + "hour_list = 6").files_selected == 2
    # ... and both keep it for 5, but a value list also knows 5 is not in the hour-6 file.
    assert table.prune(where + "hour_list = 5").files_selected == 1


def test_source_column_range_uses_monotonic_functions_only(events_table: str) -> None:
    table = LakepruneTable(events_table)
    # Partition pruning narrows to day 1; the minute index (monotonic) then keeps hours 10 and 11.
    result = table.prune("ts >= TIMESTAMP '2026-03-02 10:30:00' AND ts < TIMESTAMP '2026-03-02 11:10:00'")
    assert result.files_selected == 2
    # `day` is not indexed by a monotonic function of ts: nothing else could prune by hour.
    assert table.prune("datestr = '2026-03-02'").files_selected == 24


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("CREATE INDEX h ON events (hour(name))", "takes a value of type"),
        ("CREATE INDEX h ON events (nope(ts))", "unknown function"),
        ("CREATE INDEX h ON events USING partition_stats (hour(ts))", "a functional index is USING"),
        ("CREATE INDEX h ON events USING bloom_filters (hour(ts)) OPTIONS (n = 3)", "unknown option 'n'"),
        ("CREATE INDEX h ON events USING value_list (hour(ts)) OPTIONS (fpp = 0.1)", "unknown option 'fpp'"),
        ("CREATE INDEX h ON events USING bloom_filters (hour(ts)) OPTIONS (fpp = 0.9)", "between 0 and 0.5"),
        ("CREATE INDEX ts ON events (hour(ts))", "already exists|would hide column"),
        ("CREATE INDEX h ON events (date_format(ts, '%X'))", "not supported"),
    ],
)
def test_bad_functional_statements(tmp_path: Path, statement: str, message: str) -> None:
    from builder.create import create_table

    location = str(tmp_path / "events")
    create_table(location, "id bigint, ts timestamp, name string", "id")
    with pytest.raises(InvalidInputError, match=message):
        execute(location, statement)
    assert not (tmp_path / "events" / INDEX_DEFS).exists()


def test_sort_by_an_expression_lays_files_out_for_skipping(spark: SparkSession, tmp_path: Path) -> None:
    schema = "id bigint, ts timestamp"
    table = LakepruneTable.create(
        str(tmp_path / "clicks"),
        schema,
        record_key="id",
        properties={"write.target_file_size_bytes": 64 * 20, "write.small_file_limit_bytes": 1},
        spark=spark,
    )
    table.sql("CREATE INDEX hour_of_day ON clicks (hour(ts))")
    # Keys interleave the hours: in key order every 20-row file would span 20 different hours.
    rows = [(i * 24 + h, BASE + timedelta(hours=h, minutes=i)) for h in range(24) for i in range(20)]
    assert len({r[0] // 20 for r in rows if r[0] % 24 in (12, 13)}) == 20
    table.insert(spark.createDataFrame(rows, schema), sort_by=["hour(ts)"])
    assert len(table.snapshot().files()) == 24
    assert table.prune("hour_of_day BETWEEN 12 AND 13").files_selected == 2
    with pytest.raises(InvalidInputError, match="unknown column"):
        table.insert(spark.createDataFrame(rows[:1], schema), sort_by=["nope"])
