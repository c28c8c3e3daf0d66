"""The query set both engines run through the lakeprune catalog, each with the DuckDB query that
answers it over the same Parquet files, and the checks shared by the Trino and Presto suites:
results equal DuckDB's; the splits the sidecar served equal the files the planner kept, far fewer
than the table's files for selective queries; every mapped type round-trips."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from pruner.sidecar import Sidecar
from pruner.table.table import LakeTable
from tests.e2e.engines import Engine
from tests.e2e.warehouse import SCHEMA_NAME, duckdb_connection

TS_LOW, TS_HIGH = "2026-03-02 00:00:00", "2026-03-02 06:00:00"


@dataclass(frozen=True)
class Query:
    name: str
    engine_sql: str  # {t} is the lakeprune schema prefix
    duckdb_sql: str | None = None  # default: engine_sql without the prefix
    selective: bool = False  # the pruned file count must be far below the table's
    index_join: bool = False

    def for_engine(self, catalog: str = "lakeprune") -> str:
        return self.engine_sql.format(t=f"{catalog}.{SCHEMA_NAME}.")

    def for_duckdb(self) -> str:
        return (self.duckdb_sql or self.engine_sql).format(t="")


QUERIES = [
    Query(
        "point lookup",
        "SELECT trip_id, city, driver_id, note FROM {t}trips WHERE trip_id = 1234",
        selective=True,
    ),
    Query(
        "in list",
        "SELECT trip_id, city, distance FROM {t}trips WHERE trip_id IN (3, 77, 1500, 99999)",
        selective=True,
    ),
    Query(
        "clustered range",
        "SELECT trip_id, driver_id FROM {t}trips WHERE trip_id BETWEEN 100 AND 160",
        selective=True,
    ),
    Query(
        "timestamp range",
        f"SELECT trip_id FROM {{t}}trips WHERE ts >= TIMESTAMP '{TS_LOW}' AND ts < TIMESTAMP '{TS_HIGH}'",
        f"SELECT trip_id FROM {{t}}trips "
        f"WHERE ts >= TIMESTAMPTZ '{TS_LOW}+00' AND ts < TIMESTAMPTZ '{TS_HIGH}+00'",
        selective=True,
    ),
    Query(
        "string equality",
        "SELECT trip_id FROM {t}trips WHERE note = 'emoji 🚕' AND city = 'ams'",
        selective=True,
    ),
    Query("is null", "SELECT trip_id, city FROM {t}trips WHERE note IS NULL"),
    Query("count star", "SELECT count(*) FROM {t}trips"),
    Query(
        "aggregation",
        "SELECT city, count(*), sum(driver_id), round(avg(distance), 6), min(note), max(trip_id) "
        "FROM {t}trips GROUP BY city",
    ),
    Query(
        "join of two tables",
        "SELECT d.name, count(*) FROM {t}trips t JOIN {t}drivers d ON t.driver_id = d.driver_id "
        "WHERE t.trip_id < 300 AND d.rating >= 2 GROUP BY d.name",
    ),
    Query(
        "index join",
        "SELECT t.trip_id, t.city, t.driver_id FROM (VALUES 5, 77, 1500, 123456) v(k) "
        "JOIN {t}trips t ON t.trip_id = v.k",
        "SELECT t.trip_id, t.city, t.driver_id FROM (VALUES (5), (77), (1500), (123456)) v(k) "
        "JOIN {t}trips t ON t.trip_id = v.k",
        index_join=True,
    ),
    Query(
        "index join on a secondary index",
        "SELECT t.trip_id, t.driver_id FROM (VALUES 3, 7, 999) v(k) JOIN {t}trips t ON t.driver_id = v.k",
        "SELECT t.trip_id, t.driver_id FROM (VALUES (3), (7), (999)) v(k) "
        "JOIN {t}trips t ON t.driver_id = v.k",
        index_join=True,
    ),
]


def normalized(rows: list[Any], *, exact_decimals: bool = False) -> list[tuple[Any, ...]]:
    """Rows as sorted tuples, floats rounded to 9 significant digits, NaN comparable, instants as
    UTC ISO text (whatever tzinfo the client attached); decimals exact with `exact_decimals`, else
    as floats (the Thrift connector carries them as doubles)."""

    def value(v: Any) -> Any:
        if isinstance(v, float):
            return "nan" if math.isnan(v) else float(f"{v:.9g}")
        if isinstance(v, Decimal):
            return v if exact_decimals else float(f"{float(v):.9g}")
        if isinstance(v, datetime) and v.tzinfo is not None:
            return v.astimezone(UTC).isoformat()
        return v

    return sorted((tuple(value(v) for v in row) for row in rows), key=repr)


def counter(sidecar: Sidecar, name: str, **labels: str) -> float:
    value = sidecar.metrics.registry.get_sample_value(name, labels)
    return value or 0.0


def served(sidecar: Sidecar) -> dict[str, float]:
    """The sidecar counters a query moves: files kept by prunes, GetRows calls, index lookups."""
    return {
        "files_out": counter(sidecar, "lakeprune_prune_files_out_total", api="thrift"),
        "files_in": counter(sidecar, "lakeprune_prune_files_in_total", api="thrift"),
        "get_rows": counter(sidecar, "lakeprune_requests_total", api="thrift", method="getRows", status="ok"),
        "index_splits": counter(
            sidecar, "lakeprune_requests_total", api="thrift", method="getIndexSplits", status="ok"
        ),
    }


def check_query(
    engine: Engine, sidecar: Sidecar, warehouse: Path, query: Query, catalog: str = "lakeprune"
) -> None:
    """`query` through the Thrift catalog `catalog` answers as DuckDB does over `warehouse` (the
    files the sidecar serves, or a local copy of them); selective ones are pruned by the sidecar."""
    reference = duckdb_connection(warehouse).execute(query.for_duckdb()).fetchall()
    before = served(sidecar)
    rows = engine.query(query.for_engine(catalog))
    after = served(sidecar)
    assert normalized(rows) == normalized(reference), query.name
    delta = {k: after[k] - before[k] for k in after}
    if query.index_join:
        assert delta["index_splits"] > 0, f"{query.name}: the engine did not use the record-key index"
    if query.selective:
        files = len(LakeTable.open(str(warehouse / "trips")).snapshot().files())
        assert delta["files_in"] == files, query.name
        # Every split the planner kept was read once (one page each: the files are small), and
        # the planner kept far fewer files than the table has.
        assert delta["get_rows"] == delta["files_out"], f"{query.name}: {delta}"
        assert delta["files_out"] <= files / 4, f"{query.name}: kept {delta['files_out']} of {files} files"


def check_paged_scan(engine: Engine, sidecar: Sidecar, warehouse: Path) -> None:
    """A full scan of `wide` through the 1 MB catalog takes several pages per split, and arrives
    whole."""
    sql = "SELECT count(*), sum(length(payload)), max(payload), sum(id) FROM {t}wide"
    reference = duckdb_connection(warehouse).execute(sql.format(t="")).fetchall()
    before = served(sidecar)
    rows = engine.query(sql.format(t=f"lakeprune_paged.{SCHEMA_NAME}."))
    after = served(sidecar)
    assert normalized(rows) == normalized(reference)
    pages, splits = after["get_rows"] - before["get_rows"], after["files_out"] - before["files_out"]
    assert pages >= 3 * splits, f"{pages} GetRows pages for {splits} split(s)"


TYPE_COLUMNS = ["id", "t", "s", "i", "b", "f", "d", "m", "str", "bin", "flag", "day", "ts"]
DOUBLE_COLUMNS = ("f", "d", "m")


def check_types(engine: Engine, warehouse: Path) -> None:
    """Every mapped type through the engine equals DuckDB's reading of the files, converted as the
    connector documents: float and decimal as double, binary as lowercase hex, timestamps as UTC
    wall-clock milliseconds."""
    columns = ", ".join(TYPE_COLUMNS)
    got = engine.query(f"SELECT {columns} FROM {engine.catalog}.{SCHEMA_NAME}.types")
    reference = duckdb_connection(warehouse).execute(f"SELECT {columns} FROM types").fetchall()
    expected = normalized([[_expected(v) for v in row] for row in reference])
    actual = normalized(
        [[_engine_value(c, v) for c, v in zip(TYPE_COLUMNS, row, strict=True)] for row in got]
    )
    for want, have in zip(expected, actual, strict=True):
        assert have == want, dict(
            (c, (h, w)) for c, h, w in zip(TYPE_COLUMNS, have, want, strict=True) if h != w
        )


def _expected(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(str(value))
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, datetime):
        utc = value.astimezone(UTC).replace(tzinfo=None)
        return utc.replace(microsecond=utc.microsecond // 1000 * 1000).isoformat()
    return value


def _engine_value(column: str, value: Any) -> Any:
    """A value as the engine's Python client returned it, in the form `_expected` produces. The
    Presto client returns some values as text: timestamps, non-finite doubles, and dates it cannot
    represent in its own parsing (year 1)."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=None).isoformat()
    if isinstance(value, str) and column in DOUBLE_COLUMNS:
        return float(value)
    if isinstance(value, str) and column == "day":
        return date.fromisoformat(value)
    if isinstance(value, str) and column == "ts":
        return datetime.fromisoformat(value).isoformat()
    return value
