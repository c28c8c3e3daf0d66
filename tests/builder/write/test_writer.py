"""The Spark write path against a reference the test computes itself: inserts, in-place updates,
partition moves, deletes, re-inserts, overwrites, merges, duplicate keys in a batch, time travel, small
files."""

from __future__ import annotations

import copy
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from builder.write import writer
from builder.write.plan import InsertBin
from builder.write.writer import RecordsNotKeptError, check_records_kept
from pruner.format.timeline import Action, Timeline
from pruner.metadata.files_index import DataFile
from pruner.table.table import LakeTable
from tests.support import (
    CITIES,
    Row,
    assert_record_index_consistent,
    contents,
    create,
    keys_df,
    make_row,
    to_df,
)


def test_insert_upsert_delete_reinsert_match_reference(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "trips")
    table = create(location, spark)
    reference: dict[int, Row] = {}
    history: dict[str, dict[int, Row]] = {}

    def check(instant: str | None) -> None:
        assert instant is not None
        assert contents(location) == reference
        assert_record_index_consistent(location)
        history[instant] = copy.deepcopy(reference)

    first = [make_row(k, CITIES[k % 3]) for k in range(60)]
    result = table.insert(to_df(spark, first))
    reference.update({r["id"]: r for r in first})
    assert (result.inserted, result.updated) == (60, 0)
    assert result.files_added > 3, "tiny target size should spread 60 rows over several file groups"
    check(result.instant)

    in_place = [make_row(k, CITIES[k % 3], version=1) for k in range(0, 10)]
    moved = [make_row(k, CITIES[(k + 1) % 3], version=2) for k in range(10, 15)]
    new = [make_row(k, CITIES[k % 3]) for k in range(100, 104)]
    result = table.upsert(to_df(spark, in_place + moved + new))
    reference.update({r["id"]: r for r in in_place + moved + new})
    assert (result.inserted, result.updated, result.moved) == (4, 15, 5)
    check(result.instant)

    result = table.delete(keys_df(spark, [1, 2, 11, 100, 9999]))
    for key in (1, 2, 11, 100):
        del reference[key]
    assert (result.deleted, result.not_found) == (4, 1)
    check(result.instant)

    again = [make_row(11, "ber", version=3), make_row(1, "ams", version=3)]
    result = table.insert(to_df(spark, again))
    reference.update({r["id"]: r for r in again})
    assert result.inserted == 2
    check(result.instant)

    for instant, expected in history.items():
        assert contents(location, instant) == expected, f"time travel to {instant}"


def test_overwrite_replaces_every_record_in_one_instant(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "trips")
    table = create(location, spark)
    first = [make_row(k, CITIES[k % 3]) for k in range(60)]
    before = table.insert(to_df(spark, first)).instant

    kept = [make_row(k, CITIES[k % 3], version=1) for k in range(0, 10)]  # updated in place
    moved = [make_row(k, CITIES[(k + 1) % 3], version=2) for k in range(10, 15)]
    new = [make_row(k, CITIES[k % 3]) for k in range(100, 104)]
    result = table.write(to_df(spark, kept + moved + new), "overwrite")
    assert (result.inserted, result.updated, result.moved, result.deleted) == (4, 15, 5, 45)
    assert contents(location) == {r["id"]: r for r in kept + moved + new}
    assert_record_index_consistent(location)
    commits = [i.timestamp for i in LakeTable.open(location).timeline.instants if i.action == Action.COMMIT]
    assert commits == [before, result.instant], "one instant"
    assert contents(location, before) == {r["id"]: r for r in first}, "time travel to before it"

    emptied = table.write(to_df(spark, []), "overwrite")
    assert (emptied.inserted, emptied.deleted) == (0, 19)
    assert contents(location) == {}
    assert_record_index_consistent(location)
    assert table.write(to_df(spark, []), "overwrite").instant is None, "an empty table stays as it is"

    again = table.write(to_df(spark, first[:5]), "overwrite")
    assert again.inserted == 5 and contents(location) == {r["id"]: r for r in first[:5]}
    assert_record_index_consistent(location)


