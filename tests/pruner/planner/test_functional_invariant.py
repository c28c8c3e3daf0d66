"""The invariant with functional predicates, on all three paths of RFC-63: the index name (virtual
column), the indexed expression, and the source columns (a range projected through monotonic
expressions only, `=` / `IN` mapped through any). An oracle computes every virtual column of every
row of every live file with the registry's Arrow implementation; no file it finds a match in may be
pruned."""

from __future__ import annotations

from datetime import timedelta

import pyarrow as pa
import pytest
from hypothesis import strategies as st

from pruner.index.functional import sql_context
from pruner.planner.prune import prune
from pruner.predicate.sql import translate
from pruner.table.table import LakeTable
from tests.pruner.planner.conftest import FunctionalOracle, assert_never_prunes_a_match, combined
from tests.support_events import BASE, NAMES


def ts_literal(hours: float) -> str:
    return f"TIMESTAMP '{(BASE + timedelta(hours=hours)).strftime('%Y-%m-%d %H:%M:%S')}'"


def quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


hours = st.integers(-1, 24)
atoms = st.one_of(
    st.builds(lambda a, b: f"hour_of_day BETWEEN {min(a, b)} AND {max(a, b)}", hours, hours),
    st.builds(lambda a, op: f"hour(ts) {op} {a}", hours, st.sampled_from(["=", "<", ">=", "<>"])),
    st.builds(lambda a: f"hour_list IN ({a}, {a + 1})", hours),
    st.builds(lambda d: f"datestr = '2026-03-0{d}'", st.integers(0, 3)),
    st.builds(lambda d: f"date_format(ts, '%Y-%m-%d') >= '2026-03-0{d}'", st.integers(0, 3)),
    st.builds(
        lambda a, b, op: f"ts {op} {ts_literal(a)} AND ts < {ts_literal(a + b)}",
        st.floats(-2, 50, allow_nan=False),
        st.floats(0, 5, allow_nan=False),
        st.sampled_from([">", ">="]),
    ),
    st.builds(lambda a: f"ts = {ts_literal(a)}", st.sampled_from([6 + 59 / 60, 5, 30.5])),
    st.builds(lambda n: f"lower(name) = {quoted(n.lower())}", st.sampled_from([n for n in NAMES if n])),
    st.builds(lambda n: f"name_lower IS {n}NULL", st.sampled_from(["", "NOT "])),
    st.builds(lambda a: f"length(name) <= {a}", st.integers(-1, 9)),
    st.builds(lambda a: f"minute_key > '2026030{a}'", st.integers(1, 3)),
    st.builds(lambda h: f"upper(name) = 'X' OR hour(ts) = {h}", hours),  # upper(): not indexed
    st.builds(
        lambda p: f"lower(substring(name, 1, 2)) = {quoted(p)}", st.sampled_from(["al", "bo", "ss", "zo", ""])
    ),
    st.builds(lambda p: f"name_prefix {p}", st.sampled_from(["IS NULL", "<> 'al'", "IN ('σί', 'i̇s')"])),
    st.builds(
        lambda h, o, op: f"{h} * 10 + length(org_id) {op} {o}",  # as indexed, or commuted below
        st.just("hour(ts)"),
        st.integers(0, 240),
        st.sampled_from(["=", "<", ">="]),
    ),
    st.builds(lambda v: f"length(org_id) + 10 * hour(ts) = {v}", st.integers(0, 240)),
    st.builds(
        lambda a, b: f"id BETWEEN {min(a, b)} AND {max(a, b)}",
        st.integers(-1, 12_500),
        st.integers(-1, 12_500),
    ),
    st.builds(
        lambda v, op: f"1000000 - id {op} {v}", st.integers(987_000, 1_000_001), st.sampled_from(["<", ">="])
    ),
    st.builds(lambda v: f"id * 2 IN ({v}, {v + 2}, 7)", st.integers(-2, 25_000)),
    st.builds(lambda v: f"2 * id = {2 * v}", st.sampled_from([500, 10_549, 12_349, 13])),
    # `=` / `IN` on source columns: mapped through any expression of them, ordered or not
    st.builds(
        lambda names, null: f"(name IN ({', '.join(quoted(n) for n in names)}){null})",
        st.lists(
            st.sampled_from([n for n in NAMES if n is not None] + ["Moved", "bob"]), min_size=1, max_size=3
        ),
        st.sampled_from(["", " OR name IS NULL"]),
    ),
    st.builds(lambda v: f"id IN ({v}, {v + 1}, {v + 10_000})", st.integers(-2, 12_500)),
    st.builds(
        lambda half, op: f"CASE WHEN hour(ts) < 12 THEN 'am' ELSE 'pm' END {op} '{half}'",
        st.sampled_from(["am", "pm", "x"]),
        st.sampled_from(["=", "<>", ">"]),
    ),
    st.builds(lambda half: f"day_half = '{half}'", st.sampled_from(["am", "pm"])),
    # secondary indexes over expressions: org_lower (lower(org_id)), id_key (id + 7)
    st.builds(lambda o: f"lower(org_id) IN ({quoted(o)}, 'x')", st.sampled_from(["org0", "org9", "ORG9"])),
    st.builds(lambda o: f"org_id = {quoted(o)}", st.sampled_from(["org9", "ORG9", "org1"])),
    st.builds(lambda v, op: f"id + 7 {op} {v}", st.integers(0, 12_600), st.sampled_from(["=", "<", ">="])),
    st.builds(lambda v: f"id_key IN ({v}, {v + 100})", st.integers(0, 12_600)),
    st.builds(
        lambda n, op: f"regexp_extract(org_id, '^org([0-9]+)', 1) {op} '{n}'",
        st.sampled_from(["0", "3", "9", "x"]),
        st.sampled_from(["=", "<>", ">"]),
    ),
    st.builds(
        lambda org, h: f"org_id IN ('{org}', 'org9') AND ts = {ts_literal(h)}",
        st.sampled_from(["org0", "org3"]),
        st.sampled_from([6 + 59 / 60, 5, 30.5]),
    ),
)
predicates = combined(atoms)


