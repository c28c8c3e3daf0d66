"""Adopting directories written by plain Spark (issue 18): a Hive-style directory partitioned by a
string with a space and NULLs and by a date, whose files do not store those columns, becomes a
table in place; its answers, after an upsert and a delete and time-travelling back to the adopted
snapshot, equal DuckDB's over the same files, and so do pruning (locally, over gRPC and the Thrift
row reader). Refusals — a duplicate key, a corrupt file, incompatible schemas, a table already
there — are one line and leave no `.lakeprune/` behind. `clean` keeps adopted files."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from builder import LakepruneTable
from builder.adopt import KEYS_BATCH_ROWS, adopt_table, canonical_partition, infer_path_type
from builder.spark_source import recent_prunes
from pruner.client import PruningClient
from pruner.errors import InvalidInputError, InvalidSchemaError, SchemaMismatchError, TableExistsError
from pruner.format.layout import META_DIR, DataFileName
from pruner.serving.config import ServeConfig
from pruner.sidecar import Sidecar
from pruner.table.table import LakeTable
from pruner.thrift import idl
from pruner.types import ColumnType
from tests.pruner.thrift.support import rows as thrift_rows
from tests.pruner.thrift.support import sidecar_client
from tests.support import assert_record_index_consistent
from tests.support_adopt import (
    DELETED,
    ROWS,
    SCHEMA,
    Adopted,
    duckdb_rows,
    reference,
    snapshot_files,
    source_row,
    write_hive,
)

# Predicates and the DuckDB text of each.
PREDICATES = [
    ("city = 'new york'", "city = 'new york'"),
    ("city IS NULL", "city IS NULL"),
    ("day = DATE '2026-01-02'", "day = DATE '2026-01-02'"),
    ("id = 5", "id = 5"),
    ("name = 'n9'", "name = 'n9'"),
    ("score > 8", "score > 8"),
]


@pytest.fixture(scope="module")
def hive(adopted_hive: Adopted) -> Adopted:
    return adopted_hive


def _rows(location: str, instant: str | None = None) -> dict[int, dict[str, object]]:
    got = LakeTable.open(location).snapshot(instant).read(["id", "name", "score", "city", "day"])
    return {r["id"]: r for r in got.to_pylist()}


def test_the_adopted_snapshot_holds_the_files_in_place(hive: Adopted) -> None:
    table = LakeTable.open(hive.location)
    assert not table.config.path_columns_in_files
    assert table.config.schema.column("day").type == ColumnType("date")
    files = table.snapshot(hive.adopted).files()
    assert files and all(DataFileName.parse(f.path.rpartition("/")[2]) is None for f in files)
    assert all(Path(hive.location, f.path).is_file() for f in files)
    assert {f.partition for f in files} >= {
        "city=new%20york/day=2026-01-01",
        "city=__HIVE_DEFAULT_PARTITION__/day=2026-01-01",
    }
    expected = {
        k: dict(zip(("id", "name", "score", "city", "day"), source_row(k), strict=True)) for k in range(ROWS)
    }
    assert _rows(hive.location, hive.adopted) == expected == reference(hive.location, hive.adopted)


def test_upsert_delete_and_time_travel_answer_as_duckdb(hive: Adopted) -> None:
    for instant in (hive.adopted, hive.upserted, hive.deleted):
        assert _rows(hive.location, instant) == reference(hive.location, instant), instant
    latest = _rows(hive.location)
    assert latest[2]["city"] == "ams" and latest[4]["city"] is None and latest[100]["name"] == "new"
    assert not set(DELETED) & set(latest) and len(latest) == ROWS + 1 - len(DELETED)
    # Rewritten groups are lakeprune files that store the partition columns.
    rewritten = [p for p in snapshot_files(hive.location) if DataFileName.parse(p.rpartition("/")[2])]
    assert rewritten and all({"city", "day"} <= set(pq.read_schema(p).names) for p in rewritten)
    assert_record_index_consistent(hive.location)


@pytest.mark.parametrize(("where", "duck"), PREDICATES)
def test_pruning_keeps_every_file_with_a_matching_row(hive: Adopted, where: str, duck: str) -> None:
    for instant in (hive.adopted, hive.deleted):
        files = snapshot_files(hive.location, instant)
        kept = {s.path for s in LakepruneTable(hive.location).prune(where, snapshot=instant).splits}
        matching = {r[0] for r in duckdb_rows(files, f"SELECT DISTINCT filename FROM {{t}} WHERE {duck}")}
        assert matching <= kept <= set(files), (where, instant)
        answer = "SELECT id FROM {t} WHERE " + duck + " ORDER BY id"
        assert duckdb_rows(sorted(kept), answer) == duckdb_rows(files, answer)
    if "city" in where or "id" in where:
        assert len(kept) < len(files)  # the partition values / record index prune


def test_grpc_and_thrift_serve_the_adopted_table(hive: Adopted) -> None:
    """The sidecar's prune over gRPC equals the local one; the Thrift row reader fills the path
    columns of adopted files and its rows equal DuckDB's."""
    root = str(Path(hive.location).parent)
    config = ServeConfig({"lake": root}, host="127.0.0.1", grpc_port=0, thrift_port=None, metrics_port=None)
    with Sidecar(config) as sidecar:
        assert sidecar.wait_ready(30)
        with PruningClient(f"127.0.0.1:{sidecar.grpc_port}") as client:
            for where, _ in PREDICATES:
                remote = client.prune("lake", "hive", where).splits
                local = LakepruneTable(hive.location).prune(where).splits
                assert {s.path for s in remote} == {s.path for s in local}
                # the path-only columns arrive typed (city a str, day a date), as the planner made them
                assert {s.path: s.partition_values for s in remote} == {
                    s.path: s.partition_values for s in local
                }
                assert all(isinstance(s.partition_values.get("day"), date | None) for s in remote)
    with sidecar_client({"lake": root}) as thrift:
        name = idl.SchemaTableName("lake", "hive")
        page = thrift.trinoGetSplits(
            name, idl.NullableColumnSet(None), idl.TupleDomain({}), 1000, idl.NullableToken(None)
        )
        assert page.nextToken is None
        got: list[tuple[object, ...]] = []
        for split in page.splits:
            (ids, cities, days), _ = thrift_rows(thrift, split, ["id", "city", "day"])
            got += zip(ids, cities, days, strict=True)
    # The Thrift wire carries a date as days since the epoch.
    sql = "SELECT id, city, CAST(day - DATE '1970-01-01' AS INTEGER) FROM {t} ORDER BY id"
    assert sorted(got, key=lambda r: str(r[0]).zfill(9)) == duckdb_rows(snapshot_files(hive.location), sql)