def test_merge_upserts_and_deletes_in_one_instant(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "trips")
    table = create(location, spark)
    first = [make_row(k, CITIES[k % 3]) for k in range(20)]
    before = table.insert(to_df(spark, first)).instant
    upserts = [make_row(1, CITIES[1], version=1), make_row(3, CITIES[1], version=1), make_row(50, "ams")]
    deletes = [make_row(2, CITIES[2]), make_row(99, "ams")]
    flagged = to_df(spark, upserts + deletes).withColumn(writer.MERGE_DELETE, F.col("id").isin(2, 99))
    result = table.write(flagged, "merge")
    counts = (result.inserted, result.updated, result.moved, result.deleted, result.not_found)
    assert counts == (1, 2, 1, 1, 1)
    expected = {r["id"]: r for r in first if r["id"] != 2} | {r["id"]: r for r in upserts}
    assert contents(location) == expected
    assert_record_index_consistent(location)
    commits = [i.timestamp for i in LakeTable.open(location).timeline.instants if i.action == Action.COMMIT]
    assert commits == [before, result.instant], "one instant"


def test_duplicate_keys_in_a_batch_resolved_by_ordering_field(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "t")
    table = create(location, spark)
    older, newer = make_row(5, "ams", version=1), make_row(5, "ber", version=9)  # newer ts wins
    tie_first, tie_last = make_row(6, "ams", version=1), make_row(6, "cdg", version=1)  # same ts
    result = table.upsert(to_df(spark, [newer, older, tie_first, tie_last]))
    assert result.duplicates_dropped == 2
    rows = contents(location)
    assert rows[5] == newer
    assert rows[6]["city"] == "cdg", "on an ordering tie the later input row wins"


