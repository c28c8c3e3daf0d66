"""A table's first insert (`builder.write.bulk`), written by Spark's Parquet writer (file systems) or
by the rewrite tasks (object stores): the same table as the general path writes (rows, files, every
index's rows), the cases that go the general way, and a failure after Spark staged the files or
after the files were written leaving nothing behind."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from builder import LakepruneTable, WriteResult
from builder.write import bulk, writer
from pruner.format.layout import META_DIR, STAGING_DIR
from pruner.format.timeline import Timeline
from pruner.storage import Storage
from pruner.table.table import LakeTable
from tests.support import (
    CITIES,
    SCHEMA,
    SMALL_FILES,
    assert_record_index_consistent,
    contents,
    create,
    make_row,
    to_df,
)

INDEXES = [
    "CREATE INDEX stats ON t USING column_stats",
    "CREATE INDEX pstats ON t USING partition_stats",
    "CREATE INDEX bf ON t USING bloom_filters (city, id) OPTIONS (fpp = 0.01)",
    "CREATE INDEX by_day ON t (day)",
    "CREATE INDEX ts_hour ON t USING column_stats(hour(ts))",
]
# Indexes on some columns only (`amount` has none): the files Spark wrote are read back for those.
SOME_COLUMNS = [
    "CREATE INDEX stats ON t USING column_stats (score)",
    "CREATE INDEX bf ON t USING bloom_filters (city)",
    "CREATE INDEX by_day ON t (day)",
    "CREATE INDEX ts_hour ON t USING column_stats(hour(ts))",
]
ROWS = [make_row(k, CITIES[k % 3]) for k in range(200)]


def _writers(location: str) -> set[str]:
    """The `created_by` of every live data file of the table."""
    snapshot = LakeTable.open(location).snapshot()
    storage = snapshot.table.storage
    return {pq.ParquetFile(storage.open_input_file(f.path)).metadata.created_by for f in snapshot.files()}


def _by_spark(location: str) -> bool:
    return all(name.startswith("parquet-mr") for name in _writers(location))


def _skipped_lookup(result: WriteResult) -> bool:
    """Whether the write planned without looking keys up (the general path times a `tag` phase)."""
    return "prepare" in result.timings_ms and "tag" not in result.timings_ms


def _indexed_table(spark: SparkSession, location: str, indexes: list[str]) -> LakepruneTable:
    table = create(location, spark)
    for statement in indexes:
        table.sql(statement)
    return table


def _without_file_names(location: str) -> dict[str, list[dict[str, Any]]]:
    """Every index partition's rows, with each file name and file group replaced by what the file
    holds (its partition and smallest key), and without what the `files` index says of the write
    (instant, bytes): equal tables written under other names and encodings compare equal."""
    snapshot = LakeTable.open(location).snapshot()
    storage = snapshot.table.storage
    identity: dict[str, str] = {}
    for f in snapshot.files():
        first = min(pq.read_table(storage.open_input_file(f.path), columns=["id"])["id"].to_pylist())
        identity[f.file_name] = identity[f.file_group] = f"{f.partition}#{first}"
    out = {}
    for spec in snapshot.table.index_partition_specs():
        rows = snapshot.index_partition(spec).read_all().to_pylist()
        for row in rows:
            if spec.name == "files":  # each table's own instant; the files' encodings differ
                del row["instant"], row["size"]
            for name in ("file_name", "file_group"):
                if isinstance(row.get(name), str):
                    row[name] = identity.get(row[name], row[name])
        out[spec.name] = sorted(rows, key=repr)
    return out


def _general(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bulk, "applies", lambda snapshot, live_files: False)


@pytest.mark.parametrize(
    ("spark_writes", "indexes"),
    [(True, INDEXES), (False, INDEXES), (True, SOME_COLUMNS)],
    ids=["spark_writer", "rewrite_tasks", "spark_writer_some_columns_indexed"],
)
def test_a_first_insert_equals_the_general_path(
    spark: SparkSession,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    spark_writes: bool,
    indexes: list[str],
) -> None:
    by_spark, general = str(tmp_path / "bulk" / "t"), str(tmp_path / "general" / "t")
    with monkeypatch.context() as patch:
        patch.setattr(bulk, "spark_writes", lambda storage: spark_writes)
        result = _indexed_table(spark, by_spark, indexes).insert(to_df(spark, ROWS))
    assert (result.inserted, result.duplicates_dropped) == (len(ROWS), 0)
    assert _skipped_lookup(result), result.timings_ms
    assert _by_spark(by_spark) == spark_writes, _writers(by_spark)
    with monkeypatch.context() as patch:
        _general(patch)
        reference = _indexed_table(spark, general, indexes).insert(to_df(spark, ROWS))
    assert not _by_spark(general) and not _skipped_lookup(reference)

    assert contents(by_spark) == contents(general) == {r["id"]: r for r in ROWS}
    assert_record_index_consistent(by_spark)
    assert result.files_added == reference.files_added > 6
    assert _without_file_names(by_spark) == _without_file_names(general)
    assert not Storage.from_uri(by_spark).exists(STAGING_DIR)  # not even an empty directory


def test_later_writes_take_the_general_path(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "t")
    table = create(location, spark)
    table.insert(to_df(spark, ROWS[:100]))
    assert _by_spark(location)
    table.insert(to_df(spark, ROWS[100:]))
    assert any(writer.startswith("parquet-cpp") for writer in _writers(location))
    assert contents(location) == {r["id"]: r for r in ROWS}
    assert_record_index_consistent(location)


def test_repeated_keys_are_resolved_on_the_general_path(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "t")
    newer = [make_row(k, CITIES[k % 3], version=1) for k in range(10)]
    result = create(location, spark).insert(to_df(spark, ROWS + newer))
    assert result.duplicates_dropped == 10
    assert not _by_spark(location)
    assert contents(location) == {r["id"]: r for r in ROWS + newer}


def test_an_unpartitioned_table_sorted_by_an_expression(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "t")
    table = LakepruneTable.create(location, SCHEMA, record_key="id", properties=SMALL_FILES, spark=spark)
    table.insert(to_df(spark, ROWS), sort_by=["hour(ts)"])
    assert _by_spark(location)
    assert contents(location) == {r["id"]: r for r in ROWS}
    assert_record_index_consistent(location)
    for f in LakeTable.open(location).snapshot().files():  # rows stay in key order in a file
        ids = pq.read_table(Storage.from_uri(location).open_input_file(f.path), columns=["id"])["id"]
        assert ids.to_pylist() == sorted(ids.to_pylist())


def _failing_after(original: Callable[..., Any], name: str) -> Callable[..., Any]:
    def fail(*args: Any, **kwargs: Any) -> Any:
        original(*args, **kwargs)
        raise OSError(f"injected failure after {name}")

    return fail


@pytest.mark.parametrize(
    ("spark_writes", "where", "after"),
    [(True, bulk, "stage"), (True, bulk, "write_files"), (False, writer, "write_logs")],
    ids=["spark_staged", "spark_moved", "rewrite_tasks_wrote"],
)
def test_a_failed_first_insert_leaves_nothing(
    spark: SparkSession,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    spark_writes: bool,
    where: Any,
    after: str,
) -> None:
    """Failing after Spark staged the files, after they moved into place, and (rewrite tasks) after
    the data files were written (`write_logs`: the `files` index's logs come next)."""
    location = str(tmp_path / "t")
    table = create(location, spark)
    with monkeypatch.context() as patch:
        patch.setattr(bulk, "spark_writes", lambda storage: spark_writes)
        patch.setattr(where, after, _failing_after(getattr(where, after), after))
        with pytest.raises(OSError, match="injected failure"):
            table.insert(to_df(spark, ROWS))
    storage = Storage.from_uri(location)
    data = [e.rel for e in storage.list_files("", recursive=True) if not e.rel.startswith(f"{META_DIR}/")]
    assert data == []
    assert not storage.exists(STAGING_DIR)
    assert Timeline.load(storage).instants == ()
    table.insert(to_df(spark, ROWS))  # the next writer finds an empty table
    assert contents(location) == {r["id"]: r for r in ROWS}
