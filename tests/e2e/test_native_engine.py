"""Trino 476 started by `lakeprune trino start --grpc ... --sidecar ...`: catalog `lakeprune` is the
native connector (gRPC to the sidecar, Trino reads the Parquet files) and `lakeprune_thrift` the
Thrift one, side by side over the same warehouse. Through the native catalog, the e2e query corpus
answers exactly as DuckDB does over the same files — decimals exact (the Thrift catalog can only
carry them as doubles), timestamps to the microsecond, varbinary as bytes — and the sidecar's gRPC
counters show the pruning; functional-index predicates written as expressions prune; time travel
and the `$history` / `$files` / `$indexes` tables answer; SHOW STATS has distinct values, data
sizes and exact decimal ranges; a join's dynamic filter prunes the probe side; a sidecar killed
under a catalog gives a clear error while the other catalogs keep serving, and a catalog over two
sidecars spreads its calls over both and, when one is killed, answers through the other.
Runs when the plugin can be found or built (see `pruner.engines.plugin`); skipped, with the
reason, in a checkout without `connector/trino/`."""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy
import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from pruner.advisor.shapes import Operation, Shape
from pruner.advisor.workload import WorkloadLog, default_directory
from pruner.engines.native_catalog import NativeCatalog, native_catalog_properties
from pruner.format.instant import parse_instant
from pruner.format.path_columns import path_values
from pruner.index import sketches
from pruner.serving.config import ServeConfig
from pruner.sidecar import Sidecar
from pruner.table.describe import history, index_summaries
from pruner.table.table import LakeTable
from tests.e2e.conftest import EVENTS_SCHEMA, LOGS_SCHEMA, PEOPLE_SCHEMA, free_port
from tests.e2e.engines import Engine, SharedTrino, lakeprune_catalog_properties
from tests.e2e.native import check_query, native_plugin, pruned
from tests.e2e.queries import QUERIES, Query, normalized
from tests.e2e.text_logs import holding
from tests.e2e.warehouse import SCHEMA_NAME, TABLES, duckdb_connection, table_reference
from tests.support_adopt import Adopted, duckdb_rows, snapshot_files
from tests.support_events import DAYS
from tests.support_http import get as http_get
from tests.support_http import health
from tests.support_people import CASES as PEOPLE_CASES
from tests.support_people import FILES as PEOPLE_FILES
from tests.support_people import NAN_FILES, Case, people

pytestmark = [pytest.mark.slow, pytest.mark.engine]

# A native catalog on a sidecar of its own, killed by a test while the others keep serving.
DOOMED_CATALOG = "lakeprune_doomed"
DOOMED_TIMEOUT_S = 5
DOOMED_ATTEMPTS = 2
# A native catalog over two sidecars: one of its own (killed by a test) and the shared one.
PAIR_CATALOG = "lakeprune_pair"
ADOPTED_SCHEMA = "adopted"


@dataclass(frozen=True)
class Native:
    engine: Engine
    sidecar: Sidecar
    warehouse: Path
    events: str  # the RFC-63 events table's location
    adopted: Adopted  # a Hive-style directory adopted in place (issue 18), schema ADOPTED_SCHEMA
    logs: str  # the log table with text indexes (issue 37), schema LOGS_SCHEMA
    people: str  # indexes on the expressions users write (issue 38), schema PEOPLE_SCHEMA
    doomed: subprocess.Popen[bytes]  # `lakeprune serve` under DOOMED_CATALOG
    doomed_address: str
    partner: subprocess.Popen[bytes]  # `lakeprune serve` first in PAIR_CATALOG's address list
    partner_metrics_port: int


def _serve_process(
    warehouse: Path, grpc_port: int, metrics_port: int | None = None
) -> subprocess.Popen[bytes]:
    """`lakeprune serve` (gRPC only) as a process of its own, so that a test can kill it."""
    lakeprune = Path(sys.executable).with_name("lakeprune")
    command = [str(lakeprune), "serve", "-w", f"{SCHEMA_NAME}={warehouse}", "--grpc-port", str(grpc_port)]
    command += ["--thrift-port", "off", "--metrics-port", str(metrics_port or "off"), "--workers", "1"]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _catalog_properties(catalog: NativeCatalog) -> dict[str, str]:
    return {p.key: p.value for p in native_catalog_properties(catalog) if p.enabled}


