"""An indexed table for planner tests, built once per test session with Spark: 1,200 rows over
4 regions in ~40 small files, then updates (some move region, some set NaN), deletes and late
inserts. Columns cover every layout the planner must handle: `seq` clustered with the record key,
`hot` skewed, `token` high-cardinality and unclustered, `score` with NULL / NaN / infinities."""

from __future__ import annotations

import math
import shutil
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from builder import LakepruneTable
from pruner.predicate.tuple_domain import TupleDomain
from pruner.table.table import LakeTable, Snapshot

SCHEMA = (
    "id bigint, region string, seq bigint, hot string, token string, score double, "
    "amount decimal(10,2), day date, ts timestamp, flag boolean"
)
COLUMNS = [c.split()[0] for c in SCHEMA.split(", ")]
REGIONS = ["eu", "us", "ap", "sa"]


def row(key: int, version: int = 0, region: str | None = None) -> tuple[Any, ...]:
    score: float | None = (key % 97) / 3 + version
    if key % 23 == 0:
        score = None
    elif key % 29 == 0:
        score = math.nan
    elif key % 101 == 0:
        score = math.inf if key % 2 else -math.inf
    return (
        key,
        region or REGIONS[key % 4],
        key,
        "a" if key % 5 else f"h{key % 13}",
        f"t{(key * 7919) % 100003}",
        score,
        None if key % 17 == 0 else Decimal(key % 1000) / 100,
        date(2026, 1, 1) + timedelta(days=key % 60),
        datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=key * 13),
        key % 3 == 0,
    )


@pytest.fixture(scope="session")
def indexed_table(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    location = str(tmp_path_factory.mktemp("planner") / "events")
    table = LakepruneTable.create(
        location,
        SCHEMA,
        record_key="id",
        partition_by=["region"],
        properties={"write.target_file_size_bytes": 1920, "write.small_file_limit_bytes": 960},
        spark=spark,
    )
    table.sql("CREATE INDEX stats ON events USING column_stats")
    table.insert(spark.createDataFrame([row(k) for k in range(1200)], SCHEMA))
    table.sql("CREATE INDEX pstats ON events USING partition_stats")
    table.sql("CREATE INDEX bf ON events USING bloom_filters (token, id) OPTIONS (fpp = 0.01)")
    updates = [row(k, 1, REGIONS[(k + 1) % 4] if k % 40 == 0 else None) for k in range(0, 1200, 13)]
    table.upsert(spark.createDataFrame(updates, SCHEMA))
    table.delete(spark.createDataFrame([(k,) for k in range(7, 1200, 31)], "id bigint"))
    table.insert(spark.createDataFrame([row(k) for k in range(5000, 5030)], SCHEMA))
    return location


@pytest.fixture
def table_copy(indexed_table: str, tmp_path: Path) -> str:
    """A private copy of the indexed table, for tests that damage it."""
    target = tmp_path / "events"
    shutil.copytree(indexed_table, target)
    return str(target)


class Oracle:
    """Scans every live file of a snapshot: which files hold a row matching a TupleDomain."""

    def __init__(self, snapshot: Snapshot) -> None:
        storage = snapshot.table.storage
        self.rows = {
            storage.full_uri(f.path): pq.read_table(storage.path(f.path)).to_pylist()
            for f in snapshot.files()
        }

    def files_matching(self, predicate: TupleDomain) -> set[str]:
        return {path for path, rows in self.rows.items() if any(predicate.matches(r) for r in rows)}


@pytest.fixture(scope="session")
def oracle(indexed_table: str) -> Oracle:
    return Oracle(LakeTable.open(indexed_table).snapshot())
