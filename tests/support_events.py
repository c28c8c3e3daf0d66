"""The events table of the functional index tests (RFC-63 use case 1): two days of hourly-ingested
events, partitioned by day, one file per hour (24 files per day), with functional indexes defined
both before the data (maintained by the write) and after it (built), then an upsert that rewrites
some files (so index rows of removed files are tombstoned)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from pyspark.sql import SparkSession

from builder import LakepruneTable

SCHEMA = "id bigint, org_id string, ts timestamp, name string, day date"
ROWS_PER_HOUR = 50
DAYS = 2
BASE = datetime(2026, 3, 1, tzinfo=UTC)
NAMES = ["Alice", "BOB", "ßtraße", "Σίσυφος", "", None, "İstanbul", "zoë"]
INDEXES_BEFORE = [
    "CREATE INDEX hour_of_day ON events (hour(ts))",
    "CREATE INDEX datestr ON events USING column_stats(date_format(ts, '%Y-%m-%d'))",
    # a secondary index over an expression, maintained by the insert and the upsert below
    "CREATE INDEX org_lower ON events USING secondary_index (lower(org_id))",
]
INDEXES_AFTER = [
    "CREATE INDEX hour_list ON events USING value_list (hour(ts))",
    "CREATE INDEX name_lower ON events USING value_list (lower(name))",
    "CREATE INDEX name_length ON events (length(name))",
    "CREATE INDEX minute_key ON events (date_format(ts, '%Y%m%d%H%i'))",
    # expression trees: nested calls, two columns, a decreasing function of the key
    "CREATE INDEX name_prefix ON events USING value_list (lower(substring(name, 1, 2)))",
    "CREATE INDEX hour_org ON events USING value_list (hour(ts) * 10 + length(org_id))",
    "CREATE INDEX id_desc ON events (1000000 - id)",
    "CREATE INDEX id_bloom ON events USING bloom_filters (id * 2) OPTIONS (fpp = 0.01)",
    "CREATE INDEX day_half ON events USING value_list (CASE WHEN hour(ts) < 12 THEN 'am' ELSE 'pm' END)",
    # built over the files written, then maintained by the upsert
    "CREATE INDEX id_key ON events USING secondary_index (id + 7)",
    "CREATE INDEX org_number ON events USING value_list (regexp_extract(org_id, '^org([0-9]+)', 1))",
]


def event(day: int, hour: int, i: int, version: int = 0) -> tuple[Any, ...]:
    ts = BASE + timedelta(days=day, hours=hour, seconds=i * 71 + version)
    return (day * 10_000 + hour * 100 + i, f"org{i % 4}", ts, NAMES[(i + hour) % len(NAMES)], ts.date())


def build_events(spark: SparkSession, location: str) -> str:
    table = LakepruneTable.create(
        location,
        SCHEMA,
        record_key="id",
        partition_by=["day"],
        ordering_field="ts",
        # 64 bytes per record are assumed before the first write: one file per hour of rows.
        properties={
            "write.target_file_size_bytes": 64 * ROWS_PER_HOUR,
            "write.small_file_limit_bytes": 1,
        },
        spark=spark,
    )
    for statement in INDEXES_BEFORE:
        table.sql(statement)
    rows = [event(d, h, i) for d in range(DAYS) for h in range(24) for i in range(ROWS_PER_HOUR)]
    table.insert(spark.createDataFrame(rows, SCHEMA))
    for statement in INDEXES_AFTER:
        table.sql(statement)
    # Late corrections: a few events of day 0 hour 5 move to 06:59 (their file is rewritten).
    moved = [
        (10_000 * 0 + 500 + i, "org9", BASE + timedelta(hours=6, minutes=59), "Moved", date(2026, 3, 1))
        for i in range(3)
    ]
    table.upsert(spark.createDataFrame(moved, SCHEMA))
    return location


def day_start(day: int) -> datetime:
    return BASE + timedelta(days=day)


__all__ = ["DAYS", "ROWS_PER_HOUR", "build_events", "date", "day_start", "event"]
