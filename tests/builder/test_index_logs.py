"""Index logs written by executors bucket by bucket (`builder.index_logs`): the log a bucket gets
from its chunks, whatever order they arrive in, is the log one driver-side `write_logs` call over
all of the commit's rows wrote (tombstones first for a secondary index); and the write path and the
index build no longer write any defined index's logs from the driver."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

import builder.index_build
import builder.write.writer
from builder.index_logs import (
    ROWS,
    TOMBSTONES,
    LogTarget,
    as_chunk_frame,
    chunks,
    previous_chunks,
    write_by_bucket,
)
from pruner.index import secondary
from pruner.index.secondary import order_for_commit
from pruner.metadata.index_partition import IndexPartitionView, write_logs
from pruner.metadata.merge import with_op
from pruner.metadata.spec import OP_DELETE, OP_UPSERT, IndexPartitionSpec
from pruner.storage import Storage
from pruner.table.table import LakeTable
from pruner.types import parse_type
from tests.support import CITIES, create, make_row, to_df

I1, I2 = "20260101000000001", "20260101000000002"
ROW_SCHEMA = pa.schema(
    [
        pa.field("column", pa.string(), nullable=False),
        pa.field("partition", pa.string(), nullable=False),
        pa.field("file_name", pa.string(), nullable=False),
        pa.field("value", pa.string(), nullable=False),
    ]
)
FILES_SPEC = IndexPartitionSpec("per_file", ("column", "partition", "file_name"), "partition", ROW_SCHEMA, 4)
# Keyed by value too, as a value-list functional index is: several rows per file.
VALUES_SPEC = IndexPartitionSpec(
    "per_value", ("column", "partition", "file_name", "value"), "partition", ROW_SCHEMA, 4
)
PAIRS_SPEC = secondary.spec("by_city", parse_type("string"), 4)


def _run_tasks(
    spark: SparkSession, storage: Storage, targets: dict[str, LogTarget], items: list[dict[str, Any]]
) -> list[str]:
    """The chunks through Spark as a commit writes them: shuffled by bucket, sorted, written."""
    return sorted(write_by_bucket(as_chunk_frame(spark, items), storage, targets, I2))


def _logs(storage: Storage, paths: list[str]) -> dict[str, pa.Table]:
    return {p.rpartition("/")[2]: pq.read_table(storage.path(p), filesystem=storage.fs) for p in paths}


def _file_rows(files: list[tuple[str, str]], value: str) -> pa.Table:
    rows = [{"column": "c", "partition": p, "file_name": f, "value": value} for p, f in files]
    return pa.Table.from_pylist(rows, schema=ROW_SCHEMA)


def test_chunked_per_file_logs_equal_one_driver_write(spark: SparkSession, tmp_path: Path) -> None:
    added = [(f"p={i % 5}", f"new-{i}") for i in range(30)]
    removed = [(f"p={i % 5}", f"old-{i}") for i in range(12)]
    upserts = with_op(_file_rows(added, "v"), OP_UPSERT)
    tombstones = with_op(_file_rows(removed, ""), OP_DELETE)
    reference = Storage.from_uri(str(tmp_path / "driver"))
    expected = write_logs(reference, FILES_SPEC, I2, pa.concat_tables([upserts, tombstones]))

    items = [c for i in range(0, 30, 7) for c in chunks(FILES_SPEC, upserts.slice(i, 7), ROWS, f"g{i}")]
    items += chunks(FILES_SPEC, tombstones, TOMBSTONES, "")
    random.Random(3).shuffle(items)  # the shuffle delivers chunks in any order
    storage = Storage.from_uri(str(tmp_path / "tasks"))
    written = _run_tasks(spark, storage, {FILES_SPEC.name: LogTarget(FILES_SPEC)}, items)

    assert [p.rpartition("/")[2] for p in written] == sorted(p.rpartition("/")[2] for p in expected)
    assert _logs(storage, written) == _logs(reference, expected)


def test_large_chunks_are_cut_in_pieces_that_reassemble_in_order(spark: SparkSession, tmp_path: Path) -> None:
    # One source's rows of a bucket beyond the cap arrive as several pieces, in any order; a key
    # written twice by that source (upsert, then delete) must end as the driver's write ends it.
    files = [(f"p={i % 3}", f"f-{i:04d}") for i in range(400)]
    upserts = with_op(_file_rows(files, "x" * 100), OP_UPSERT)
    deletes = with_op(_file_rows(files[::7], ""), OP_DELETE)
    rows = pa.concat_tables([upserts, deletes])
    reference = Storage.from_uri(str(tmp_path / "driver"))
    expected = write_logs(reference, FILES_SPEC, I2, rows)

    items = chunks(FILES_SPEC, rows, ROWS, "g", max_bytes=4096)
    per_bucket = Counter(item["bucket"] for item in items)
    assert len(per_bucket) == 3 and min(per_bucket.values()) >= 3
    assert all(len(item["data"]) < 2 * 4096 for item in items)
    random.Random(5).shuffle(items)
    storage = Storage.from_uri(str(tmp_path / "tasks"))
    written = _run_tasks(spark, storage, {FILES_SPEC.name: LogTarget(FILES_SPEC)}, items)

    assert _logs(storage, written) == _logs(reference, expected)


def test_secondary_chunks_put_tombstones_first_as_the_driver_did(spark: SparkSession, tmp_path: Path) -> None:
    # A record that moved between file groups keeping its value: a tombstone from the old group
    # and an upsert from the new one, shipped by different tasks; the upsert must win.
    pair = pa.table({"secondary_key": ["ams"], "key": ["7"]})
    upsert = with_op(pair.cast(PAIRS_SPEC.schema), OP_UPSERT)
    tombstone = with_op(pair.cast(PAIRS_SPEC.schema), OP_DELETE)
    others = with_op(
        pa.table({"secondary_key": [f"c{i}" for i in range(20)], "key": [str(i) for i in range(20)]}).cast(
            PAIRS_SPEC.schema
        ),
        OP_UPSERT,
    )
    reference = Storage.from_uri(str(tmp_path / "driver"))
    everything = pa.concat_tables([upsert, others, tombstone])  # the old path: collect order
    expected = write_logs(reference, PAIRS_SPEC, I2, order_for_commit(everything))

    # "a-group" sorts first, so without the ordering its upsert would come before the tombstone.
    items = chunks(PAIRS_SPEC, upsert, ROWS, "a-group") + chunks(PAIRS_SPEC, tombstone, ROWS, "z-group")
    items += chunks(PAIRS_SPEC, others, ROWS, "m-group")
    storage = Storage.from_uri(str(tmp_path / "tasks"))
    written = _run_tasks(spark, storage, {PAIRS_SPEC.name: LogTarget(PAIRS_SPEC, pairs=True)}, items)

    assert _logs(storage, written) == _logs(reference, expected)
    merged = IndexPartitionView.load(storage, PAIRS_SPEC, frozenset({I2}), I2).read_all()
    assert ("ams", "7") in set(
        zip(merged["secondary_key"].to_pylist(), merged["key"].to_pylist(), strict=True)
    )


def test_previous_chunks_tombstone_the_rows_removed_files_had(spark: SparkSession, tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path / "t"))
    files = [(f"p={i % 3}", f"f-{i}") for i in range(9)]
    # Two rows per file (the value is part of the key), as a value-list functional index has.
    both = pa.concat_tables([_file_rows(files, "=1"), _file_rows(files, "=2")])
    write_logs(storage, VALUES_SPEC, I1, with_op(both, OP_UPSERT))
    previous = IndexPartitionView.load(storage, VALUES_SPEC, frozenset({I1}), I1)
    gone = files[::4]
    removed = pa.table({"partition": [p for p, _ in gone], "file_name": [f for _, f in gone]})

    written = _run_tasks(
        spark,
        storage,
        {VALUES_SPEC.name: LogTarget(VALUES_SPEC, previous=previous)},
        previous_chunks(VALUES_SPEC, removed),
    )

    after = IndexPartitionView.load(storage, VALUES_SPEC, frozenset({I1, I2}), I2).read_all()
    assert written
    assert set(after["file_name"].to_pylist()) == {f for _, f in files} - {f for _, f in gone}
    assert after.num_rows == 2 * (len(files) - len(gone))


def _record_driver_writes(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[str]:
    """Spec names of the `write_logs` calls made in this (the driver) process through `module`."""
    calls: list[str] = []

    def recording(storage: Storage, spec: IndexPartitionSpec, instant: str, rows: pa.Table) -> list[str]:
        calls.append(spec.name)
        return write_logs(storage, spec, instant, rows)

    monkeypatch.setattr(module, "write_logs", recording)
    return calls


def test_writes_and_builds_leave_index_logs_to_executors(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    location = str(tmp_path / "t")
    table = create(location, spark)
    for statement in (
        "CREATE INDEX stats ON t USING column_stats (id, score)",
        "CREATE INDEX blooms ON t USING bloom_filters (city)",
        "CREATE INDEX by_day ON t USING secondary_index (day)",
    ):
        table.sql(statement)
    from_writer = _record_driver_writes(monkeypatch, builder.write.writer)
    from_build = _record_driver_writes(monkeypatch, builder.index_build)

    table.insert(to_df(spark, [make_row(k, CITIES[k % 3]) for k in range(30)]))
    table.upsert(to_df(spark, [make_row(k, CITIES[(k + 1) % 3], 1) for k in range(0, 30, 4)]))
    table.sql("CREATE INDEX by_amount ON t (amount)")

    assert from_writer == ["files", "files"]
    assert from_build == []
    loaded = LakeTable.open(location)
    recorded = {
        p for i in loaded.timeline.completed() for p in loaded.timeline.read(i).get("index_files", [])
    }
    for name in ("column_stats", "bloom_filters", "secondary_index_by_day", "secondary_index_by_amount"):
        assert any(p.startswith(f".lakeprune/metadata/{name}/") for p in recorded), name
    snapshot = loaded.snapshot()
    pairs = snapshot.index_partition(loaded.spec(loaded.definition("by_amount"))).read_all()
    live_rows = sum(f.rows for f in snapshot.files())
    assert pairs.num_rows == live_rows  # make_row never leaves amount NULL
