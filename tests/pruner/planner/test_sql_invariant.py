"""The invariant end to end from SQL: random predicates are translated to TupleDomains and planned;
an independent evaluator applies the SQL itself (three-valued logic) to every row of every file,
and no file holding a row for which the predicate is TRUE may be pruned."""

from __future__ import annotations

import math
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pruner.planner.prune import prune
from pruner.predicate.sql import translate
from pruner.predicate.values import is_nan
from pruner.table.table import LakeTable
from tests.pruner.conftest import indexed_table_on
from tests.pruner.planner.conftest import COLUMNS, Oracle
from tests.pruner.predicate.sql_oracle import evaluate


def literal(value: Any) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, datetime):
        return f"TIMESTAMP '{value.strftime('%Y-%m-%d %H:%M:%S.%f')}'"
    if isinstance(value, date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "0.5"  # pools hold no NaN; no inf literal in SQL
    if isinstance(value, Decimal):
        return str(value)
    return str(value)


@st.composite
def comparison(draw: st.DrawFn, pools: dict[str, list[Any]]) -> str:
    column = draw(st.sampled_from(COLUMNS))
    pool = pools[column]
    value = draw(st.sampled_from(pool))
    kind = draw(st.sampled_from(["cmp", "in", "between", "null", "like"]))
    if kind == "null":
        return f"{column} IS {draw(st.sampled_from(['', 'NOT ']))}NULL"
    if kind == "in":
        items = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4))
        return f"{column} {draw(st.sampled_from(['', 'NOT ']))}IN ({', '.join(literal(v) for v in items)})"
    if kind == "between":
        low, high = sorted(draw(st.lists(st.sampled_from(pool), min_size=2, max_size=2)))
        return f"{column} BETWEEN {literal(low)} AND {literal(high)}"
    if kind == "like" and isinstance(value, str):
        return f"{column} LIKE {literal(value[: draw(st.integers(0, len(value)))] + '%')}"
    operator = draw(st.sampled_from(["=", "<>", "<", "<=", ">", ">="]))
    return f"{column} {operator} {literal(value)}"


@st.composite
def predicates(draw: st.DrawFn, pools: dict[str, list[Any]], depth: int = 2) -> str:
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(comparison(pools))
    shape = draw(st.sampled_from(["AND", "OR", "NOT"]))
    if shape == "NOT":
        return f"NOT ({draw(predicates(pools, depth - 1))})"
    return f"({draw(predicates(pools, depth - 1))}) {shape} ({draw(predicates(pools, depth - 1))})"


@pytest.mark.spark  # the tables are written with Spark (requested by name, not as a parameter)
@pytest.mark.parametrize(
    ("backend", "examples"),
    [
        pytest.param("local", 120, id="ci"),
        pytest.param("local", 300, id="large", marks=pytest.mark.slow),
        pytest.param("s3", 25, id="s3", marks=pytest.mark.s3),  # each prune reads from the S3 server
        pytest.param("gcs", 25, id="gcs", marks=pytest.mark.gcs),  # ... from the Cloud Storage server
    ],
)
def test_no_file_matching_a_sql_predicate_is_pruned(
    request: pytest.FixtureRequest, backend: str, examples: int
) -> None:
    _holds_for_random_sql(*indexed_table_on(backend, request), examples)


def _holds_for_random_sql(location: str, oracle: Oracle, examples: int) -> None:
    table = LakeTable.open(location)
    schema = table.config.schema
    types = {c.name: str(c.type) for c in schema.columns}
    pools = {
        c: sorted(
            {
                r[c]
                for rows in oracle.rows.values()
                for r in rows[:25]
                if r[c] is not None and not is_nan(r[c])
            }
        )
        for c in COLUMNS
    }

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
    @given(predicates(pools))
    def check(where: str) -> None:
        tree = sqlglot.parse_one(where)
        result = prune(table, translate(where, schema).domain)
        selected = {s.path for s in result.splits}
        for path, rows in oracle.rows.items():
            if path not in selected:
                assert not any(evaluate(tree, row, types) is True for row in rows), f"{where}: pruned {path}"

    check()