@pytest.fixture(scope="module")
def native(request: pytest.FixtureRequest) -> Iterator[Native]:
    native_plugin()  # before the warehouse: a skip should not build it first
    shared: SharedTrino = request.getfixturevalue("dynamic_trino")
    lake_warehouse: Path = request.getfixturevalue("lake_warehouse")
    events: str = request.getfixturevalue("events_table")
    adopted: Adopted = request.getfixturevalue("adopted_hive")
    logs: str = request.getfixturevalue("text_logs")
    people: str = request.getfixturevalue("people_table")
    config = ServeConfig(
        {
            SCHEMA_NAME: str(lake_warehouse),
            EVENTS_SCHEMA: str(Path(events).parent),
            ADOPTED_SCHEMA: str(Path(adopted.location).parent),
            LOGS_SCHEMA: str(Path(logs).parent),
            PEOPLE_SCHEMA: str(Path(people).parent),
        },
        host="127.0.0.1",
        grpc_port=0,
        thrift_port=0,
        metrics_port=None,
    )
    sidecar = Sidecar(config).start()
    doomed_address = f"127.0.0.1:{free_port()}"
    doomed = _serve_process(lake_warehouse, int(doomed_address.rpartition(":")[2]))
    partner_port, partner_metrics_port = free_port(), free_port()
    partner = _serve_process(lake_warehouse, partner_port, partner_metrics_port)
    try:
        assert sidecar.wait_ready(30), "the sidecar did not load its catalog"
        doomed_catalog = NativeCatalog(
            doomed_address, request_timeout=f"{DOOMED_TIMEOUT_S}s", max_attempts=DOOMED_ATTEMPTS
        )
        pair_catalog = NativeCatalog(
            f"127.0.0.1:{partner_port},127.0.0.1:{sidecar.grpc_port}",
            request_timeout=f"{DOOMED_TIMEOUT_S}s",
            max_attempts=2,
        )
        extra = {
            DOOMED_CATALOG: _catalog_properties(doomed_catalog),
            PAIR_CATALOG: _catalog_properties(pair_catalog),
        }
        grpc = NativeCatalog(f"127.0.0.1:{sidecar.grpc_port}")
        catalogs = lakeprune_catalog_properties(grpc, f"127.0.0.1:{sidecar.thrift_port}") | extra
        with shared.catalogs(catalogs) as engine:
            yield Native(
                engine,
                sidecar,
                lake_warehouse,
                events,
                adopted,
                logs,
                people,
                doomed,
                doomed_address,
                partner,
                partner_metrics_port,
            )
    finally:
        for process in (doomed, partner):
            if process.poll() is None:
                process.kill()
            process.wait(10)
        sidecar.stop(2)


def reference(warehouse: Path, sql: str) -> list[list[Any]]:
    return [list(row) for row in duckdb_connection(warehouse).execute(sql).fetchall()]


def test_both_catalogs_list_the_warehouse(native: Native) -> None:
    catalogs = {row[0] for row in native.engine.query("SHOW CATALOGS")}
    assert {"lakeprune", "lakeprune_thrift"} <= catalogs
    for catalog in ("lakeprune", "lakeprune_thrift"):
        assert sorted(native.engine.query(f"SHOW TABLES FROM {catalog}.{SCHEMA_NAME}")) == [
            [t] for t in TABLES
        ]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_query_matches_duckdb_exactly(native: Native, query: Query) -> None:
    """The corpus through the native catalog: DuckDB's answer, decimals exact; selective queries
    and joins on the record key prune (joins through the dynamic filter)."""
    check_query(native.engine, native.sidecar, native.warehouse, query)


def test_decimal_sums_are_exact_through_the_native_catalog(native: Native) -> None:
    sql = "SELECT city, sum(fare), count(*) FROM {t}trips GROUP BY city ORDER BY city"
    got = native.engine.query(sql.format(t=f"lakeprune.{SCHEMA_NAME}."))
    assert got == reference(native.warehouse, sql.format(t=""))
    assert all(isinstance(row[1], Decimal) for row in got)
    thrift = native.engine.query(sql.format(t=f"lakeprune_thrift.{SCHEMA_NAME}."))
    assert all(isinstance(row[1], float) for row in thrift)  # Thrift carries decimal as double


