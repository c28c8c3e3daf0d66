"""Fixtures shared by the planner and service tests: the indexed table of
`tests/pruner/planner/conftest.py`, built once per test session with Spark, a private copy of it for
tests that change it, and the oracle that scans its files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from builder import LakepruneTable
from pruner.table.table import LakeTable
from tests.pruner.planner.conftest import REGIONS, SCHEMA, Oracle, row


@pytest.fixture(scope="session")
def indexed_table(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The table's location; its parent directory holds nothing else (a warehouse root)."""
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


@pytest.fixture(scope="session")
def lake(indexed_table: str) -> str:
    """The warehouse root holding the shared indexed table (read only)."""
    return str(Path(indexed_table).parent)


@pytest.fixture
def table_copy(indexed_table: str, tmp_path: Path) -> str:
    """A private copy of the indexed table, for tests that damage or change it."""
    target = tmp_path / "events"
    shutil.copytree(indexed_table, target)
    return str(target)


@pytest.fixture(scope="session")
def oracle(indexed_table: str) -> Oracle:
    return Oracle(LakeTable.open(indexed_table).snapshot())