def test_adopting_a_table_again_and_evolving_its_partitioning_are_refused(
    hive: Adopted, spark: SparkSession
) -> None:
    with pytest.raises(TableExistsError, match="already is a lakeprune table"):
        adopt_table(spark, hive.location, "id", ["city", "day"])
    with pytest.raises(InvalidInputError, match="was adopted"):
        LakepruneTable(hive.location).alter_partitioning(["city"])


def test_flat_directory_clean_keeps_what_retained_snapshots_need_and_later_files_stay_out(
    spark: SparkSession, tmp_path: Path
) -> None:
    directory = write_hive(spark, tmp_path / "flat", [], range(20))
    result = adopt_table(spark, str(directory), "id", properties={"clean.retain_commits": 2})
    assert result.path_columns_in_files and result.rows == 20
    table = LakepruneTable(str(directory), spark)
    first = table.upsert(
        spark.createDataFrame([(*source_row(1)[:2], 5.0, *source_row(1)[3:])], SCHEMA)
    ).instant
    table.upsert(spark.createDataFrame([(*source_row(2)[:2], 6.0, *source_row(2)[3:])], SCHEMA))
    report = table.clean()
    assert report.earliest_retained == first
    for instant in (first, None):
        assert all(Path(p).is_file() for p in snapshot_files(str(directory), instant))
        assert _rows(str(directory), instant) == reference(str(directory), instant)
    adopted = [p for p in (tmp_path / "flat").iterdir() if p.name.startswith("part-")]
    assert len(adopted) == result.files  # adopted files are never deleted, replaced ones neither
    write_hive(spark, directory, [], range(1000, 1005))  # another tool adds files: not in the table
    assert set(_rows(str(directory))) == set(range(20))