def test_show_stats_has_distinct_values_data_sizes_and_exact_decimals(native: Native) -> None:
    """What Trino's cost-based optimizer reads (issue 41): distinct-value estimates within the
    sketches' error bound, varchar data sizes in bytes, and decimal ranges at their exact value."""
    shown = native.engine.query(f"SHOW STATS FOR lakeprune.{SCHEMA_NAME}.trips")
    by_column = {row[0]: row for row in shown if row[0] is not None}  # the last row is the table's
    [[drivers, fares, note_bytes, low_fare, high_fare]] = reference(
        native.warehouse,
        "SELECT count(DISTINCT driver_id), count(DISTINCT fare), sum(strlen(note)), min(fare), max(fare) "
        "FROM trips",
    )
    for column, distinct in (("driver_id", drivers), ("fare", fares)):
        estimate = by_column[column][2]
        assert abs(estimate - distinct) <= sketches.relative_error() * distinct, column
    assert by_column["note"][1] == pytest.approx(note_bytes, rel=1e-12)  # Trino rescales it as a double
    assert by_column["driver_id"][1] is None  # fixed width: Trino derives it
    assert (float(by_column["fare"][5]), float(by_column["fare"][6])) == (float(low_fare), float(high_fare))


def test_every_type_round_trips_exactly(native: Native) -> None:
    """decimal(38,9), timestamp(6) with time zone, varbinary, real, NaN and infinities, dates of
    years 1 and 9999: the values DuckDB reads from the same files, unconverted."""
    columns = "id, t, s, i, b, f, d, m, str, bin, flag, day, ts"
    got = [
        _as_real(row)
        for row in native.engine.query(f"SELECT {columns} FROM lakeprune.{SCHEMA_NAME}.types ORDER BY id")
    ]
    want = [_as_real(row) for row in reference(native.warehouse, f"SELECT {columns} FROM types ORDER BY id")]
    assert normalized(got, exact_decimals=True) == normalized(want, exact_decimals=True)
    described = {row[0]: row[1] for row in native.engine.query(f"DESCRIBE lakeprune.{SCHEMA_NAME}.types")}
    assert described["m"] == "decimal(38,9)"
    assert described["ts"] == "timestamp(6) with time zone"
    assert described["bin"] == "varbinary"
    assert described["f"] == "real"


def _as_real(row: list[Any]) -> list[Any]:
    """The `real` column (index 5) as the 32-bit float it is: Trino's client sends its shortest
    decimal text, DuckDB the exact widened double."""
    value = row[5]
    return [*row[:5], value if value is None else float(numpy.float32(value)), *row[6:]]


def test_sub_millisecond_timestamp_bounds(native: Native) -> None:
    """Trips 1, 2, 4, ... carry 123456 µs: bounds one microsecond either side select exactly them."""
    low, high = "2026-03-01 00:07:00.123455", "2026-03-01 00:07:00.123457"
    got = native.engine.query(
        f"SELECT trip_id, ts FROM lakeprune.{SCHEMA_NAME}.trips "
        f"WHERE ts > TIMESTAMP '{low} UTC' AND ts < TIMESTAMP '{high} UTC'"
    )
    want = reference(
        native.warehouse,
        f"SELECT trip_id, ts FROM trips WHERE ts > TIMESTAMPTZ '{low}+00' AND ts < TIMESTAMPTZ '{high}+00'",
    )
    assert got == want and [row[0] for row in got] == [1]
    assert got[0][1].microsecond == 123_456


@pytest.mark.parametrize(
    ("predicate", "duckdb_predicate", "kept_per_day"),
    [
        ("hour(ts) BETWEEN 12 AND 13", "hour(ts) BETWEEN 12 AND 13", 2),
        ("hour(ts) = 12", "hour(ts) = 12", 1),
        ("date_format(ts, '%Y-%m-%d') = '2026-03-02'", "strftime(ts, '%Y-%m-%d') = '2026-03-02'", 12),
        ("hour_of_day BETWEEN 12 AND 13", "hour(ts) BETWEEN 12 AND 13", 2),  # the hidden column by name
        # Trino's trees, matched by the sidecar: IN lists, nested calls, arithmetic over two columns
        ("hour(ts) IN (1, 2)", "hour(ts) IN (1, 2)", 2),
        ("lower(substring(name, 1, 2)) IN ('mo', 'xy')", "lower(substring(name, 1, 2)) IN ('mo', 'xy')", 1),
        ("hour(ts) * 10 + length(org_id) = 124", "hour(ts) * 10 + length(org_id) = 124", 1),
        ("1000000 - id < 990500", "1000000 - id < 990500", 12),
        (
            "regexp_extract(org_id, '^org([0-9]+)', 1) = '9'",
            "regexp_extract(org_id, '^org([0-9]+)', 1) = '9'",
            1,
        ),
    ],
)
def test_functional_index_predicates_prune(
    native: Native, predicate: str, duckdb_predicate: str, kept_per_day: int
) -> None:
    """RFC-63 queries as written: the connector sends Trino's expression, the sidecar matches it
    against the table's index expressions and prunes through them, Trino filters the rows."""
    before = pruned(native.sidecar)
    got = native.engine.query(
        f"SELECT count(*), sum(id) FROM lakeprune.{EVENTS_SCHEMA}.events WHERE {predicate}"
    )
    after = pruned(native.sidecar)
    want = table_reference(native.events, f"SELECT count(*), sum(id) FROM {{t}} WHERE {duckdb_predicate}")
    assert got == want and got[0][0] > 0
    considered, kept = after["in"] - before["in"], after["out"] - before["out"]
    assert considered == 24 * DAYS
    assert kept <= kept_per_day * DAYS, f"{predicate}: kept {kept} of {considered} files"


