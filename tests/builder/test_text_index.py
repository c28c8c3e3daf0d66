"""Text indexes (issue 37) on the Spark side, over a column, `lower` of it and an expression
(`substring(msg, 1, 12)`, issue 38): built over existing files by CREATE INDEX, maintained by
inserts, upserts that change the text, deletes and compaction (every live file has a row, no removed
file keeps one), and pruning with them never drops a file holding a matching row (an oracle scans
each live file with Python's `in`), at the latest snapshot and at earlier ones (time travel)."""

from __future__ import annotations

from pathlib import Path

import grpc
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from builder import LakepruneTable
from builder.spark_source import recent_prunes
from pruner.client import PruningClient
from pruner.planner.planner import Planner
from pruner.planner.prune import prune
from pruner.planner.result import PruneResult
from pruner.predicate.text import (
    Case,
    Fragment,
    TextAny,
    TextCondition,
    TextMatch,
    TextPredicate,
    TextSubject,
)
from pruner.predicate.tuple_domain import TupleDomain
from pruner.service.gen.lakeprune.v1 import predicate_pb2 as ppb
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2_grpc as spb_grpc
from pruner.sidecar import Sidecar
from pruner.table.table import LakeTable, Snapshot
from tests.builder.test_spark_source import assert_same, files_read
from tests.pruner.service.conftest import SCHEMA as SCHEMA_NAME
from tests.pruner.service.conftest import make_config

SCHEMA = "id bigint, day string, msg string"
MSG, LOWER_MSG = TextSubject("msg"), TextSubject("msg", Case.LOWER)
TIMEOUT = TextMatch(MSG, (Fragment("timeout"),), (), "msg LIKE '%timeout%'")
ISTANBUL = TextMatch(LOWER_MSG, (), ("istanbul",), "text_match(lower(msg), 'istanbul')")
HEAD = TextSubject("substring(msg, 1, 12)", expression=True)
CONNECTION = TextMatch(HEAD, (Fragment("connection"),), (), "substring(msg, 1, 12) LIKE '%connection%'")
CONDITIONS: list[TextCondition] = [TIMEOUT, ISTANBUL, CONNECTION, TextAny((TIMEOUT, ISTANBUL))]


def _message(i: int) -> str | None:
    if i % 97 == 0:
        return f"connection timeout after {i}s"
    if i % 53 == 0:
        return f"İSTANBUL node {i} up"
    return None if i % 11 == 0 else f"request {i} ok"


def _rows(ids: range) -> list[tuple[int, str, str | None]]:
    return [(i, f"2026-03-0{1 + i % 2}", _message(i)) for i in ids]


def _prune(snapshot: Snapshot, condition: TextCondition) -> PruneResult:
    return Planner(snapshot).plan(TupleDomain.all(), (), TextPredicate(condition)).collect()


def _matches(condition: TextCondition, value: str | None) -> bool:
    if value is None:
        return False
    if condition == TIMEOUT:
        return "timeout" in value
    if condition == ISTANBUL:
        return "istanbul" in value.lower() or "istanbul" in value.lower().replace("i\u0307", "i")
    if condition == CONNECTION:
        return "connection" in value[:12]
    assert isinstance(condition, TextAny)
    return any(_matches(part, value) for part in condition.parts)


def _check(snapshot: Snapshot) -> int:
    """Every file holding a matching row is kept, for every condition; the number of files the
    conditions removed in all."""
    storage = snapshot.table.storage
    contents = {
        f.file_name: pq.read_table(storage.path(f.path), filesystem=storage.fs, columns=["msg"])[
            "msg"
        ].to_pylist()
        for f in snapshot.files()
    }
    removed = 0
    for condition in CONDITIONS:
        result = _prune(snapshot, condition)
        kept = {s.path.rsplit("/", 1)[-1] for s in result.splits}
        matching = {name for name, values in contents.items() if any(_matches(condition, v) for v in values)}
        assert matching <= kept, condition
        removed += len(contents) - len(kept)
        step = next(s for s in result.explain if s.step == "text_index")
        assert step.files_out == len(kept) and not step.fallback
    return removed


def _covered(location: str) -> dict[str, set[tuple[str, str]]]:
    table = LakeTable.open(location)
    out = {}
    for definition in table.definitions:
        rows = table.snapshot().index_partition(table.spec(definition)).read_all()
        out[definition.name] = set(
            zip(rows["partition"].to_pylist(), rows["file_name"].to_pylist(), strict=True)
        )
    return out


def _assert_covered(table: LakepruneTable) -> None:
    live = {(f.partition, f.file_name) for f in table.snapshot().files()}
    assert _covered(table.location) == {"msg_grams": live, "msg_words": live, "msg_head": live}


