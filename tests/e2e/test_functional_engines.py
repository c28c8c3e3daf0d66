"""RFC-63 use case 1 through Trino 476 and Presto 0.287: the functional index `hour_of_day` is a
hidden column of `events`; `WHERE hour_of_day BETWEEN 12 AND 13` returns exactly the rows whose
hour is 12 or 13 (checked against DuckDB reading the same files), and the sidecar kept 2 files of
24 per day."""

from __future__ import annotations

from pruner.sidecar import Sidecar
from tests.e2e.conftest import EVENTS_SCHEMA
from tests.e2e.engines import Engine
from tests.e2e.queries import served
from tests.e2e.warehouse import table_reference
from tests.support_events import DAYS


def test_time_of_day_query_on_the_hidden_index_column(
    running: tuple[Engine, Sidecar], events_table: str
) -> None:
    engine, sidecar = running
    columns = engine.query(f"SHOW COLUMNS FROM {engine.catalog}.{EVENTS_SCHEMA}.events")
    assert "hour_of_day" not in [c[0] for c in columns]  # hidden: not in SELECT *
    before = served(sidecar)
    rows = engine.query(
        "SELECT count(*), min(hour_of_day), max(hour_of_day), sum(id) "
        f"FROM {engine.catalog}.{EVENTS_SCHEMA}.events WHERE hour_of_day BETWEEN 12 AND 13"
    )
    after = served(sidecar)
    expected = table_reference(
        events_table,
        "SELECT count(*), min(hour(ts)), max(hour(ts)), sum(id) FROM {t} WHERE hour(ts) BETWEEN 12 AND 13",
    )
    assert [tuple(r) for r in rows] == [tuple(e) for e in expected]
    assert after["files_in"] - before["files_in"] == 24 * DAYS
    assert after["files_out"] - before["files_out"] == 2 * DAYS