@pytest.fixture(scope="module")
def events_oracle(events_table: str) -> FunctionalOracle:
    return FunctionalOracle(LakeTable.open(events_table).snapshot())


def test_no_file_matching_a_functional_predicate_is_pruned(
    events_table: str, events_oracle: FunctionalOracle
) -> None:
    assert_never_prunes_a_match(events_table, events_oracle, predicates)


@pytest.mark.parametrize(
    ("where", "column"),
    [
        ("hour(ts) BETWEEN 12 AND 13", "hour_of_day"),
        ("HOUR( ts ) = 3", "hour_of_day"),
        ("date_format(ts, '%Y-%m-%d') = '2026-03-01'", "datestr"),
        ("lower(name) = 'bob'", "name_lower"),
        ("LOWER(SUBSTRING(name, 1, 2)) = 'bo'", "name_prefix"),
        ("length(org_id) + hour(ts) * 10 = 34", "hour_org"),
        ("(10 * hour(ts)) + length(org_id) = 34", "hour_org"),
        ("1000000 - id < 5", "id_desc"),
        ("CASE WHEN 12 > hour(ts) THEN 'am' ELSE 'pm' END = 'pm'", "day_half"),
        ("lower(org_id) = 'org9'", "org_lower"),
        ("7 + id = 10512", "id_key"),
        ("regexp_extract(org_id, '^org([0-9]+)', 1) = '9'", "org_number"),
    ],
)
def test_expressions_are_read_as_their_index(events_table: str, where: str, column: str) -> None:
    table = LakeTable.open(events_table)
    schema, expressions = sql_context(table.config.schema, table.definitions)
    assert column in translate(where, schema, expressions).domain.columns


def test_string_literals_that_look_like_calls_are_left_alone(events_table: str) -> None:
    table = LakeTable.open(events_table)
    schema, expressions = sql_context(table.config.schema, table.definitions)
    domain = translate("name = 'hour(ts)'", schema, expressions).domain
    assert domain.columns == ("name",)


def test_non_monotonic_functions_do_not_project(events_table: str) -> None:
    table = LakeTable.open(events_table)
    schema, expressions = sql_context(table.config.schema, table.definitions)
    # A ts range inside one hour on day 0: only monotonic indexes (datestr, minute_key) may use it.
    domain = translate(f"ts >= {ts_literal(12.1)} AND ts <= {ts_literal(12.2)}", schema, expressions).domain
    result = prune(table, domain)
    assert result.files_selected == 1
    assert pa.array([s.row_count for s in result.splits]).to_pylist() == [50]


