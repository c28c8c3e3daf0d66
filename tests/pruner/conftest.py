"""Fixtures shared by the planner and service tests: the indexed table of
`tests/pruner/planner/conftest.py`, built once per test run with Spark, a private copy of it for
tests that change it, copies of it on S3 and Cloud Storage, and the oracle that scans its files."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from builder import LakepruneTable
from pruner.table.table import LakeTable
from tests.pruner.planner.conftest import REGIONS, SCHEMA, Oracle, row
from tests.support import copy_table
from tests.support_gcs import FakeGcs
from tests.support_s3 import TEST_BUCKET, SeaweedS3, point_environment_at
from tests.support_xdist import made_once


def build_indexed_table(spark: SparkSession, location: str) -> str:
    """Create and fill the indexed table at `location` (a path, an `s3://` or a `gs://` URI)."""
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
    table.sql("CREATE INDEX by_hot_day ON events USING secondary_index (hot, day)")  # composite
    updates = [row(k, 1, REGIONS[(k + 1) % 4] if k % 40 == 0 else None) for k in range(0, 1200, 13)]
    table.upsert(spark.createDataFrame(updates, SCHEMA))
    table.delete(spark.createDataFrame([(k,) for k in range(7, 1200, 31)], "id bigint"))
    table.insert(spark.createDataFrame([row(k) for k in range(5000, 5030)], SCHEMA))
    return location


@pytest.fixture(scope="session")
def indexed_table(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The table's location; its parent directory holds nothing else (a warehouse root). One table
    for the run, written by the first worker that needs it (`made_once`): every test reads it
    only (`table_copy` for one that changes it)."""
    return made_once(tmp_path_factory, "planner", lambda made: build_indexed_table(spark, f"{made}/events"))


@pytest.fixture(scope="session")
def indexed_s3_table(indexed_table: str, s3_server: SeaweedS3) -> tuple[str, Oracle]:
    """The same table copied into a bucket of the session's S3 server, and its oracle (read from
    the bucket). Tests that use it need the `s3_environment` fixture too. A copy, not a second
    Spark write: what these tests read is the pruner's object-store path (lakeprune's writes to S3
    are the CLI's, crash recovery's and the cluster's tests)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        point_environment_at(s3_server, monkeypatch)
        bucket = s3_server.new_bucket(TEST_BUCKET)
        location = copy_table(indexed_table, f"s3://{bucket}/{uuid.uuid4().hex}/events")
        return location, Oracle(LakeTable.open(location).snapshot())


@pytest.fixture(scope="session")
def indexed_gcs_table(indexed_table: str, gcs_server: FakeGcs) -> tuple[str, Oracle]:
    """The same table copied into the session's Cloud Storage server, and its oracle (read from
    there). Tests that use it need `STORAGE_EMULATOR_HOST` pointing there too."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        gcs_server.point_environment_at(monkeypatch)
        location = copy_table(indexed_table, gcs_server.storage(f"{uuid.uuid4().hex}/events").uri)
        return location, Oracle(LakeTable.open(location).snapshot())


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


def indexed_table_on(backend: str, request: pytest.FixtureRequest) -> tuple[str, Oracle]:
    """The indexed table and its oracle on a local disk (`local`), on S3 (`s3`, with the AWS
    variables pointing at the session's server for the rest of the test) or on Cloud Storage
    (`gcs`, likewise `STORAGE_EMULATOR_HOST`), for tests parametrized by backend."""
    if backend == "s3":
        request.getfixturevalue("s3_environment")
        location, oracle = request.getfixturevalue("indexed_s3_table")
        return location, oracle
    if backend == "gcs":
        server: FakeGcs = request.getfixturevalue("gcs_server")
        server.point_environment_at(request.getfixturevalue("monkeypatch"))
        location, oracle = request.getfixturevalue("indexed_gcs_table")
        return location, oracle
    return request.getfixturevalue("indexed_table"), request.getfixturevalue("oracle")
