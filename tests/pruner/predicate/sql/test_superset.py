"""pruner.predicate.sql: the key property. For random predicates and random rows, a row for which
an independent three-valued-logic oracle (tests/pruner/predicate/sql_oracle.py) says TRUE matches
the translated tuple domain."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pruner.predicate.sql import translate
from tests.pruner.predicate.sql.strategies import COLUMNS, atoms, cases, predicates, single_comparison
from tests.pruner.predicate.sql.support import F32_01, NAN, SCHEMA, TYPES
from tests.pruner.predicate.sql_oracle import MODES, evaluate, like_regex

# The oracle itself ----------------------------------------------------------------------------


def oracle(where: str, row: dict[str, Any], mode: str = "exact") -> bool | None:
    return evaluate(sqlglot.parse_one(where), row, TYPES, mode)


def test_oracle_three_valued_logic() -> None:
    assert oracle("id = 1", {"id": 1}) is True
    assert oracle("id = 1", {"id": None}) is None
    assert oracle("NOT (id = 1)", {"id": None}) is None
    assert oracle("id = 1 OR TRUE", {"id": None}) is True
    assert oracle("id = 1 AND FALSE", {"id": None}) is False
    assert oracle("id IN (1, NULL)", {"id": 2}) is None
    assert oracle("id NOT IN (1, NULL)", {"id": 2}) is None
    assert oracle("id NOT IN (1, 3)", {"id": 2}) is True
    assert oracle("x < 1", {"x": NAN}) is False
    assert oracle("x <> 1", {"x": NAN}) is True
    assert oracle("NOT (x >= 1)", {"x": NAN}) is True
    assert oracle("x NOT BETWEEN 1 AND 2", {"x": NAN}) is True
    assert oracle("s LIKE 'a_%'", {"s": "ab"}) is True
    assert oracle("s LIKE 'a_%'", {"s": "a"}) is False
    assert oracle("s LIKE 'a!%' ESCAPE '!'", {"s": "a%"}) is True
    assert oracle("s LIKE 'a!%' ESCAPE '!'", {"s": "ab"}) is False
    assert oracle("b IS NOT TRUE", {"b": None}) is True
    assert oracle("d < TIMESTAMP '2026-01-01 10:00:00'", {"d": date(2026, 1, 1)}) is True
    assert oracle("x = 0.1", {"x": 0.1}) is False
    assert oracle("x = 0.1", {"x": 0.1}, "round64") is True
    assert oracle("r = 0.1", {"r": F32_01}, "round32") is True
    assert oracle("id = 9007199254740993e0", {"id": 2**53}, "round64") is True
    assert oracle("id = 9007199254740993e0", {"id": 2**53}) is False
    assert like_regex("a.b%") == "a\\.b.*"


# The key property -----------------------------------------------------------------------------
#
# Random predicates over every column type, and random rows whose values are drawn half of the time
# from the neighbourhood of the predicate's literals (where translations snap, round and cut
# prefixes), the rest from type boundaries and anywhere: a row the oracle finds TRUE under any of
# its modes must match the translation.


def check_superset(where: str, rows_: list[dict[str, Any]]) -> None:
    translation = translate(where, SCHEMA)
    tree = sqlglot.parse_one(where)
    for row in rows_:
        truths = [evaluate(tree, row, TYPES, mode) for mode in MODES]
        if True in truths:
            assert translation.domain.matches(row), (
                f"{where!r} is {truths} for {row} but {translation.domain} does not match it"
            )


PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(case=cases(predicates))
def test_translation_is_a_superset_of_the_oracle(case: tuple[str, list[dict[str, Any]]]) -> None:
    check_superset(*case)


@pytest.mark.slow
@settings(PROPERTY, max_examples=1200)
@given(case=cases(predicates))
def test_translation_is_a_superset_of_the_oracle_slow(case: tuple[str, list[dict[str, Any]]]) -> None:
    check_superset(*case)


@PROPERTY
@given(case=cases(atoms))
def test_atoms_and_their_negations(case: tuple[str, list[dict[str, Any]]]) -> None:
    where, rows_ = case
    check_superset(where, rows_)
    check_superset(f"NOT ({where})", rows_)


@PROPERTY
@given(cases_=st.tuples(*(single_comparison(column) for column in COLUMNS)))
def test_comparisons_at_their_literals(cases_: tuple[tuple[str, list[dict[str, Any]]], ...]) -> None:
    for where, rows_ in cases_:
        check_superset(where, rows_)