@pytest.mark.parametrize("case", PEOPLE_CASES, ids=lambda case: case.name)
def test_predicates_as_users_write_them_prune_through_expression_indexes(native: Native, case: Case) -> None:
    """Issue 38: indexes on `lower(substring(name, 1, 3))`, `salary + salary * pct`,
    `hour(from_unixtime(epoch))`, `(country, city)` and a bloom filter on `lower(email)`, each
    reached by the predicate as a user writes it in Trino: DuckDB's answer, few files kept."""
    before = pruned(native.sidecar)
    got = native.engine.query(
        f"SELECT count(*), sum(id) FROM lakeprune.{PEOPLE_SCHEMA}.people WHERE {case.trino}"
    )
    after = pruned(native.sidecar)
    assert got == table_reference(native.people, f"SELECT count(*), sum(id) FROM {{t}} WHERE {case.duckdb}")
    assert got[0][0] > 0
    considered, kept = after["in"] - before["in"], after["out"] - before["out"]
    assert considered == PEOPLE_FILES and 0 < kept <= case.kept, f"{case.name}: kept {kept} of {considered}"


def test_trinos_prunes_reach_the_workload_log_with_the_expressions_no_index_holds(native: Native) -> None:
    """What `lakeprune advise` reads: each prune Trino asked for, named as Trino's, with the shapes
    of its predicate — an equality on a column, and `hour(ts)`, which no index of trips holds and
    which reaches the sidecar only in the connector's engine filter."""
    location = LakeTable.open(str(native.warehouse / "trips")).storage.uri
    log = WorkloadLog(default_directory())
    before = len(log.entries(location)[0])
    native.engine.query(
        f"SELECT count(*) FROM lakeprune.{SCHEMA_NAME}.trips WHERE hour(ts) = 3 AND driver_id = 7"
    )
    entries = log.entries(location)[0][before:]
    assert [e.engine for e in entries] == ["trino"]
    wanted = {Shape("hour(ts)", Operation.EQUAL, True, 1), Shape("driver_id", Operation.EQUAL, values=1)}
    assert wanted <= set(entries[0].shapes)
    assert entries[0].files_total > entries[0].files_kept > 0
    assert set(entries[0].pruned_by) & {"by_driver", "bf", "stats", "pstats"}


def test_explain_analyze_verbose_shows_each_scans_prune_and_why_each_index_did_or_did_not(
    native: Native,
) -> None:
    """Issue 40 item 3, Trino's side of the report per index: `EXPLAIN ANALYZE VERBOSE` shows the
    scan's prune under "splits generation metrics" — the files the sidecar considered and kept (its
    own counters say the same), its time, and for every index of trips the files it pruned or why it
    pruned none."""
    sql = f"SELECT count(*) FROM lakeprune.{SCHEMA_NAME}.trips WHERE driver_id = 7"
    before = pruned(native.sidecar)
    [[plan]] = native.engine.query(f"EXPLAIN ANALYZE VERBOSE {sql}")
    after = pruned(native.sidecar)
    metrics = dict(re.findall(r"'(lakeprune [^']*)' = (?:LongCount)?\{(?:total|duration)=([^}]*)\}", plan))
    assert "splits generation metrics" in plan and "lakeprune files considered" in metrics, plan
    assert int(metrics["lakeprune files considered"]) == after["in"] - before["in"]
    assert int(metrics["lakeprune files kept"]) == after["out"] - before["out"]
    assert 0 < int(metrics["lakeprune files kept"]) < int(metrics["lakeprune files considered"])
    assert metrics["lakeprune fallbacks"] == "0" and "lakeprune prune time" in metrics
    reports = {key: int(value) for key, value in metrics.items() if key.startswith("lakeprune index ")}
    table = LakeTable.open(str(native.warehouse / "trips"))
    for name in ["record_index", *(d.name for d in table.definitions)]:
        assert [k for k in reports if k.startswith(f"lakeprune index {name} (")], f"{name} not reported"
    assert any(k.endswith("files pruned") and v > 0 for k, v in reports.items())
    assert "lakeprune index record_index (record_index) pruned none: " in "\n".join(reports)


