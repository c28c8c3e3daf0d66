"""The builder on a real Spark standalone cluster (a master and two workers on loopback, the
`spark_cluster` fixture), submitted with `spark-submit` as docs/spark.md tells a user to: the
`lakeprune` command line through its job file (`write --mode insert`; `table create` and `compact`
start no Spark job, and the `lakeprune` command runs them) and a Python-API job
(`tests/builder/cluster_job.py`: Spark SQL CREATE INDEX, built over the inserted files, of column
stats, bloom filters, a secondary and a functional index, then upserts and deletes in one Spark SQL
MERGE INTO, an append through the DataFrame writer, `df.write.format("lakeprune").mode("append")
.save(uri)`, and `LakepruneTable.adopt` of a directory written Hive-style). Two submissions, each
with its own driver and executors: a command's job-file path is the same for every command, and
the index build and adopt code on the cluster is the same whether the command line or the Python
API calls it (each submission costs ~20 s of JVM and Python starts on two cores). The table and
every input live in the tests' S3 bucket, so nothing relies on the driver's disk being the
executors'. The same steps run in the tests' own local Spark session (the `spark` fixture: the
command line in-process, the job's `main`) write a twin table (and adopt a twin directory), and
the two must be equal: rows, the rows of every file, index definitions, every index's answers to
prunes, and where the adopted tables' record indexes locate each key. (The twin is the reference,
not what is under test: the job file under `spark-submit` is what the cluster side runs. Written
in the shared session, the twin no longer starts six driver JVMs of its own that competed with
the cluster's on two cores.) The event log of each submission shows its tasks ran on executors of
both workers. The invariant (no file holding a
match is pruned) is checked at a reduced size on the cluster-written table."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from pruner.index.definitions import IndexState
from pruner.planner.prune import prune
from pruner.table.table import LakeTable
from pruner.types import TableSchema
from tests.builder import cluster_job
from tests.cli.test_cli import lakeprune
from tests.pruner.planner.conftest import (
    REGIONS,
    SCHEMA,
    FunctionalOracle,
    Oracle,
    assert_never_prunes_a_match,
    combined,
    row,
)
from tests.pruner.planner.test_invariant import holds_for_random_predicates
from tests.support import assert_record_index_consistent
from tests.support_s3 import TEST_BUCKET, SeaweedS3, point_environment_at
from tests.support_spark_cluster import SUBMIT_TIMEOUT_S, SparkCluster, Submission

CLUSTER_JOB = str(Path(__file__).with_name("cluster_job.py"))
# Predicates that each index answers (and the record index, partitions, stats on the source column).
PREDICATES = (
    "seq BETWEEN 100 AND 140",
    "score > 30",
    f"token = '{row(321)[4]}'",
    "id IN (5, 77, 333, 5003)",
    "hot = 'h3'",
    "hot IN ('h7', 'h11') AND region = 'eu'",
    "ts_day = '2026-01-03'",
    "date_format(ts, '%Y-%m-%d') BETWEEN '2026-01-02' AND '2026-01-03'",
    "region = 'sa' AND day >= DATE '2026-02-20'",
    "day = DATE '2026-01-10'",
)
# The secondary index that the job builds over the inserted files (before its MERGE).
SECONDARY_INDEX = "idx_hot"
# Files a region in the directory that the job adopts: more files than either side's executors, so
# that the cluster's adopt tasks can run on both workers.
ADOPTED_FILES_PER_REGION = 2
LAKEPRUNE_COMMAND = str(Path(sys.executable).with_name("lakeprune"))
# The planner steps of the indexes that the job builds.
INDEX_STEPS = {"column_stats", "bloom_filters", "secondary_index", "functional_index"}


@dataclass(frozen=True)
class Inputs:
    insert: str
    upsert: str
    delete: str


@dataclass(frozen=True)
class Twins:
    """The table written on the cluster (with its submissions) and its twin written locally."""

    cluster: str
    local: str
    cluster_submissions: list[Submission]

    @property
    def cluster_adopted(self) -> str:
        return adopted_location(self.cluster)

    @property
    def local_adopted(self) -> str:
        return adopted_location(self.local)


def adopted_location(events: str) -> str:
    """Where a side's directory for `table adopt` is, beside its table."""
    return f"{events.rpartition('/')[0]}/adopted"


