"""The warehouse the end-to-end tests query through Trino and Presto, written once per session with
Spark: `trips` (partitioned by city, record key trip_id, ~40 small files, clustered by trip_id and
ts, column stats + partition stats + bloom filters + a secondary index on driver_id), `drivers`
(for a join of two lakeprune tables), `types` (one column per lakeprune type, with NULLs, empty
strings, unicode and extremes) and `wide` (a file larger than one page of rows). The DuckDB
reference reads the live Parquet files of each table's latest snapshot directly."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
from pyspark.sql import SparkSession

from builder import LakepruneTable
from pruner.table.table import LakeTable

SCHEMA_NAME = "lake"
TABLES = ("drivers", "trips", "types", "wide")
CITIES = ["ams", "ber", "cdg", "dub"]
TRIPS = 2_400
TRIPS_SCHEMA = (
    "trip_id bigint, city string, driver_id int, ts timestamp, fare decimal(8,2), distance double, "
    "note string, day date"
)
DRIVERS_SCHEMA = "driver_id int, name string, rating double"
TYPES_SCHEMA = (
    "id bigint, t tinyint, s smallint, i int, b bigint, f float, d double, m decimal(38,9), "
    "str string, bin binary, flag boolean, day date, ts timestamp"
)
BASE = datetime(2026, 3, 1, tzinfo=UTC)
NOTES = ["", "ok", "Zürich → 東京", "emoji 🚕", "a" * 300]
# `wide`: one file whose rows encode to ~4 MB, several pages at a 1 MB max-response-size, in row
# groups of ~256 KiB, so that an engine splitting files by byte ranges reads it as several splits.
WIDE_ROWS = 20_000
WIDE_ROW_GROUP_BYTES = 256 << 10
WIDE_SCHEMA = "id bigint, payload string"


def trip(key: int) -> tuple[Any, ...]:
    return (
        key,
        CITIES[key % 4],
        key % 50,
        BASE + timedelta(minutes=7 * key, microseconds=123_456 if key % 3 else 0),
        Decimal(key % 9000) / 100,
        None if key % 13 == 0 else key / 10,
        None if key % 17 == 0 else NOTES[key % len(NOTES)],
        (BASE + timedelta(minutes=7 * key)).date(),
    )


TYPE_ROWS: list[tuple[Any, ...]] = [
    (
        1,
        -128,
        -32768,
        -(2**31),
        -(2**63),
        -3.4028234663852886e38,
        -math.inf,
        Decimal("-99999999999999999999999999999.999999999"),
        "",
        b"",
        False,
        date(1, 1, 1),
        datetime(1900, 1, 1, tzinfo=UTC),
    ),
    (
        2,
        127,
        32767,
        2**31 - 1,
        2**63 - 1,
        3.4028234663852886e38,
        math.inf,
        Decimal("99999999999999999999999999999.999999999"),
        "Ünïcødé ✓ 東京",
        b"\x00\xff",
        True,
        date(9999, 12, 31),
        datetime(2262, 4, 11, 23, 47, 16, 854775, tzinfo=UTC),
    ),
    (3, None, None, None, None, None, None, None, None, None, None, None, None),
    (
        4,
        0,
        0,
        0,
        0,
        0.0,
        math.nan,
        Decimal("0.000000001"),
        "plain",
        b"bytes",
        False,
        date(1970, 1, 1),
        datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
    ),
    (
        5,
        1,
        1,
        1,
        1,
        1.5,
        -0.0,
        Decimal("-1.5"),
        " spaced ",
        b"\x01",
        True,
        date(2026, 11, 22),
        datetime(1970, 1, 1, 0, 0, 0, 1_000, tzinfo=UTC),
    ),
]


def build(spark: SparkSession, root: Path) -> Path:
    """Writes the three tables under `root/<SCHEMA_NAME>`; returns the warehouse root."""
    warehouse = root / SCHEMA_NAME
    small = {"write.target_file_size_bytes": 4_000, "write.small_file_limit_bytes": 2_000}
    trips = LakepruneTable.create(
        str(warehouse / "trips"),
        TRIPS_SCHEMA,
        record_key="trip_id",
        partition_by=["city"],
        properties=small,
        spark=spark,
    )
    trips.sql("CREATE INDEX stats ON trips USING column_stats")
    trips.sql("CREATE INDEX pstats ON trips USING partition_stats")
    trips.sql("CREATE INDEX bf ON trips USING bloom_filters (note, driver_id)")
    trips.sql("CREATE INDEX by_driver ON trips (driver_id)")  # secondary index (RFC-77)
    trips.insert(spark.createDataFrame([trip(k) for k in range(TRIPS)], TRIPS_SCHEMA))
    drivers = LakepruneTable.create(
        str(warehouse / "drivers"), DRIVERS_SCHEMA, record_key="driver_id", spark=spark
    )
    drivers.insert(
        spark.createDataFrame([(d, f"driver {d}", (d % 10) / 2) for d in range(0, 60)], DRIVERS_SCHEMA)
    )
    types = LakepruneTable.create(str(warehouse / "types"), TYPES_SCHEMA, record_key="id", spark=spark)
    types.insert(spark.createDataFrame(TYPE_ROWS, TYPES_SCHEMA))
    wide = LakepruneTable.create(
        str(warehouse / "wide"),
        WIDE_SCHEMA,
        record_key="id",
        properties={"write.row_group_bytes": WIDE_ROW_GROUP_BYTES},
        spark=spark,
    )
    payloads = spark.range(WIDE_ROWS).selectExpr(
        "id", "concat(repeat(sha2(cast(id AS string), 256), 3), 'é') AS payload"
    )
    wide.insert(payloads.coalesce(1))
    return warehouse


def _utc_duckdb() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    return connection


def duckdb_connection(warehouse: Path) -> duckdb.DuckDBPyConnection:
    """DuckDB with one view per table over exactly the live Parquet files of its latest snapshot."""
    connection = _utc_duckdb()
    for name in TABLES:
        table = LakeTable.open(str(warehouse / name))
        files = [table.storage.path(f.path) for f in table.snapshot().files()]
        listed = ", ".join(f"'{f}'" for f in files)
        connection.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet([{listed}])")
    return connection


def table_reference(location: str, sql: str, instant: str | None = None) -> list[list[Any]]:
    """`sql` run by DuckDB (UTC) with `{t}` reading exactly the live Parquet files of one table's
    snapshot (`instant`, else the latest)."""
    table = LakeTable.open(location)
    files = ", ".join(f"'{table.storage.path(f.path)}'" for f in table.snapshot(instant).files())
    rows = _utc_duckdb().execute(sql.format(t=f"read_parquet([{files}])")).fetchall()
    return [list(row) for row in rows]