# Trino's order of NaN: every comparison with it is false but <> (IEEE), as lakeprune's is.
NAN_PREDICATES: list[tuple[str, Callable[[float], bool]]] = [
    ("ratio > 13.5", lambda x: x > 13.5),
    ("ratio >= 14", lambda x: x >= 14),
    ("ratio < 1.5", lambda x: x < 1.5),
    ("ratio BETWEEN 2 AND 3", lambda x: 2 <= x <= 3),
    ("ratio <> 7", lambda x: x != 7),
    ("NOT (ratio < 14)", lambda x: not x < 14),
    ("ratio IN (1.5, 2.5)", lambda x: x in (1.5, 2.5)),
    ("is_nan(ratio)", math.isnan),
    ("NOT is_nan(ratio) AND ratio > 15", lambda x: not math.isnan(x) and x > 15),
]


@pytest.mark.parametrize(("predicate", "holds"), NAN_PREDICATES, ids=[p for p, _ in NAN_PREDICATES])
def test_nan_is_neither_above_nor_below_any_number_in_trino(
    native: Native, predicate: str, holds: Callable[[float], bool]
) -> None:
    """Issue 38 item 4, Trino's side: the files whose `ratio` is all NaN are kept exactly when
    Trino's predicate can hold for NaN (`<>`, a negation, `is_nan`), so every answer is the
    rows Trino's own order says (an oracle over the rows written), and ranges prune them."""
    before = pruned(native.sidecar)
    got = native.engine.query(
        f"SELECT count(*), sum(id) FROM lakeprune.{PEOPLE_SCHEMA}.people WHERE {predicate}"
    )
    after = pruned(native.sidecar)
    rows = [(row[0], row[-1]) for row in people() if row[-1] is not None and holds(row[-1])]
    assert got == [[len(rows), sum(key for key, _ in rows) if rows else None]]
    kept = after["out"] - before["out"]
    if not holds(math.nan):
        assert kept <= PEOPLE_FILES - len(NAN_FILES), f"{predicate}: kept {kept}, NaN files among them"


def test_an_expression_tree_index_through_trino(native: Native) -> None:
    """`hour_org` is (10 * hour(ts)) + length(org_id): the connector cannot compute its hidden column
    (it reads one call over a column), so selecting it fails with the way out, and the expression
    written as such answers as DuckDB does (and prunes, see test_functional_index_predicates_prune)."""
    with pytest.raises(Exception) as failed:
        native.engine.query(f"SELECT count(*) FROM lakeprune.{EVENTS_SCHEMA}.events WHERE hour_org = 124")
    assert "cannot compute" in str(failed.value) and "the expression itself" in str(failed.value)
    sql = "SELECT count(*), sum(id) FROM {t} WHERE hour(ts) * 10 + length(org_id) = 124"
    got = native.engine.query(sql.format(t=f"lakeprune.{EVENTS_SCHEMA}.events"))
    assert got == table_reference(native.events, sql) and got[0][0] > 0


@pytest.mark.parametrize(
    ("predicate", "needle", "lower"),
    [
        ("msg LIKE '%disk full%'", "disk full", False),
        ("strpos(msg, 'timeout after') > 0", "timeout after", False),
        ("starts_with(msg, 'ERROR disk')", "ERROR disk", False),
        ("regexp_like(msg, 'upstream (timeout|reset)')", "upstream ", False),
        ("lower(msg) LIKE '%user from istanbul logged%'", "user from istanbul logged", True),  # words
        ("msg LIKE '%full on node-_ (errno%' OR msg LIKE '%timeout after%'", None, False),
        ("substring(msg, 7, 40) LIKE '%disk full%'", "disk full", False),  # an index over an expression
    ],
)
def test_text_predicates_prune(native: Native, predicate: str, needle: str | None, lower: bool) -> None:
    """Issue 37: the connector sends Trino's text predicates to the sidecar, whose text indexes keep
    only the files holding the text (the sidecar's counters), and the answer is DuckDB's."""
    before = pruned(native.sidecar)
    got = native.engine.query(f"SELECT count(*), sum(id) FROM lakeprune.{LOGS_SCHEMA}.logs WHERE {predicate}")
    after = pruned(native.sidecar)
    duckdb_predicate = predicate.replace("regexp_like(", "regexp_matches(")
    want = table_reference(native.logs, f"SELECT count(*), sum(id) FROM {{t}} WHERE {duckdb_predicate}")
    assert got == want and got[0][0] > 0
    considered, kept = after["in"] - before["in"], after["out"] - before["out"]
    assert considered == len(LakeTable.open(native.logs).snapshot().files())
    expected = len(
        holding(native.logs, needle, lower)
        if needle is not None
        else holding(native.logs, "disk full") | holding(native.logs, "timeout after")
    )
    assert kept == expected, f"{predicate}: kept {kept} of {considered} files, {expected} hold the text"