def test_a_duplicate_key_fails_in_one_line_and_writes_nothing(spark: SparkSession, tmp_path: Path) -> None:
    directory = write_hive(spark, tmp_path / "dup", ["city"], range(10))
    write_hive(spark, directory, ["city"], range(5, 6))
    before = sorted(p.relative_to(directory) for p in directory.rglob("*"))
    with pytest.raises(InvalidInputError) as failure:
        adopt_table(spark, str(directory), "id", ["city"])
    message = str(failure.value)
    assert "duplicate record key '5' in " in message and "\n" not in message
    assert message.count("part-") == 2 and "nothing was written" in message
    assert not (directory / META_DIR).exists()
    assert sorted(p.relative_to(directory) for p in directory.rglob("*")) == before


def test_a_file_larger_than_a_keys_batch_is_indexed_and_checked_whole(
    spark: SparkSession, tmp_path: Path
) -> None:
    rows = KEYS_BATCH_ROWS + 10  # one file's keys reach Spark in two batches
    directory = tmp_path / "large"
    directory.mkdir()
    pq.write_table(pa.table({"id": pa.array(range(rows), pa.int64())}), directory / "part-0.parquet")
    result = adopt_table(spark, str(directory), "id")
    assert (result.files, result.rows) == (1, rows)
    assert_record_index_consistent(str(directory))

    duplicated = tmp_path / "duplicated"  # the key of the first batch's first row, again in the second
    duplicated.mkdir()
    ids = pa.array([*range(rows - 1), 0], pa.int64())
    pq.write_table(pa.table({"id": ids}), duplicated / "part-0.parquet")
    with pytest.raises(InvalidInputError, match=r"duplicate record key '0' twice in .*part-0.parquet"):
        adopt_table(spark, str(duplicated), "id")
    assert not (duplicated / META_DIR).exists()


def test_a_null_record_key_fails_naming_its_file_and_writes_nothing(
    spark: SparkSession, tmp_path: Path
) -> None:
    directory = write_hive(spark, tmp_path / "nullkey", ["city"], range(10))
    source = next((directory / "city=ams").glob("part-*.parquet"))
    rows = pq.read_table(source)
    ids = rows.column("id")
    rows = rows.set_column(rows.schema.get_field_index("id"), "id", pa.nulls(len(ids), ids.type))
    pq.write_table(rows.slice(0, 1), directory / "city=ams" / "part-99998-nullkey.parquet")
    with pytest.raises(
        InvalidInputError,
        match=r"city=ams/part-99998-nullkey.parquet holds a record with a null record key; nothing",
    ):
        adopt_table(spark, str(directory), "id", ["city"])
    assert not (directory / META_DIR).exists()


def test_a_corrupt_file_fails_in_one_line_and_writes_nothing(spark: SparkSession, tmp_path: Path) -> None:
    directory = write_hive(spark, tmp_path / "corrupt", ["city"], range(10))
    (directory / "city=ams" / "part-99999-broken.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(
        InvalidInputError, match=r"city=ams/part-99999-broken.parquet is not a readable Parquet"
    ):
        adopt_table(spark, str(directory), "id", ["city"])
    assert not (directory / META_DIR).exists()


def test_incompatible_schemas_are_named(spark: SparkSession, tmp_path: Path) -> None:
    directory = write_hive(spark, tmp_path / "mixed", [], range(4))
    pq.write_table(pa.table({"id": pa.array([9], pa.int64()), "name": ["x"]}), directory / "part-odd.parquet")
    with pytest.raises(SchemaMismatchError, match=r"part-odd.parquet \(lacks score, city, day\)"):
        adopt_table(spark, str(directory), "id")
    assert not (directory / META_DIR).exists()
    with pytest.raises(InvalidInputError, match="not in a partition directory city="):
        adopt_table(spark, str(directory), "id", ["city"])


def test_partition_paths_are_canonical_and_typed_as_spark_infers() -> None:
    assert canonical_partition("city=new york/day=2026-01-01") == "city=new%20york/day=2026-01-01"
    assert canonical_partition("city=__HIVE_DEFAULT_PARTITION__") == "city=__HIVE_DEFAULT_PARTITION__"
    assert canonical_partition("") == ""
    assert infer_path_type(["1", "-2"]) == ColumnType("int")
    assert infer_path_type(["1", str(2**40)]) == ColumnType("bigint")
    assert infer_path_type(["2026-01-01"]) == ColumnType("date")
    assert infer_path_type(["true", "False"]) == ColumnType("boolean")
    assert infer_path_type(["1", "x"]) == infer_path_type([]) == ColumnType("string")