def test_a_batch_of_unique_keys_and_one_with_a_few_repeats_across_input_partitions(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The repeat check counts keys alone: a batch without repeats is written as given, and one
    repeated key among many, its rows in different input partitions, still resolves to its winner."""
    location = str(tmp_path / "t")
    table = create(location, spark)
    first = [make_row(k, CITIES[k % 3]) for k in range(40)]
    result = table.insert(to_df(spark, first).repartition(4))
    assert (result.input_rows, result.duplicates_dropped, result.inserted) == (40, 0, 40)
    reference = {r["id"]: r for r in first}
    assert contents(location) == reference

    winner = make_row(7, "ber", version=9)
    batch = [make_row(k, CITIES[k % 3], version=1) for k in range(30, 50)]
    rows = [*batch[:10], make_row(7, "ams", version=2), *batch[10:], winner]
    result = table.upsert(to_df(spark, rows).coalesce(1).repartition(3))
    assert (result.input_rows, result.duplicates_dropped) == (22, 1)
    assert (result.inserted, result.updated) == (10, 11)
    reference.update({r["id"]: r for r in [*batch, winner]})
    assert contents(location) == reference
    assert_record_index_consistent(location)


def test_small_files_are_topped_up_before_new_file_groups(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "t")
    table = create(
        location, spark, **{"write.target_file_size_bytes": 1 << 20, "write.small_file_limit_bytes": 1 << 19}
    )
    table.insert(to_df(spark, [make_row(k, "ams") for k in range(3)]))
    (only,) = LakeTable.open(location).snapshot().files()
    result = table.insert(to_df(spark, [make_row(k, "ams") for k in range(3, 6)]))
    files = LakeTable.open(location).snapshot().files()
    assert [f.file_group for f in files] == [only.file_group], "the small file group takes the inserts"
    assert files[0].rows == 6 and result.files_removed == 1


def test_empty_input_and_unknown_deletes_create_no_instant(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "t")
    table = create(location, spark)
    table.insert(to_df(spark, [make_row(1, "ams")]))
    before = LakeTable.open(location).timeline.instants
    assert table.upsert(to_df(spark, [])).instant is None
    assert table.delete(keys_df(spark, [42])).instant is None
    assert LakeTable.open(location).timeline.instants == before


def test_composite_record_key_and_unpartitioned_table(spark: SparkSession, tmp_path: Path) -> None:
    from builder import LakepruneTable

    location = str(tmp_path / "t")
    table = LakepruneTable.create(
        location, "region string, n int, v string", record_key=["region", "n"], spark=spark
    )
    rows = [("a\x1fb", 1, "x"), ("a", 1, "y"), ("a\x1fb", 2, "z")]
    table.insert(spark.createDataFrame(rows, "region string, n int, v string"))
    table.upsert(spark.createDataFrame([("a", 1, "y2")], "region string, n int, v string"))
    got = sorted(tuple(r.values()) for r in LakeTable.open(location).snapshot().read().to_pylist())
    assert got == sorted([("a\x1fb", 1, "x"), ("a", 1, "y2"), ("a\x1fb", 2, "z")])
    assert all(f.partition == "" for f in LakeTable.open(location).snapshot().files())


def test_spark_read_matches_pyarrow_read(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "t")
    table = create(location, spark)
    table.insert(to_df(spark, [make_row(k, CITIES[k % 3]) for k in range(20)]))
    from_spark = {r["id"]: r.asDict() for r in table.read().collect()}
    assert {k: {**v, "ts": v["ts"]} for k, v in from_spark.items()}.keys() == contents(location).keys()
    assert table.read().schema.simpleString() == (
        "struct<id:bigint,city:string,amount:decimal(10,2),score:double,ts:timestamp,day:date>"
    )


def test_rewritten_files_have_a_dictionary_on_repeating_columns_only(
    spark: SparkSession, tmp_path: Path
) -> None:
    location = str(tmp_path / "t")
    table = create(location, spark, **{"write.target_file_size_bytes": 1 << 20})
    table.insert(to_df(spark, [make_row(k, CITIES[k % 3]) for k in range(60)]))
    result = table.upsert(to_df(spark, [make_row(k, CITIES[k % 3], version=1) for k in range(0, 60, 2)]))
    snapshot = LakeTable.open(location).snapshot()
    rewritten = [f for f in snapshot.files() if f.instant == result.instant]
    assert len(rewritten) == len(CITIES), "one file group per city, each rewritten by pyarrow"
    for file in rewritten:
        footer = pq.read_metadata(Path(location) / file.path).row_group(0)
        columns = [footer.column(i) for i in range(footer.num_columns)]
        dictionary = {column.path_in_schema for column in columns if column.has_dictionary_page}
        assert dictionary == {"city", "day"}, f"{file.path}: 1 city and 5 days in 20 rows; the rest unique"


@pytest.mark.slow
def test_index_compaction_after_many_commits_keeps_contents(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "t")
    table = create(
        location,
        spark,
        **{"index.compaction_max_log_files": 2, "index.record_index_buckets": 2, "index.files_buckets": 1},
    )
    reference: dict[int, Row] = {}
    compactions = []
    for step in range(4):
        rows = [make_row(k, CITIES[k % 3], version=step) for k in range(step * 3, step * 3 + 6)]
        result = table.upsert(to_df(spark, rows))
        reference.update({r["id"]: r for r in rows})
        compactions.append(result.compaction_instant)
        assert contents(location) == reference
        assert_record_index_consistent(location)
    assert any(compactions), "two log files per bucket must trigger compaction"


def test_check_records_kept_refuses_lost_duplicated_or_twice_written_records() -> None:
    live = {
        "g1": DataFile("", "f1.parquet", "g1", "1", 100, 10),
        "g2": DataFile("", "f2.parquet", "g2", "1", 100, 5),
    }
    check_records_kept([("g1", 12), ("g2", 0), ("new", 4)], live, net_added=1)  # 15 + 1 == 16
    with pytest.raises(RecordsNotKeptError, match="hold 15 record"):
        check_records_kept([("g1", 11), ("g2", 0), ("new", 4)], live, net_added=1)
    with pytest.raises(RecordsNotKeptError, match="hold 17 record"):
        check_records_kept([("g1", 12), ("g2", 1), ("new", 4)], live, net_added=1)
    with pytest.raises(RecordsNotKeptError, match="new were written by more than one task"):
        check_records_kept([("g1", 12), ("new", 2), ("new", 2)], live, net_added=6)


def test_a_plan_that_would_lose_a_record_commits_nothing(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    location = str(tmp_path / "t")
    table = create(location, spark)
    first = [make_row(k, CITIES[k % 3]) for k in range(20)]
    table.insert(to_df(spark, first))
    before = LakeTable.open(location).snapshot().instant

    assign = writer._Write._assign_bins

    def losing_one(self: writer._Write, new_rows: DataFrame, bins: list[InsertBin]) -> DataFrame:
        return assign(self, new_rows, bins).where(F.col("id") != 33)

    monkeypatch.setattr(writer._Write, "_assign_bins", losing_one)
    with pytest.raises(
        RecordsNotKeptError, match=r"record\(s\) where \d+ were expected.*nothing was committed"
    ):
        table.upsert(
            to_df(spark, [make_row(k, CITIES[k % 3]) for k in range(20, 30)] + [make_row(33, "ams")])
        )
    reopened = LakeTable.open(location)
    assert reopened.snapshot().instant == before
    assert contents(location) == {r["id"]: r for r in first}
    assert Timeline.load(reopened.storage).pending() == []  # rolled back