def test_time_travel_reads_an_older_snapshot(native: Native) -> None:
    """The events table before its upsert moved three events from 05:xx to 06:59."""
    commits = [e for e in history(LakeTable.open(native.events)) if e["operation"] == "insert"]
    instant = commits[0]["instant"]
    sql = "SELECT count(*), sum(id) FROM {t} WHERE hour(ts) = 6"
    got = native.engine.query(
        f"SELECT count(*), sum(id) FROM lakeprune.{EVENTS_SCHEMA}.events FOR VERSION AS OF '{instant}' "
        "WHERE hour(ts) = 6"
    )
    assert got == table_reference(native.events, sql, instant)
    latest = native.engine.query(
        f"SELECT count(*), sum(id) FROM lakeprune.{EVENTS_SCHEMA}.events WHERE hour(ts) = 6"
    )
    assert latest == table_reference(native.events, sql) and latest != got
    # by time: the latest snapshot committed at or before it (the instant's own millisecond, in
    # UTC; a timestamp without a zone is read in the session's, UTC here)
    at = parse_instant(instant)
    for moment in (f"TIMESTAMP '{at:%Y-%m-%d %H:%M:%S.%f} UTC'", f"TIMESTAMP '{at:%Y-%m-%d %H:%M:%S.%f}'"):
        by_time = native.engine.query(
            f"SELECT count(*), sum(id) FROM lakeprune.{EVENTS_SCHEMA}.events FOR TIMESTAMP AS OF {moment} "
            "WHERE hour(ts) = 6"
        )
        assert by_time == got, moment
    with pytest.raises(Exception, match=r"no readable snapshot .*no snapshot committed at or before 2000"):
        native.engine.query(
            f"SELECT count(*) FROM lakeprune.{EVENTS_SCHEMA}.events "
            "FOR TIMESTAMP AS OF TIMESTAMP '2000-01-01 00:00:00 UTC'"
        )


@pytest.mark.parametrize(
    "where", ["true", "city = 'new york'", "city IS NULL", "day = DATE '2026-01-02'", "id = 5", "score > 8"]
)
def test_adopted_table_answers_as_duckdb_latest_and_adopted_snapshot(native: Native, where: str) -> None:
    """Issue 18: Trino's Parquet reader over adopted files that keep city and day only in their
    paths (the split's partition values fill them), before and after an upsert and a delete."""
    adopted = native.adopted
    sql = "SELECT id, name, score, city, day FROM {t} WHERE " + where + " ORDER BY id"
    table = f"lakeprune.{ADOPTED_SCHEMA}.hive"
    for version, instant in (("", None), (f" FOR VERSION AS OF '{adopted.adopted}'", adopted.adopted)):
        before = pruned(native.sidecar)
        got = native.engine.query(sql.format(t=table + version))
        after = pruned(native.sidecar)
        want = [list(row) for row in duckdb_rows(snapshot_files(adopted.location, instant), sql)]
        assert got == want, (where, instant)
        if where.startswith(("city", "id")):
            assert after["out"] - before["out"] < after["in"] - before["in"], (where, instant)


def test_metadata_tables(native: Native) -> None:
    table = LakeTable.open(native.events)
    instants = native.engine.query(
        f'SELECT instant FROM lakeprune.{EVENTS_SCHEMA}."events$history" ORDER BY instant'
    )
    assert [row[0] for row in instants] == [e["instant"] for e in history(table)]
    files = native.engine.query(
        f'SELECT count(*), sum(row_count) FROM lakeprune.{EVENTS_SCHEMA}."events$files"'
    )
    live = table.snapshot().files()
    assert files == [[len(live), sum(f.rows for f in live)]]
    indexes = native.engine.query(f'SELECT name, state FROM lakeprune.{EVENTS_SCHEMA}."events$indexes"')
    assert sorted(map(tuple, indexes)) == sorted((s["name"], s["state"]) for s in index_summaries(table))
    # an adopted table's typed partition values (city a string, day a date), shown as text
    adopted = LakeTable.open(native.adopted.location)
    shown = native.engine.query(
        f'SELECT partition, partition_values FROM lakeprune.{ADOPTED_SCHEMA}."hive$files"'
    )
    schema = adopted.config.schema
    assert sorted(map(tuple, shown)) == sorted(
        (
            f.partition or None,
            "/".join(f"{c}={'NULL' if v is None else v}" for c, v in path_values(f.partition, schema).items())
            or None,
        )
        for f in adopted.snapshot().files()
    )


