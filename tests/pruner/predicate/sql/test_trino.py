"""pruner.predicate.sql.trino: Trino's expression trees as lakeprune SQL. What means the same in
Trino and in the registry is rewritten (comparisons, IN, arithmetic over integers and doubles, the
casts the registry has, time functions on timestamps with NULL kept possible, string functions);
everything else is left out with its reason, never approximated."""

from __future__ import annotations

import pytest

from pruner.predicate.sql import text_condition, translate
from pruner.predicate.sql.trino import from_trino, text_atoms, translate_trino
from pruner.predicate.text import TextMatch
from pruner.types import TableSchema
from tests.pruner.predicate.sql.engine_cases import (
    BIGINT,
    BOOLEAN,
    SCHEMA,
    STRING,
    TRINO,
    TRINO_DECIMAL,
    TS,
    TrinoCase,
    c,
    eq,
    f,
    k,
    text,
)


@pytest.mark.parametrize("case", [*TRINO, TRINO_DECIMAL], ids=lambda case: case.shape or case.read)
def test_each_engine_case(case: TrinoCase) -> None:
    """The engine-parity table's cases (`engine_cases.py`): read as the SQL lakeprune reads back,
    or left out with the reason."""
    filters = from_trino([case.tree], time_zone=case.time_zone)
    if case.read is None:
        assert filters.conjuncts == ()
        assert len(filters.dropped) == 1 and case.why in filters.dropped[0], filters.dropped
        return
    assert filters.dropped == ()
    assert filters.conjuncts == (case.read,)
    translate(case.read, SCHEMA)


def test_conditions_that_are_not_comparisons_are_left_out() -> None:
    for tree, reason in [
        (f("$like", BOOLEAN, c("s"), text("%a%")), "$like is not a condition"),
        (c("s"), "not a condition"),
    ]:
        (dropped,) = from_trino([tree]).dropped
        assert reason in dropped


def test_each_conjunct_stands_alone() -> None:
    unbound = eq(c("d"), text("someday"))  # not a date: that conjunct alone is left out
    translation = translate_trino([unbound, eq(c("id"), k(7)), eq(c("id"), k(7))], SCHEMA, {})
    assert translation.domain == translate('"id" = 7', SCHEMA).domain
    assert any("not bound" in note for note in translation.widened)


def test_a_computed_value_that_no_index_holds_is_left_out_before_it_is_rendered() -> None:
    # TPC-DS q8's `substr(ca_zip, 1, 5) IN (400 zips)` on a table without an index on it
    zips = f("$array", STRING, *(text(f"{10_000 + i}") for i in range(400)))
    conjunct = f("$in", BOOLEAN, f("substring", STRING, c("s"), k(1), k(5)), zips)
    translation = translate_trino([conjunct, eq(c("id"), k(7))], SCHEMA, {})
    assert translation.domain == translate('"id" = 7', SCHEMA).domain
    (note,) = translation.widened
    assert 'no index on SUBSTRING("s", 1, 5)' in note and len(note) < 500


def test_text_atoms_over_a_computed_string_are_read() -> None:
    """For text indexes over expressions: `$like`, `starts_with`, `regexp_like` and `strpos`
    compared over a computed string, as SQL; over a column or `lower` / `upper` of one the
    connector's text predicate has them; `upper` is not read."""
    head = f("substring", STRING, c("s"), k(1), k(12))
    likes = [
        f("$like", BOOLEAN, head, text("%disk full%")),
        f("$like", BOOLEAN, f("lower", STRING, head), text("%a!%%"), text("!")),
        f("$like", BOOLEAN, c("s"), text("%x%")),
        f("$like", BOOLEAN, f("lower", STRING, c("s")), text("%x%")),
        f("$like", BOOLEAN, f("upper", STRING, head), text("%X%")),
        eq(c("id"), k(1)),
        f("starts_with", BOOLEAN, head, text("conn")),
        f("regexp_like", BOOLEAN, head, text("time(out)?")),
        eq(k(0), f("strpos", BIGINT, head, text("fail")), "$less_than"),  # 0 < strpos(...)
        eq(f("strpos", BIGINT, c("s"), text("fail")), k(0), "$greater_than"),  # over a column
    ]
    assert text_atoms(likes) == (
        "SUBSTRING(\"s\", 1, 12) LIKE '%disk full%'",
        "LOWER(SUBSTRING(\"s\", 1, 12)) LIKE '%a!%%' ESCAPE '!'",
        "STARTS_WITH(SUBSTRING(\"s\", 1, 12), 'conn')",
        "REGEXP_LIKE(SUBSTRING(\"s\", 1, 12), 'time(out)?')",
        "STR_POSITION(SUBSTRING(\"s\", 1, 12), 'fail') > 0",
    )
    schema = TableSchema.parse("s string")
    for atom in text_atoms(likes):  # each requires text of the expression's
        condition = text_condition(atom, schema).condition
        assert isinstance(condition, TextMatch) and condition.subject.expression, atom
    at_noon = f(
        "$like", BOOLEAN, f("date_format", STRING, f("from_unixtime", TS, c("epoch")), text("%H")), text("1%")
    )
    assert text_atoms([at_noon], "Europe/Paris") == () and len(text_atoms([at_noon], "UTC")) == 1
