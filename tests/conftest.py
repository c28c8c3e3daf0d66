"""Shared fixtures. One SparkSession serves the whole test session (Spark on 2 cores is the
slowest thing here); tests that use it are marked `spark`. Likewise one SeaweedFS S3 server
(`tests/support_s3.py`), started on first use and stopped at the end; tests that use it are marked
`s3`; one Azurite Azure Blob server (`tests/support_azure.py`), marked `azure`; one
fake-gcs-server Cloud Storage server (`tests/support_gcs.py`), marked `gcs`; and one Spark
standalone cluster, a master and two workers on loopback (`tests/support_spark_cluster.py`), marked
`cluster`. Every Spark JVM the tests start runs with the options of `tests/support_jvm.py`, and
every local Spark with one task thread (`TEST_SPARK_MASTER`). Under
pytest-xdist (as scripts/test.sh runs the suite) "the session" is a worker's: `tests/support_xdist.py`
groups the tests so that each server still starts once in a run, and each worker has at most one
SparkSession; the session tables that tests only read are written once a run (`made_once`), by the
first worker that needs each."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyspark.sql import SparkSession

from pruner.advisor.workload import STATE_HOME_VARIABLE
from pruner.storage import Storage
from tests import support_xdist
from tests.support_azure import Azurite
from tests.support_gcs import FakeGcs
from tests.support_jvm import long_lived_jvm_options, use_short_lived_jvm_options
from tests.support_s3 import TEST_BUCKET, SeaweedS3, point_environment_at
from tests.support_spark_cluster import SparkCluster
from tests.support_xdist import made_once

use_short_lived_jvm_options()

if TYPE_CHECKING:
    from builder.write.writer import WriteResult
    from tests.support_adopt import Adopted


# One task thread: scripts/test.sh runs two xdist workers on the suite's two cores, each with its
# own session, so each session has a core's worth. With `local[1]` a session starts half the Python
# task workers, and jobs sized by the default parallelism run half the tasks: tests/builder/test_adopt.py
# beside test_functional_index.py + test_secondary_index.py (two runs each, alternated) took 74 s / 92 s
# and 134 s / 149 s with `local[1]` against 108 s / 102 s and 173 s / 158 s with `local[2]`.
TEST_SPARK_MASTER = "local[1]"
# And so does every Spark that a test's child process embeds (the `lakeprune` command run as one).
os.environ.setdefault("LAKEPRUNE_SPARK_MASTER", TEST_SPARK_MASTER)


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    from builder.session import spark_session

    with long_lived_jvm_options():  # it lives as long as this pytest worker
        session = spark_session(master=TEST_SPARK_MASTER, app_name="lakeprune-tests")
    session.conf.set("spark.sql.shuffle.partitions", "4")
    yield session
    session.stop()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "spark" in fixtures:
            item.add_marker(pytest.mark.spark)
        if "s3_server" in fixtures:
            item.add_marker(pytest.mark.s3)
        if "azure_server" in fixtures:
            item.add_marker(pytest.mark.azure)
        if "gcs_server" in fixtures:
            item.add_marker(pytest.mark.gcs)
        if "spark_cluster" in fixtures:
            item.add_marker(pytest.mark.cluster)
    support_xdist.write_groups(config, items)


# Where the workers write each test's xdist group (`tests/support_xdist.py`), in the controller.
_GROUPS = pytest.StashKey[Path]()
# The state directory of this process's sidecars (their workload logs), removed at the end.
_STATE_HOME = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config, "workerinput", None) is None and config.getoption("dist", "no") == "loadgroup":
        config.stash[_GROUPS] = Path(tempfile.mkdtemp(prefix="lakeprune-xdist-")) / "groups.json"
    # Every sidecar a test starts, in this process or as a child, keeps its workload log here, not
    # in the user's ~/.local/state.
    state_home = Path(tempfile.mkdtemp(prefix="lakeprune-state-"))
    config.stash[_STATE_HOME] = state_home
    os.environ[STATE_HOME_VARIABLE] = str(state_home)


def pytest_unconfigure(config: pytest.Config) -> None:
    groups = config.stash.get(_GROUPS, None)
    if groups is not None:
        shutil.rmtree(groups.parent, ignore_errors=True)
    state_home = config.stash.get(_STATE_HOME, None)
    if state_home is not None:
        shutil.rmtree(state_home, ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """(pytest-xdist, in the controller) tell each worker where its groups go."""
    node.workerinput[support_xdist.GROUPS_FILE] = str(node.config.stash[_GROUPS])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """(pytest-xdist) `--dist loadgroup` schedules by `support_xdist`'s groups."""
    groups = config.stash.get(_GROUPS, None)
    return None if groups is None else support_xdist.GroupScheduling(config, log, groups)


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeaweedS3]:
    """The session's S3 server (SeaweedFS on loopback, data in a temporary directory)."""
    with contextlib.closing(SeaweedS3.start(tmp_path_factory.mktemp("seaweedfs"))) as server:
        yield server