STAR_JOIN = (
    "SELECT count(*), sum(t.fare) FROM lakeprune.{s}.trips t JOIN lakeprune.{s}.drivers d "
    "ON t.trip_id = d.driver_id WHERE d.name = 'driver 7'"
)


# A join's probe side waits this long for the build side's dynamic filter in the tests that prune
# through one: what they check is the pruning, not whether a loaded machine builds the filter
# within the catalog's default 1 s (on a busy CI machine it once did not, and the probe side kept
# every file, as it must).
DF_WAIT = "lakeprune.dynamic_filtering_wait_timeout = '60s'"


def _in_session(engine: Engine, sql: str, *session: str) -> list[list[Any]]:
    """`sql`'s rows on a connection with the session properties `session` set."""
    connection = engine.connect()
    try:
        cursor = connection.cursor()
        for setting in session:
            cursor.execute(f"SET SESSION {setting}")
            cursor.fetchall()
        cursor.execute(sql)
        return [list(row) for row in cursor.fetchall()]
    finally:
        connection.close()


def _scan(engine: Engine, sql: str, *session: str, table: str = "trips") -> tuple[int, int]:
    """Input rows and splits of the `table` scan in EXPLAIN ANALYZE, with the session properties set."""
    plan = "\n".join(str(row[0]) for row in _in_session(engine, f"EXPLAIN ANALYZE {sql}", *session))
    scan = plan[plan.index(f"table = lakeprune:{SCHEMA_NAME}.{table}") :]
    found = re.search(r"Input: ([\d,]+) rows \(.*?Splits: ([\d,]+)", scan)
    assert found is not None, f"no input line for the {table} scan in:\n{plan}"
    return int(found.group(1).replace(",", "")), int(found.group(2).replace(",", ""))


def test_dynamic_filter_prunes_the_fact_table(native: Native) -> None:
    """A star join: the dimension filtered to one driver; with dynamic filtering the sidecar gets
    trip_id IN (7) and Trino reads one file of `trips`, without it every file."""
    sql = STAR_JOIN.format(s=SCHEMA_NAME)
    assert native.engine.query(sql) == reference(
        native.warehouse,
        "SELECT count(*), sum(t.fare) FROM trips t JOIN drivers d ON t.trip_id = d.driver_id "
        "WHERE d.name = 'driver 7'",
    )
    rows, splits = _scan(native.engine, sql, "enable_dynamic_filtering = true", DF_WAIT)
    all_rows, all_splits = _scan(native.engine, sql, "enable_dynamic_filtering = false")
    files = len(LakeTable.open(str(native.warehouse / "trips")).snapshot().files())
    assert (all_rows, all_splits) == (
        native.engine.query(f"SELECT count(*) FROM lakeprune.{SCHEMA_NAME}.trips")[0][0],
        files,
    )
    assert splits == 1 and rows <= all_rows / 20, f"{rows} rows in {splits} splits with the dynamic filter"


def test_a_join_on_a_hidden_index_column_prunes_through_its_dynamic_filter(native: Native) -> None:
    """Issue 38 item 5: Trino pushes no dynamic filter on `hour(ts)` into a scan (it is computed
    above it), but one on the functional index's hidden column `hour_of_day` it does: the sidecar
    prunes the probe side through the index to the one file per day of the build side's hour."""
    join = "SELECT count(*), sum(e.id) FROM {t} e JOIN (SELECT hour(ts) AS h FROM {t} WHERE id = 11205) d ON "
    before = pruned(native.sidecar)
    got = _in_session(
        native.engine, join.format(t=f"lakeprune.{EVENTS_SCHEMA}.events") + "e.hour_of_day = d.h", DF_WAIT
    )
    after = pruned(native.sidecar)
    assert got == table_reference(native.events, join + "hour(e.ts) = d.h")
    assert got[0][0] > 0
    # both scans considered every file; the build side's record-key lookup and the probe side's
    # dynamic filter kept a few of them (without it, the probe side keeps all 24 per day)
    assert after["in"] - before["in"] == 2 * 24 * DAYS
    assert after["out"] - before["out"] <= 2 + DAYS, after["out"] - before["out"]


