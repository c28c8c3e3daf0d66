"""The report per index (`pruner.planner.why_not`), with real prunes of the indexed table of
`conftest.py` plus a functional index on day(ts), a text index on `token`, a secondary index on
`token` (built at the last instant) and one on `hot` that is still building: each index reports the
files it pruned, or the precise reason it pruned none — its column not in the predicate, another
expression over its column, still building, stale for an older snapshot, skipped by the cost guard,
a fallback, a LIKE fragment shorter than its n-grams, or it ran and every file may match. The report
is derived from the plan and never changes it: the files the indexes pruned add up to the files the
prune left out, and a streamed prune reports the same."""

from __future__ import annotations

import shutil

import pytest
from pyspark.sql import SparkSession

from builder import LakepruneTable
from pruner.index.definitions import IndexState
from pruner.planner.limits import PruneLimits
from pruner.planner.prune import BoundPredicate, prune, prune_stream
from pruner.planner.result import IndexReport, PruneResult
from pruner.predicate.domain import Domain
from pruner.predicate.sql.trino import Call, ColumnRef, Constant, translate_trino
from pruner.predicate.tuple_domain import TupleDomain
from pruner.table.table import LakeTable
from pruner.types import ColumnType


@pytest.fixture(scope="module")
def location(indexed_table: str, spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    location = str(tmp_path_factory.mktemp("why_not") / "events")
    shutil.copytree(indexed_table, location)
    table = LakepruneTable(location, spark)
    table.sql("CREATE INDEX ts_day ON events (day(ts))")
    table.sql("CREATE INDEX token_text ON events USING text (token)")
    table.sql("CREATE INDEX by_token ON events USING secondary_index (token)")
    table.sql("CREATE INDEX by_hot ON events USING secondary_index (hot)", build=False)
    return location


@pytest.fixture(scope="module")
def table(location: str) -> LakeTable:
    return LakeTable.open(location)


def entry(result: PruneResult, name: str) -> IndexReport:
    return next(e for e in result.index_report if e.index == name)


def reason(table: LakeTable, where: str, name: str) -> str:
    """Why index `name` pruned nothing for `where`."""
    return why(prune(table, where), name)


def step_pruned(result: PruneResult, step: str) -> int:
    """The files a step of the explain record left out."""
    found = next(s for s in result.explain if s.step == step)
    return found.files_in - found.files_out


def why(result: PruneResult, name: str) -> str:
    found = entry(result, name)
    assert found.files_pruned == 0 and found.why_not is not None, found
    return found.why_not


def test_every_index_of_the_table_is_reported_in_plan_order(table: LakeTable) -> None:
    result = prune(table, "seq < 100")
    assert [(e.index, e.kind) for e in result.index_report] == [
        ("record_index", "record_index"),
        ("pstats", "partition_stats"),
        ("by_hot", "secondary_index"),
        ("by_hot_day", "secondary_index"),
        ("by_token", "secondary_index"),
        ("ts_day", "functional"),
        ("stats", "column_stats"),
        ("bf", "bloom_filters"),
        ("token_text", "text"),
    ]
    assert all((e.why_not is None) == (e.files_pruned > 0) for e in result.index_report)
    assert {d.name for d in table.definitions if d.state == IndexState.BUILDING} == {"by_hot"}


def test_pruned_files_are_counted_and_columns_not_in_the_predicate_named(table: LakeTable) -> None:
    result = prune(table, "seq < 100")
    assert entry(result, "stats") == IndexReport("stats", "column_stats", step_pruned(result, "column_stats"))
    assert entry(result, "stats").files_pruned > 0
    assert why(result, "bf") == "the predicate constrains none of its columns (token, id); it constrains seq"
    assert why(result, "record_index") == (
        "the predicate does not constrain every record key column (id not); it constrains seq"
    )
    leading = "the predicate does not constrain its leading column hot; it constrains seq"
    assert why(result, "by_hot_day") == leading
    assert why(result, "ts_day") == (
        "the predicate constrains neither ts_day (day(ts)) nor ts; it constrains seq"
    )
    assert why(result, "token_text") == "the predicate has no LIKE or text search on token"


@pytest.mark.parametrize(
    ("where", "name", "step"),
    [
        ("seq < 100", "stats", "column_stats"),
        ("day(ts) = 3", "ts_day", "functional_index"),
        ("token = 't7919'", "by_token", "secondary_index"),
        ("token LIKE '%t79%'", "token_text", "text_index"),
    ],
)
def test_an_index_that_pruned_counts_its_files(table: LakeTable, where: str, name: str, step: str) -> None:
    result = prune(table, where)
    assert entry(result, name).files_pruned == step_pruned(result, step) > 0
    assert entry(result, name).why_not is None


@pytest.mark.parametrize(
    "where",
    [
        "seq < 100",
        "token IN ('t7919', 't15838') AND hot = 'a'",
        "day(ts) = 3 AND region = 'eu'",
        "id IN (1, 2, 3, 5000)",
        "token LIKE 't79%' OR seq > 1100",
    ],
)
def test_the_files_the_indexes_pruned_add_up_to_the_files_left_out(table: LakeTable, where: str) -> None:
    result = prune(table, where)
    left_out = result.files_total - result.files_selected
    pruned = sum(e.files_pruned for e in result.index_report)
    assert pruned == left_out - step_pruned(result, "partition_values"), result.explain
    streamed = prune_stream(table, where).collect()
    assert streamed.index_report == result.index_report
    assert streamed.splits == result.splits


def test_another_expression_over_the_indexed_column(table: LakeTable) -> None:
    result = prune(table, "hour(ts) = 5")
    assert result.widened == ("function HOUR(ts) not indexed: HOUR(ts) = 5 ignored",)
    assert why(result, "ts_day") == "the predicate has HOUR(ts); this index holds day(ts)"
    # Trino's filter, left out when binding, says the same
    ts = ColumnRef("ts", ColumnType("timestamp"))
    bigint, boolean = ColumnType("bigint"), ColumnType("boolean")
    hour = Call("$equal", (Call("hour", (ts,), bigint), Constant(5, bigint)), boolean)
    translation = translate_trino([hour], table.query_schema, table.indexed_calls)
    result = prune(table, BoundPredicate(translation.domain, translation.widened))
    assert why(result, "ts_day").startswith("the predicate has HOUR(")
    assert why(result, "ts_day").endswith("; this index holds day(ts)")
    # a range on ts does not map onto the day of the month
    assert reason(table, "ts >= TIMESTAMP '2026-01-03 00:00:00'", "ts_day") == (
        "the predicate constrains ts, but not so that it maps onto day(ts) "
        "(= / IN on every column it reads, or a range where it is ordered)"
    )


def test_an_index_still_building_and_one_stale_for_an_older_snapshot(table: LakeTable) -> None:
    result = prune(table, "hot = 'h3'")
    assert why(result, "by_hot") == "still building: not read until its build has caught up"
    by_token = next(d for d in table.definitions if d.name == "by_token")
    older = [i.timestamp for i in table.timeline.completed() if i.timestamp < (by_token.complete_up_to or "")]
    result = prune(table, "token = 't7919'", snapshot=older[-1])
    assert why(result, "by_token") == (
        f"index by_token is complete from instant {by_token.complete_up_to}; snapshot {older[-1]} is older"
    )


def test_a_lookup_the_cost_guard_skipped(table: LakeTable) -> None:
    ids = TupleDomain.with_domains({"id": Domain.multiple_values(range(1_500))})
    result = prune(table, ids)
    for name in ("record_index", "bf"):
        assert why(result, name).startswith("id: 1,500 keys over "), why(result, name)
        assert "expected to prune" in why(result, name)


def test_a_fallback(table: LakeTable) -> None:
    passed = PruneLimits(deadline=1.0, clock=lambda: 1000.0)
    result = prune(table, "seq < 100", limits=passed)
    assert why(result, "stats") == (
        "fell back, files kept: the planning deadline passed before this step; files kept"
    )
    assert result.files_selected == result.files_total


def test_a_like_fragment_too_short_for_the_text_index(table: LakeTable) -> None:
    assert reason(table, "token LIKE '%t1%'", "token_text") == (
        "token LIKE '%t1%': fragments shorter than 3 require nothing: 't1'; "
        "token LIKE '%t1%': no term to look up in this index"
    )


def test_an_index_that_ran_and_kept_every_file(table: LakeTable) -> None:
    assert reason(table, "flag = true", "stats") == "it ran and every file it was given may hold a match"


def test_a_predicate_that_matches_no_row(table: LakeTable) -> None:
    result = prune(table, "seq < 10 AND seq > 20")
    assert result.files_selected == 0
    assert {e.why_not for e in result.index_report} == {
        "the predicate matches no row: every file was pruned before any index was read"
    }