@pytest.fixture(scope="session")
def azure_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Azurite]:
    """The session's Azure Blob server (Azurite on loopback, data in a temporary directory)."""
    with contextlib.closing(Azurite.start(tmp_path_factory.mktemp("azurite"))) as server:
        yield server


@pytest.fixture(scope="session")
def gcs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeGcs]:
    """The session's Cloud Storage server (fake-gcs-server on loopback, objects in memory)."""
    with contextlib.closing(FakeGcs.start(tmp_path_factory.mktemp("fake-gcs"))) as server:
        yield server


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkCluster]:
    """The session's Spark standalone cluster (a master and two 1-core workers on loopback)."""
    with contextlib.closing(SparkCluster.start(tmp_path_factory.mktemp("spark-cluster"))) as cluster:
        yield cluster


@pytest.fixture
def azure_storage(azure_server: Azurite) -> Storage:
    """A `Storage` at a new, empty prefix of a container on the session's Azure Blob server."""
    return azure_server.storage("lakeprune-tests", uuid.uuid4().hex)


@pytest.fixture
def gcs_storage(gcs_server: FakeGcs, monkeypatch: pytest.MonkeyPatch) -> Storage:
    """A `Storage` at a new, empty `gs://` prefix on the session's Cloud Storage server, with
    `STORAGE_EMULATOR_HOST` pointing every client (and every process started from here) at it."""
    gcs_server.point_environment_at(monkeypatch)
    return gcs_server.storage(uuid.uuid4().hex)


@pytest.fixture
def s3_environment(s3_server: SeaweedS3, monkeypatch: pytest.MonkeyPatch) -> SeaweedS3:
    """The AWS SDKs' variables pointing every client (and every process started from here) at the
    session's S3 server, for the test."""
    point_environment_at(s3_server, monkeypatch)
    return s3_server


@pytest.fixture
def s3_root(s3_environment: SeaweedS3) -> str:
    """A new, empty `s3://` prefix on the session's server, with the AWS SDKs' variables pointing
    every client (and every process started from here) at that server."""
    bucket = s3_environment.new_bucket(TEST_BUCKET)
    return f"s3://{bucket}/{uuid.uuid4().hex}"


@pytest.fixture(scope="session")
def lake_warehouse(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The end-to-end warehouse (`tests/e2e/warehouse.py`): trips, drivers and types, written once
    a run (`made_once`, as every session table below: each is read only)."""
    from tests.e2e.warehouse import build

    return made_once(tmp_path_factory, "warehouse", lambda made: build(spark, made))


@pytest.fixture(scope="session")
def adopted_hive(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Adopted:
    """A Hive-style directory written by plain Spark, adopted, upserted and deleted from
    (`tests/support_adopt.py`); alone in its parent directory (a warehouse root)."""
    from tests.support_adopt import build_adopted

    return made_once(tmp_path_factory, "adopted", lambda made: build_adopted(spark, made))


@pytest.fixture(scope="session")
def events_table(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    """RFC-63 use case 1 (`tests/support_events.py`): hourly event files with functional indexes."""
    from tests.support_events import build_events

    return made_once(tmp_path_factory, "events", lambda made: build_events(spark, f"{made}/events"))


@pytest.fixture(scope="session")
def people_table(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    """Issue 38's people table (`tests/support_people.py`): indexes on the expressions users write."""
    from tests.support_people import build_people

    return made_once(tmp_path_factory, "people", lambda made: build_people(spark, f"{made}/people"))


@pytest.fixture(scope="session")
def evolved_events(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    """RFC-63 use case 2 (`tests/support_evolution.py`): old `org_id/datestr` files, new `org_id`
    files, and a functional index on the event date over both."""
    from tests.support_evolution import build_evolved

    return made_once(tmp_path_factory, "evolved", lambda made: build_evolved(spark, f"{made}/events"))


@pytest.fixture(scope="session")
def evolved_events_changed(
    spark: SparkSession, evolved_events: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, list[WriteResult]]:
    """A copy of `evolved_events` after `late_changes` (updates and deletes in old-layout file
    groups, more inserts), with the results of those writes."""
    from tests.support_evolution import late_changes

    def make(made: Path) -> tuple[str, list[WriteResult]]:
        location = str(made / "events")
        shutil.copytree(evolved_events, location)
        return location, late_changes(spark, location)

    return made_once(tmp_path_factory, "evolved_changed", make)