def test_a_decreasing_expression_projects_source_ranges(events_table: str) -> None:
    # `id_desc` is 1000000 - id: a range on id maps to the reversed range of the index's values.
    # Ids are day * 10000 + hour * 100 + i: day 1, hour 5 is one file of the 48.
    table = LakeTable.open(events_table)
    result = prune(table, "id BETWEEN 10500 AND 10549")
    assert (result.files_total, result.files_selected) == (48, 1)
    assert prune(table, "id > 10500").files_selected == 24 - 5


def test_a_bloom_backed_expression_answers_equality(events_table: str) -> None:
    # `id_bloom` holds a bloom filter of id * 2 per file (fpp 0.01): 2 * id = 21098 is id 10549,
    # day 1, hour 5; a range on it is not probed.
    table = LakeTable.open(events_table)
    assert prune(table, "2 * id = 21098").files_selected <= 2  # the file, and rarely a false positive
    assert prune(table, "id * 2 = 21098 AND id_bloom IN (21098, 5)").files_selected <= 2
    ranged = prune(table, "id * 2 > 21098")
    assert ranged.files_selected == 48
    assert any("answers EQUAL / IN" in (step.skipped or "") for step in ranged.explain)


def test_an_in_list_maps_through_a_non_monotonic_expression(events_table: str) -> None:
    # `name_lower` is a value list of lower(name): no range of name says anything about it, but
    # name = 'Moved' (only in the rewritten file of day 0 hour 5) is lower(name) = 'moved'.
    table = LakeTable.open(events_table)
    result = prune(table, "name IN ('Moved', 'MOVED')")
    assert result.files_selected == 1
    mapped = next(s for s in result.explain if s.step == "functional_index")
    assert (mapped.files_in, mapped.files_out) == (48, 1), result.explain


def test_a_case_expression_prunes_by_its_branches(events_table: str) -> None:
    # `day_half` is 'am' for the files of hours 0-11 and 'pm' for the others; the file of day 0
    # hour 5 also holds three events moved to 06:59, which are 'am' as well.
    table = LakeTable.open(events_table)
    assert prune(table, "day_half = 'pm'").files_selected == 24
    assert prune(table, "CASE WHEN hour(ts) < 12 THEN 'am' ELSE 'pm' END = 'am'").files_selected == 24


def test_a_secondary_index_over_an_expression_finds_the_rows_files(events_table: str) -> None:
    # `org_lower` is a secondary index of lower(org_id), defined before the insert and maintained
    # by the upsert that moved three events of day 0 hour 5 to 06:59 with org_id 'org9'; `id_key`
    # one of id + 7, built after the insert. Each lookup reads the record keys of the value and
    # keeps their files.
    table = LakeTable.open(events_table)
    for where in ("lower(org_id) = 'org9'", "org_id IN ('org9', 'ORG9')", "org_lower = 'org9'"):
        result = prune(table, where)
        assert result.files_selected == 1, where
        step = next(s for s in result.explain if s.step == "secondary_index")
        assert (step.files_in, step.files_out) == (48, 1), (where, result.explain)
    assert prune(table, "id + 7 = 10512").files_selected == 1  # id 10505: day 1, hour 5
    assert prune(table, "id + 7 IN (10512, 107)").files_selected == 2
    assert prune(table, "id + 7 = 3").files_selected == 0
    # NULLs are not indexed: a domain that allows NULL keeps every file
    assert prune(table, "lower(org_id) = 'org9' OR org_lower IS NULL").files_selected == 48


def test_a_regexp_extract_index_answers_its_groups(events_table: str) -> None:
    # `org_number` is a value list of the digits after 'org': 'org9' only in the rewritten file of
    # day 0 hour 5; an org_id without a match would be NULL
    table = LakeTable.open(events_table)
    assert prune(table, "regexp_extract(org_id, '^org([0-9]+)', 1) = '9'").files_selected == 1
    assert prune(table, "org_id IN ('org9', 'xorg9')").files_selected == 1  # mapped through it


def test_a_secondary_index_over_an_expression_with_an_empty_domain_keeps_no_file(events_table: str) -> None:
    # id_key is id + 7: with id = 0 it is 7, which the IN list does not hold: no row matches
    assert (
        prune(LakeTable.open(events_table), "id_key IN (0, 100) AND id BETWEEN 0 AND 0").files_selected == 0
    )