def test_text_indexes_are_maintained_and_never_drop_a_match(spark: SparkSession, tmp_path: Path) -> None:
    table = LakepruneTable.create(
        str(tmp_path / "logs"),
        SCHEMA,
        record_key="id",
        partition_by=["day"],
        properties={"write.target_file_size_bytes": 64 * 40, "write.small_file_limit_bytes": 1},
        spark=spark,
    )
    table.sql("CREATE INDEX msg_words ON logs USING text (lower(msg)) OPTIONS (tokenizer = 'words')")
    table.insert(spark.createDataFrame(_rows(range(400)), SCHEMA))
    table.sql("CREATE INDEX msg_grams ON logs USING text (msg)")  # built over the existing files
    table.sql("CREATE INDEX msg_head ON logs USING text (substring(msg, 1, 12))")  # an expression
    _assert_covered(table)
    first = table.snapshot()
    assert len(first.files()) >= 8
    assert _check(first) > 0

    # The text changes: timeouts move to other rows, some rows lose theirs.
    moved = [(i, f"2026-03-0{1 + i % 2}", "timeout" if i % 5 == 0 else "fine") for i in range(0, 400, 17)]
    table.upsert(spark.createDataFrame(moved, SCHEMA))
    _assert_covered(table)
    assert _check(table.snapshot()) > 0
    table.delete(spark.createDataFrame(_rows(range(0, 400, 97)), SCHEMA))
    _assert_covered(table)
    assert _check(table.snapshot()) > 0
    assert _check(first) > 0  # time travel: the index as of the first snapshot
    _check_over_grpc(table.location)
    _check_spark_reads(spark, table)

    table.compact()
    _assert_covered(table)
    _check(table.snapshot())


def _check_over_grpc(location: str) -> None:
    """Over gRPC, the Python client's SQL and an engine's bare text atom (as Trino sends it) prune
    as the same SQL does in process, and prune."""
    root, name = location.rsplit("/", 1)
    table = LakeTable.open(location)
    every = {f.file_name for f in table.snapshot().files()}
    where = "msg LIKE '%timeout%'"
    local = _names(prune(table, where))
    words = _names(prune(table, "lower(msg) LIKE '%stanbul node 53 %'"))  # the words index
    head = "substring(msg, 1, 12) LIKE '%connection%'"  # the index over an expression
    assert local < every and words < every and _names(prune(table, head)) < every
    like = ppb.LikePattern(pattern="%stanbul node 53 %")
    atom = ppb.TextAtom(column="msg", case=ppb.TEXT_CASE_LOWER, like=like)
    request = spb.PruneRequest(
        table=spb.TableName(schema=SCHEMA_NAME, table=name), text=ppb.TextPredicate(atom=atom)
    )
    with Sidecar(make_config(root)) as sidecar:
        assert sidecar.wait_ready(10)
        address = f"127.0.0.1:{sidecar.grpc_port}"
        with PruningClient(address) as client:
            assert _names(client.prune(SCHEMA_NAME, name, where)) == local
            assert _names(client.prune(SCHEMA_NAME, name, head)) == _names(prune(table, head))
        with grpc.insecure_channel(address) as channel:
            response = spb_grpc.PruningServiceStub(channel).Prune(request)
    assert {s.path.rsplit("/", 1)[-1] for s in response.splits} == words


def _names(result: PruneResult) -> set[str]:
    return {s.path.rsplit("/", 1)[-1] for s in result.splits}


SPARK_FILTERS = [
    "msg LIKE '%timeout%'",  # Spark rewrites it to contains(msg, 'timeout')
    "msg LIKE '%node%up'",
    "lower(msg) LIKE '%stanbul node 1%'",  # Spark's lower maps 'İ' to 'i' and U+0307
    "msg RLIKE 'NBUL node [0-9]+ up'",
    "instr(msg, 'timeout') > 0",
    "endswith(msg, 'node 53 up')",
    "substring(msg, 1, 12) LIKE '%connection%'",  # the index over an expression
]


def _check_spark_reads(spark: SparkSession, table: LakepruneTable) -> None:
    """Spark's pushed text filters reach the text index: each read returns the rows a full read
    does, from the files the prune kept, fewer than all."""
    total = len(table.snapshot().files())
    for where in SPARK_FILTERS:
        rows, read = files_read(spark.read.format("lakeprune").load(table.location).where(where))
        snapshot = table.snapshot()
        paths = [snapshot.table.storage.full_uri(f.path) for f in snapshot.files()]
        assert_same(rows, spark.read.schema(SCHEMA).parquet(*paths).where(where).collect())
        last = recent_prunes()[-1]
        assert read == last["files_kept"] < total, (where, last["summary"])