def test_spark_reads_fill_and_prune_by_the_path_columns(hive: Adopted, spark: SparkSession) -> None:
    """`format("lakeprune")` takes an adopted table's partition columns from the paths, and a filter
    on one of them reads only that partition's files."""
    table = LakepruneTable(hive.location, spark)
    columns = ("id", "name", "score", "city", "day")
    for instant in (hive.adopted, hive.deleted):
        expected = reference(hive.location, instant)
        assert {r["id"]: r.asDict() for r in table.read(instant).select(*columns).collect()} == expected
        city = sorted({r["city"] for r in expected.values() if r["city"] is not None})[-1]
        pruned = table.read(instant, where=f"city = '{city}'").select(*columns).collect()
        assert {r["id"]: r.asDict() for r in pruned} == {
            k: row for k, row in expected.items() if row["city"] == city
        }
        prune = recent_prunes()[-1]
        assert 0 < prune["files_kept"] < len(LakeTable.open(hive.location).snapshot(instant).files())


def test_corrupt_pages_behind_a_valid_footer_are_named(spark: SparkSession, tmp_path: Path) -> None:
    """The footer reads, the pages do not: found by the Spark pass over the keys, still one line."""
    directory = write_hive(spark, tmp_path / "pages", [], range(10))
    victim = sorted(directory.glob("part-*.parquet"))[0]
    data = bytearray(victim.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little") + 8
    data[4 : len(data) - footer] = bytes([0xFF]) * (len(data) - footer - 4)
    victim.write_bytes(bytes(data))
    assert pq.read_metadata(victim).num_rows > 0  # the footer still reads
    with pytest.raises(InvalidInputError, match=f"{victim.name} is not a readable Parquet file"):
        adopt_table(spark, str(directory), "id")
    assert not (directory / META_DIR).exists()


def test_a_failure_while_publishing_leaves_no_table(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = write_hive(spark, tmp_path / "late", ["city"], range(6))
    before = sorted(p.relative_to(directory) for p in directory.rglob("*"))

    def fail(*args: object) -> list[str]:
        raise OSError("disk full")

    monkeypatch.setattr("builder.adopt.write_logs", fail)
    with pytest.raises(OSError, match="disk full"):
        adopt_table(spark, str(directory), "id", ["city"])
    assert sorted(p.relative_to(directory) for p in directory.rglob("*")) == before


def test_partition_columns_stored_in_the_files_keep_their_type(spark: SparkSession, tmp_path: Path) -> None:
    """Hive tables written by other tools may store the partition column too: then the table is an
    ordinary one (format version 1) and the stored type wins over inference from the path."""
    directory = tmp_path / "stored"
    for n in (1, 2):
        (directory / f"n={n}").mkdir(parents=True)
        rows = pa.table({"id": pa.array([n * 10, n * 10 + 1], pa.int64()), "n": pa.array([n, n], pa.int16())})
        pq.write_table(rows, directory / f"n={n}" / "data.parquet")
    result = adopt_table(spark, str(directory), "id", ["n"])
    table = LakeTable.open(str(directory))
    assert result.path_columns_in_files and table.config.format_version == 1
    assert table.config.schema.column("n").type == ColumnType("smallint")
    assert sorted(table.snapshot().read().to_pylist(), key=lambda r: r["id"])[0] == {"id": 10, "n": 1}


def test_a_stored_partition_column_that_disagrees_with_its_directory_is_refused(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Pruning judges a file by its path: a file under n=1 holding n=2 would be pruned for n = 2."""
    directory = tmp_path / "liar"
    for n, stored in ((1, [1, 1]), (2, [2, None])):
        (directory / f"n={n}").mkdir(parents=True)
        rows = pa.table({"id": pa.array([n * 10, n * 10 + 1], pa.int64()), "n": pa.array(stored, pa.int16())})
        pq.write_table(rows, directory / f"n={n}" / "data.parquet")
    with pytest.raises(
        InvalidInputError, match=r"n=2/data.parquet stores n values other than its directory's \(n=2\)"
    ):
        adopt_table(spark, str(directory), "id", ["n"])
    assert not (directory / META_DIR).exists()
    (directory / "n=x").mkdir()
    pq.write_table(
        pa.table({"id": pa.array([99], pa.int64()), "n": pa.array([3], pa.int16())}),
        directory / "n=x" / "d.parquet",
    )
    with pytest.raises(
        InvalidSchemaError,
        match=r"directory of n=x/d.parquet holds a value that is not of its column's type \(n smallint\)",
    ):
        adopt_table(spark, str(directory), "id", ["n"])