def test_a_large_file_is_read_as_byte_range_splits(native: Native) -> None:
    """Issue 41: with `max_split_size` below a file's size, the sidecar cuts the file into byte
    ranges and Trino's reader reads each row group in exactly one of them: the `wide` table's one
    file (in row groups of ~256 KiB) comes as several splits and answers as DuckDB does."""
    sql = f"SELECT count(*), sum(length(payload)), sum(id) FROM lakeprune.{SCHEMA_NAME}.wide"
    want = reference(native.warehouse, "SELECT count(*), sum(length(payload)), sum(id) FROM wide")
    rows, splits = _scan(native.engine, sql, "lakeprune.max_split_size = '64kB'", table="wide")
    whole_rows, whole_splits = _scan(native.engine, sql, "lakeprune.max_split_size = '1GB'", table="wide")
    assert (whole_rows, whole_splits) == (want[0][0], 1)
    assert rows == want[0][0] and splits >= 3, f"{rows} rows in {splits} splits"
    connection = native.engine.connect()
    try:
        cursor = connection.cursor()
        cursor.execute("SET SESSION lakeprune.max_split_size = '64kB'")
        cursor.fetchall()
        cursor.execute(sql)
        assert [list(row) for row in cursor.fetchall()] == want
    finally:
        connection.close()


def test_a_killed_sidecar_fails_its_catalog_clearly_and_no_other(native: Native) -> None:
    table = f"{DOOMED_CATALOG}.{SCHEMA_NAME}.trips"
    assert native.engine.query(f"SELECT count(*) FROM {table} WHERE trip_id = 7") == [[1]]
    os.kill(native.doomed.pid, signal.SIGKILL)
    native.doomed.wait(10)
    started = time.monotonic()
    with pytest.raises(Exception) as failed:
        native.engine.query(f"SELECT count(*) FROM {table} WHERE trip_id = 8")
    elapsed = time.monotonic() - started
    assert native.doomed_address in str(failed.value), str(failed.value)
    # within the catalog's attempts x request timeout (and Trino's own overhead), never a hang
    assert elapsed < DOOMED_ATTEMPTS * DOOMED_TIMEOUT_S + 10, f"the failure took {elapsed:.1f} s"
    # the engine and its other catalogs keep serving
    assert native.engine.query(f"SELECT count(*) FROM lakeprune.{SCHEMA_NAME}.trips WHERE trip_id = 8") == [
        [1]
    ]
    assert native.engine.query(f"SELECT count(*) FROM lakeprune_thrift.{SCHEMA_NAME}.drivers")[0][0] > 0


def _grpc_requests(metrics_text: str) -> float:
    return sum(
        sample.value
        for family in text_string_to_metric_families(metrics_text)
        for sample in family.samples
        if sample.name == "lakeprune_requests_total" and sample.labels.get("api") == "grpc"
    )


def test_a_catalog_over_two_sidecars_shares_the_calls_and_survives_losing_one(native: Native) -> None:
    sql = f"SELECT count(*), sum(fare) FROM {PAIR_CATALOG}.{SCHEMA_NAME}.trips WHERE trip_id < 30"
    expected = reference(native.warehouse, sql.replace(f"{PAIR_CATALOG}.{SCHEMA_NAME}.", ""))

    def shared_requests() -> float:
        return _grpc_requests(generate_latest(native.sidecar.metrics.registry).decode())

    def partner_requests() -> float:
        status, _, body = http_get(native.partner_metrics_port, "/metrics")
        assert status == 200
        return _grpc_requests(body.decode())

    assert health(native.partner_metrics_port) == (200, {"status": "SERVING"})
    partner_before, shared_before = partner_requests(), shared_requests()
    for _ in range(3):
        assert native.engine.query(sql) == expected
    assert partner_requests() > partner_before, "the first sidecar of the list served none of the calls"
    assert shared_requests() > shared_before, "the second sidecar of the list served none of the calls"

    os.kill(native.partner.pid, signal.SIGKILL)
    native.partner.wait(10)
    shared_before = shared_requests()
    for _ in range(3):  # calls that would have gone to the dead sidecar move to the other
        started = time.monotonic()
        assert native.engine.query(sql) == expected
        assert time.monotonic() - started < DOOMED_TIMEOUT_S + 10
    assert shared_requests() > shared_before
