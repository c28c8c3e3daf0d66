"""RFC-63 use case 1 through Trino 476 and Presto 0.287 (their Thrift connectors): the functional
index `hour_of_day` is a hidden column of `events`; `WHERE hour_of_day BETWEEN 12 AND 13` returns
exactly the rows whose hour is 12 or 13 (checked against DuckDB reading the same files), and the
sidecar kept 2 files of 24 per day. The same for an index over an expression of two columns."""

from __future__ import annotations

import pytest

from pruner.sidecar import Sidecar
from tests.e2e.conftest import EVENTS_SCHEMA
from tests.e2e.engines import Engine
from tests.e2e.queries import served
from tests.e2e.warehouse import table_reference
from tests.support_events import DAYS


@pytest.mark.parametrize(
    ("column", "expression", "condition", "kept_per_day"),
    [
        ("hour_of_day", "hour(ts)", "BETWEEN 12 AND 13", 2),
        # an expression over two columns, computed by the sidecar for the Thrift connector
        ("hour_org", "hour(ts) * 10 + length(org_id)", "= 124", 1),
    ],
)
def test_a_query_on_a_hidden_index_column(
    running: tuple[Engine, Sidecar],
    events_table: str,
    column: str,
    expression: str,
    condition: str,
    kept_per_day: int,
) -> None:
    engine, sidecar = running
    columns = engine.query(f"SHOW COLUMNS FROM {engine.catalog}.{EVENTS_SCHEMA}.events")
    assert column not in [c[0] for c in columns]  # hidden: not in SELECT *
    before = served(sidecar)
    rows = engine.query(
        f"SELECT count(*), min({column}), max({column}), sum(id) "
        f"FROM {engine.catalog}.{EVENTS_SCHEMA}.events WHERE {column} {condition}"
    )
    after = served(sidecar)
    values = f"count(*), min({expression}), max({expression}), sum(id)"
    expected = table_reference(events_table, f"SELECT {values} FROM {{t}} WHERE {expression} {condition}")
    assert [tuple(r) for r in rows] == [tuple(e) for e in expected]
    assert after["files_in"] - before["files_in"] == 24 * DAYS
    assert after["files_out"] - before["files_out"] == kept_per_day * DAYS
