"""The tables of the partition evolution tests (RFC-63 use case 2): event logs of three
organisations, first partitioned by `org_id, datestr` (one file per organisation and day, four
days), then evolved to `org_id` alone and written two days per commit (one file per organisation
and commit, spanning two days), then a functional index on the event date built over both layouts.

`datestr` is a stored column (the old layout's partition column, `date_format(ts, '%Y-%m-%d')` as
the producer wrote it); the functional index on that expression is named `event_date`, since an
index may not share a name with a column. `late_changes` then updates and deletes records of
old-layout file groups, evolves the partitioning back and inserts more, for the write semantics
and the pruning oracle."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from pyspark.sql import SparkSession

from builder import LakepruneTable
from builder.write.writer import WriteResult

SCHEMA = "id bigint, org_id bigint, ts timestamp, datestr string, msg string"
ORGS = (1, 2, 3)
ROWS_PER_DAY = 10  # per organisation
OLD_DAYS = (0, 1, 2, 3)  # 2022-10-01 .. 2022-10-04, layout org_id=N/datestr=YYYY-MM-DD
NEW_COMMITS = ((4, 5), (6, 7))  # 2022-10-05 .. 2022-10-08, layout org_id=N
BASE = datetime(2022, 10, 1, tzinfo=UTC)
FUNCTIONAL_INDEX = "CREATE INDEX event_date ON events USING column_stats(date_format(ts, '%Y-%m-%d'))"


def event(org: int, day: int, i: int, version: int = 0) -> tuple[Any, ...]:
    ts = BASE + timedelta(days=day, minutes=i * 97 + version)  # i * 97 minutes stays within the day
    return (org * 100_000 + day * 100 + i, org, ts, ts.strftime("%Y-%m-%d"), f"m{i}v{version}")


def day_text(day: int) -> str:
    return (BASE + timedelta(days=day)).strftime("%Y-%m-%d")


def _rows(days: tuple[int, ...]) -> list[tuple[Any, ...]]:
    return [event(org, day, i) for org in ORGS for day in days for i in range(ROWS_PER_DAY)]


def build_evolved(spark: SparkSession, location: str) -> str:
    table = LakepruneTable.create(
        location,
        SCHEMA,
        record_key="id",
        partition_by=["org_id", "datestr"],
        ordering_field="ts",
        # Large targets and no topping-up: one new file per partition and commit.
        properties={"write.target_file_size_bytes": 1 << 20, "write.small_file_limit_bytes": 1},
        spark=spark,
    )
    table.sql("CREATE INDEX stats ON events USING column_stats")
    table.sql("CREATE INDEX pstats ON events USING partition_stats")
    table.insert(spark.createDataFrame(_rows(OLD_DAYS), SCHEMA))
    table.alter_partitioning(["org_id"])
    for days in NEW_COMMITS:
        table.insert(spark.createDataFrame(_rows(days), SCHEMA))
    table.sql(FUNCTIONAL_INDEX)
    return location


def late_changes(spark: SparkSession, location: str) -> list[WriteResult]:
    """Org 1's first three records of day 0 corrected within their day, one record of org 3 day 2
    re-assigned to org 2, org 2's whole day 1 deleted; then the partitioning evolves back to
    `org_id, datestr` (so the `org_id` files lack a current partition column) and a new day (8)
    for org 1 is written with it."""
    table = LakepruneTable(location, spark)
    updates = [event(1, 0, i, version=1) for i in range(3)]
    reassigned = event(3, 2, 4, version=1)
    updates.append((reassigned[0], 2, *reassigned[2:]))
    deleted = [(event(2, 1, i)[0],) for i in range(ROWS_PER_DAY)]
    results = [
        table.upsert(spark.createDataFrame(updates, SCHEMA)),
        table.delete(spark.createDataFrame(deleted, "id bigint")),
    ]
    table.alter_partitioning(["org_id", "datestr"])
    results.append(table.insert(spark.createDataFrame([event(1, 8, i) for i in range(ROWS_PER_DAY)], SCHEMA)))
    return results