def write_inputs(server: SeaweedS3, root: str) -> Inputs:
    """The Parquet inputs of the writes, in the bucket: 600 rows; updates of every 13th (some move
    region) plus 20 new keys; deletes of every 31st."""
    schema = TableSchema.parse(SCHEMA).to_arrow()
    updates = [row(k, 1, REGIONS[(k + 1) % 4] if k % 40 == 0 else None) for k in range(0, 600, 13)]
    batches = {
        "insert": pa.Table.from_pylist(
            [dict(zip(schema.names, row(k), strict=True)) for k in range(600)], schema
        ),
        "upsert": pa.Table.from_pylist(
            [dict(zip(schema.names, r, strict=True)) for r in updates + [row(k) for k in range(5000, 5020)]],
            schema,
        ),
        "delete": pa.table({"id": pa.array(range(7, 600, 31), pa.int64())}),
    }
    filesystem = server.filesystem()
    for name, data in batches.items():
        pq.write_table(data, f"{root.removeprefix('s3://')}/inputs/{name}.parquet", filesystem=filesystem)
    for side in ("cluster", "local"):
        write_hive_copy(server, batches["insert"], adopted_location(f"{root}/{side}/events"))
    return Inputs(*(f"{root}/inputs/{name}.parquet" for name in batches))


def write_hive_copy(server: SeaweedS3, rows: pa.Table, directory: str) -> None:
    """`rows` as Spark's `partitionBy("region")` writes them, the region only in the path, in
    `ADOPTED_FILES_PER_REGION` files a region: a directory for `table adopt`."""
    filesystem = server.filesystem()
    for region in REGIONS:
        part = rows.filter(pc.equal(rows.column("region"), region)).drop_columns(["region"])
        size = math.ceil(part.num_rows / ADOPTED_FILES_PER_REGION)
        for number in range(ADOPTED_FILES_PER_REGION):
            path = f"{directory.removeprefix('s3://')}/region={region}/part-{number:05d}.parquet"
            pq.write_table(part.slice(number * size, size), path, filesystem=filesystem)


@dataclass(frozen=True)
class Step:
    """One builder step: the job file or the Python-API job with its arguments, as a user would
    submit them to a cluster; `spark` is False for a step that writes metadata only (`table
    create`, `compact`, which folds small index logs in process), which on the
    cluster's side the `lakeprune` command runs, as a user would: a `spark-submit` would start a
    driver and an executor on each worker to run no task."""

    arguments: list[str]
    spark: bool = True


def build_steps(job: str, location: str, inputs: Inputs) -> list[Step]:
    """The builder steps, in order."""
    return [
        Step([job, "table", "create", location, "--schema", SCHEMA, "--record-key", "id",
              "--partition-by", "region", "--property", "write.target_file_size_bytes=1920",
              "--property", "write.small_file_limit_bytes=960"], spark=False),
        Step([job, "write", location, "--input", inputs.insert, "--mode", "insert"]),
        Step([CLUSTER_JOB, location, inputs.upsert, inputs.delete, adopted_location(location)]),
        Step([job, "compact", location], spark=False),
    ]  # fmt: skip


def build_on_cluster(
    cluster: SparkCluster, steps: list[Step], env: dict[str, str], jars: list[str]
) -> list[Submission]:
    """Each step `spark-submit`ted to the cluster, one after the other; those that start no Spark
    job run by the `lakeprune` command itself."""
    submissions = []
    for step in steps:
        arguments = step.arguments[1:]  # without the job file
        if not step.spark:
            done = subprocess.run(
                [LAKEPRUNE_COMMAND, *arguments], env={**os.environ, **env}, capture_output=True,
                text=True, timeout=SUBMIT_TIMEOUT_S, check=False,
            )  # fmt: skip
            assert done.returncode == 0, failed(arguments, done.stdout, done.stderr)
            continue
        submission = cluster.submit(step.arguments, env, jars=jars)
        assert submission.returncode == 0, failed(arguments, submission.stdout, submission.stderr)
        print(f"{submission.seconds:.0f}s, {len(submission.task_executors)} tasks: {arguments[:2]}")
        submissions.append(submission)
    return submissions


def failed(arguments: list[str], stdout: str, stderr: str) -> str:
    """What a failed step printed, its tails."""
    return f"{arguments}: stdout {stdout[-2000:]}\nstderr {stderr[-4000:]}"


def build_locally(steps: list[Step]) -> None:
    """Each step in this process's Spark session: the command line's through `lakeprune`, the
    Python-API job's through its `main`."""
    for step in steps:
        application, *arguments = step.arguments
        if application == CLUSTER_JOB:
            cluster_job.main(*arguments)
        else:
            lakeprune(*arguments)


@pytest.fixture(scope="module")
def twins(spark_cluster: SparkCluster, s3_server: SeaweedS3, spark: SparkSession) -> Iterator[Twins]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        point_environment_at(s3_server, monkeypatch)
        root = f"s3://{s3_server.new_bucket(TEST_BUCKET)}/{uuid.uuid4().hex}"
        inputs = write_inputs(s3_server, root)
        job, jars = lakeprune("spark-job").strip(), lakeprune("spark-job", "--jars").strip().split(",")
        env = s3_server.aws_environment()
        cluster, local = f"{root}/cluster/events", f"{root}/local/events"
        # The two sides at once: the cluster's in a thread (it waits for its processes), the local
        # one here (PySpark's active session is this thread's).
        with ThreadPoolExecutor(1) as pool:
            submitted = pool.submit(
                build_on_cluster, spark_cluster, build_steps(job, cluster, inputs), env, jars
            )
            build_locally(build_steps(job, local, inputs))
            submissions = submitted.result()
        yield Twins(cluster, local, submissions)


def canonical(value: Any) -> Any:
    """NaN as a string, so that rows holding one compare equal."""
    return "NaN" if isinstance(value, float) and math.isnan(value) else value


def file_contents(oracle: Oracle) -> dict[str, tuple[tuple[Any, ...], ...]]:
    """Each live file's rows (canonical, in file order), by file path."""
    return {
        path: tuple(tuple(canonical(v) for v in r.values()) for r in rows)
        for path, rows in oracle.rows.items()
    }


def layout(location: str) -> list[tuple[str, tuple[tuple[Any, ...], ...]]]:
    """Every live file as (partition, its rows), sorted: the table without file names and instants."""
    snapshot = LakeTable.open(location).snapshot()
    contents = file_contents(Oracle(snapshot))
    return sorted((f.partition, contents[snapshot.table.storage.full_uri(f.path)]) for f in snapshot.files())


def prune_answer(location: str, where: str) -> tuple[list[tuple[int, ...]], list[tuple[Any, ...]]]:
    """The files a prune keeps (as the keys each holds) and its explain steps (without timings)."""
    table = LakeTable.open(location)
    keys = {
        path: tuple(sorted(r["id"] for r in rows)) for path, rows in Oracle(table.snapshot()).rows.items()
    }
    result = prune(table, where)
    kept = sorted(keys[s.path] for s in result.splits)
    steps = [
        (s.step, s.index, s.columns, s.files_in, s.files_out, s.skipped, s.fallback) for s in result.explain
    ]
    return kept, steps


def test_the_cluster_writes_what_local_writes(twins: Twins, s3_environment: SeaweedS3) -> None:
    cluster, local = layout(twins.cluster), layout(twins.local)
    assert len(cluster) > 20  # many small files over four partitions
    assert cluster == local
    # the MERGE inserted the 20 new keys and deleted every 31st, upserted or not (`write_inputs`);
    # the DataFrame writer appended the same 20 rows under keys moved by NEW_KEYS_OFFSET
    ids = {r[0] for _, rows in cluster for r in rows}
    new_keys = range(5000, 5020)
    appended = {k + cluster_job.NEW_KEYS_OFFSET for k in new_keys}
    assert ids == (set(range(600)) | set(new_keys) | appended) - set(range(7, 600, 31))


def test_every_index_answers_as_on_local(twins: Twins, s3_environment: SeaweedS3) -> None:
    definitions = {
        location: [(d.name, d.index_type, d.columns, d.state) for d in LakeTable.open(location).definitions]
        for location in (twins.cluster, twins.local)
    }
    assert definitions[twins.cluster] == definitions[twins.local]
    states = {name: state for name, _, _, state in definitions[twins.cluster]}
    assert states[SECONDARY_INDEX] == IndexState.READY  # built over the insert, kept by the MERGE
    pruned_by = set()
    for where in PREDICATES:
        answer = prune_answer(twins.cluster, where)
        assert answer == prune_answer(twins.local, where), where
        pruned_by |= {step[1] for step in answer[1] if step[4] < step[3]}
    assert pruned_by >= INDEX_STEPS  # each built index removed files in some prune


def test_executors_on_both_workers_ran_the_cluster_tasks(twins: Twins, spark_cluster: SparkCluster) -> None:
    spark_jobs = [s for s in twins.cluster_submissions if s.task_executors]
    # The insert and the job of indexes, MERGE, append and adopt (the other steps: none).
    assert len(spark_jobs) == len(twins.cluster_submissions) == 2
    for submission in spark_jobs:
        assert set(submission.task_executors) <= set(submission.executor_workers)  # none ran in the driver
        assert submission.workers_that_ran_tasks == set(spark_cluster.worker_web_ports)
    applications = spark_cluster.state()["completedapps"]
    assert isinstance(applications, list)
    assert sum(a["state"] == "FINISHED" for a in applications) >= len(spark_jobs)


def adopted_keys(location: str) -> dict[str, tuple[str, str]]:
    """Each key of an adopted table where its record index puts it: (partition, file path)."""
    snapshot = LakeTable.open(location).snapshot()
    paths = {f.file_group: f.path for f in snapshot.files()}
    entries = snapshot.record_index().read_all().to_pylist()
    return {e["key"]: (e["partition"], paths[e["file_group"]]) for e in entries}


def test_the_cluster_adopts_what_local_adopts(twins: Twins, s3_environment: SeaweedS3) -> None:
    cluster = adopted_keys(twins.cluster_adopted)
    assert len(cluster) == 600
    assert {partition for partition, _ in cluster.values()} == {f"region={r}" for r in REGIONS}
    assert cluster == adopted_keys(twins.local_adopted)
    assert_record_index_consistent(twins.cluster_adopted)  # each key in the one file that holds it
    for where in ("id IN (5, 77, 333)", "region = 'eu' AND seq < 100"):
        assert prune_answer(twins.cluster_adopted, where) == prune_answer(twins.local_adopted, where)


hot_values = st.sampled_from(["a", "h0", "h3", "h12", "zz"])
days = st.integers(1, 7).map(lambda d: f"2026-01-{d:02d}")  # the table's timestamps span 2026-01-01 .. 06
functional_atoms = st.one_of(
    st.builds(lambda a, b: f"ts_day BETWEEN '{min(a, b)}' AND '{max(a, b)}'", days, days),
    st.builds(
        lambda d, op: f"date_format(ts, '%Y-%m-%d') {op} '{d}'", days, st.sampled_from(["=", "<", ">=", "<>"])
    ),
    st.builds(lambda d, h: f"ts >= TIMESTAMP '{d} {h:02d}:00:00'", days, st.integers(0, 23)),
    st.builds(lambda v: f"hot = '{v}'", hot_values),
    st.builds(lambda a, b: f"hot IN ('{a}', '{b}')", hot_values, hot_values),
    st.builds(lambda k: f"id = {k}", st.integers(0, 620)),
    st.builds(lambda k: f"seq < {k}", st.integers(0, 620)),
)


def test_no_matching_file_is_pruned_on_the_cluster_written_table(
    twins: Twins, s3_environment: SeaweedS3
) -> None:
    snapshot = LakeTable.open(twins.cluster).snapshot()
    holds_for_random_predicates(twins.cluster, Oracle(snapshot), 30)
    assert_never_prunes_a_match(twins.cluster, FunctionalOracle(snapshot), combined(functional_atoms), 30)
