"""Spark SQL on lakeprune catalog tables (issue 40, item 2): `INSERT INTO` / `INSERT OVERWRITE`,
`DELETE FROM`, `UPDATE` and `MERGE INTO` are planned as lakeprune writes (the JVM source's
`LakepruneWrites`), never as Spark's own Parquet write into the table's root (rows never committed,
or, for an overwrite, the root deleted with the table's timeline). A session's statements are
checked against a model the test keeps and against DuckDB over each snapshot's files."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import AnalysisException, ParseException
from pyspark.sql import DataFrame, SparkSession

from builder import LakepruneTable
from builder.spark_source import recent_prunes
from pruner.format.instant import parse_instant
from pruner.table.describe import history
from pruner.table.table import LakeTable
from tests.support import SMALL_FILES
from tests.support_adopt import duckdb_rows, snapshot_files

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

SCHEMA = "id bigint, name string, day string"
Row = tuple[Any, ...]


def _prunes_during(action: Callable[[], object]) -> list[dict[str, Any]]:
    """The prunes of Spark reads (`recent_prunes`) made while `action` ran."""
    before = recent_prunes()
    last = before[-1] if before else None
    action()
    after = recent_prunes()
    start = next((i + 1 for i in range(len(after) - 1, -1, -1) if after[i] is last), 0)
    return after[start:]


def _files_read(df: DataFrame) -> int:
    """Files the scan of `df` read, from its executed plan's metrics (`df` collected first)."""
    plan = df._jdf.queryExecution().executedPlan()
    found = []
    pending = [plan]
    while pending:
        node = pending.pop()
        if node.getClass().getSimpleName() == "AdaptiveSparkPlanExec":
            node = node.finalPhysicalPlan()
        if node.getClass().getSimpleName() == "FileSourceScanExec":
            found.append(int(node.metrics().apply("numFiles").value()))
        children = node.children()
        pending += [children.apply(i) for i in range(children.size())]
    assert len(found) == 1, f"one file scan expected, found {len(found)}"
    return found[0]


def _rows(spark: SparkSession, location: str) -> list[Row]:
    return sorted(tuple(r) for r in spark.read.format("lakeprune").load(location).collect())


@pytest.fixture
def catalog_name(spark: SparkSession) -> Iterator[str]:
    """A fresh name in the session catalog, dropped after the test (the data stays: LOCATION)."""
    name = f"lp_sql_{uuid.uuid4().hex[:8]}"
    yield name
    spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_a_session_inserts_merges_updates_deletes_and_reads_as_its_model(
    spark: SparkSession, tmp_path: Path, catalog_name: str
) -> None:
    location = str(tmp_path / "orders")
    name = catalog_name
    schema = "id bigint, name string, city string, amount int"
    cities = ["ams", "ber", "osl"]
    LakepruneTable.create(location, schema, record_key="id", properties=SMALL_FILES, spark=spark)
    spark.sql(f"CREATE TABLE {name} USING lakeprune LOCATION '{location}'")
    model: dict[int, Row] = {i: (i, f"n{i}", cities[i % 3], i * 10) for i in range(30)}
    instants: dict[str, dict[int, Row]] = {}

    def check(statement: str) -> None:
        spark.sql(statement)
        expected = sorted(model.values())
        assert sorted(tuple(r) for r in spark.table(name).collect()) == expected, statement
        assert sorted(duckdb_rows(snapshot_files(location))) == expected, statement
        instants[LakeTable.open(location).snapshot().instant or ""] = dict(model)

    check(
        f"INSERT INTO {name} SELECT id, concat('n', id), element_at(array('ams', 'ber', 'osl'), "
        "CAST(id % 3 + 1 AS int)), CAST(id * 10 AS int) FROM range(30)"
    )
    model[100] = (100, "new", "ams", 5)
    check(f"INSERT INTO {name} VALUES (100, 'new', 'ams', 5)")

    spark.createDataFrame(
        [(1, "u1", 1, "update"), (2, "", 0, "delete"), (200, "i200", 7, "insert"), (201, "", 0, "delete")],
        "id bigint, name string, amount int, op string",
    ).createOrReplaceTempView(f"{name}_changes")
    model[1] = (1, "u1", "ber", 11)
    del model[2]
    model[200] = (200, "i200", "osl", 7)  # 201: not matched, and no clause inserts a delete
    files = len(LakeTable.open(location).snapshot().files())
    merged = _prunes_during(
        lambda: check(
            f"MERGE INTO {name} t USING {name}_changes s ON t.id = s.id "
            "WHEN MATCHED AND s.op = 'delete' THEN DELETE "
            "WHEN MATCHED THEN UPDATE SET name = s.name, amount = t.amount + s.amount "
            "WHEN NOT MATCHED AND s.op <> 'delete' THEN INSERT (id, name, city, amount) "
            "VALUES (s.id, s.name, 'osl', s.amount)"
        )
    )
    # the merge read the target by the source's keys (the record index), not every file
    # (Spark lists the target's files twice: planning the write, then reading it)
    by_source_keys = [p for p in merged if p["where"]]
    assert by_source_keys and all("id" in p["where"] for p in by_source_keys)
    assert all("by record_index" in p["summary"] and p["files_kept"] <= 2 < files for p in by_source_keys)

    for key, (k, n, city, amount) in list(model.items()):
        if city == "ber":
            model[key] = (k, n, city, amount * 2)
    check(f"UPDATE {name} SET amount = amount * 2 WHERE city = 'ber'")

    for key in [k for k, r in model.items() if r[3] > 250]:
        del model[key]
    check(f"DELETE FROM {name} WHERE amount > 250")

    table = LakepruneTable(location, spark)
    writes = [e["operation"] for e in history(table.table()) if e["action"] == "commit"]
    assert writes == ["insert", "insert", "merge", "upsert", "delete"], "one instant per statement"

    with pytest.raises(Exception, match="cannot change record key column id"):
        spark.sql(f"UPDATE {name} SET id = id + 1000 WHERE id = 3")
    assert sorted(tuple(r) for r in spark.table(name).collect()) == sorted(model.values())

    files = len(LakeTable.open(location).snapshot().files())
    by_key = spark.sql(f"SELECT name FROM {name} WHERE id = 7")
    assert by_key.collect()[0][0] == "n7"
    assert recent_prunes()[-1]["files_kept"] == 1 == _files_read(by_key) < files, "record index"

    created = spark.sql(f"CREATE INDEX by_name ON {name} USING secondary_index (name)").collect()
    assert created[0].message.startswith("created index by_name (secondary_index); built up to ")
    shown = {r.name: r for r in spark.sql(f"SHOW INDEXES ON {name}").collect()}
    assert (shown["by_name"].type, shown["by_name"].columns, shown["by_name"].state) == (
        "secondary_index",
        "name",
        "ready",
    )
    by_name = spark.sql(f"SELECT id FROM {name} WHERE name = 'u1'")
    assert [r.id for r in by_name.collect()] == [1]
    assert _files_read(by_name) == 1 < files, "pruned by the secondary index just created"

    for instant, expected in instants.items():  # time travel
        wanted = sorted(expected.values())
        old = spark.sql(f"SELECT * FROM {name} VERSION AS OF '{instant}'")
        assert sorted(tuple(r) for r in old.collect()) == wanted, instant
        by_option = spark.read.option("snapshot", instant).table(name)
        assert sorted(tuple(r) for r in by_option.collect()) == wanted, instant
        at = parse_instant(instant)  # the session's time zone is UTC
        later = at + timedelta(microseconds=999)
        micros = (later - EPOCH) // timedelta(microseconds=1)
        for moment in (
            f"'{at:%Y-%m-%d %H:%M:%S.%f}'",
            f"TIMESTAMP '{later:%Y-%m-%d %H:%M:%S.%f}'",
            f"timestamp_micros({micros})",  # an expression, as Spark's own time travel takes
        ):
            by_time = spark.sql(f"SELECT * FROM {name} TIMESTAMP AS OF {moment}")
            assert sorted(tuple(r) for r in by_time.collect()) == wanted, moment
        by_time_option = spark.read.option("asOfTime", at.isoformat()).table(name)
        assert sorted(tuple(r) for r in by_time_option.collect()) == wanted, instant
    too_early = r"lakeprune: .*no snapshot committed at or before 2000-01-01T"
    with pytest.raises(AnalysisException, match=too_early):
        spark.sql(f"SELECT * FROM {name} TIMESTAMP AS OF '2000-01-01 00:00:00'").collect()
    now = spark.sql(f"SELECT * FROM {name} TIMESTAMP AS OF current_timestamp()")
    assert sorted(tuple(r) for r in now.collect()) == sorted(model.values())
    with pytest.raises(AnalysisException, match=r"lakeprune: .*no snapshot committed at or before"):
        spark.sql(f"SELECT * FROM {name} TIMESTAMP AS OF current_timestamp() - INTERVAL 1 DAY").collect()
    with pytest.raises(AnalysisException, match="timestamp expression cannot refer to any columns"):
        spark.sql(f"SELECT * FROM {name} TIMESTAMP AS OF id")  # Spark's own parse refuses it
    with pytest.raises(AnalysisException, match="without columns, subqueries or random values"):
        spark.sql(f"SELECT * FROM {name} TIMESTAMP AS OF timestamp_seconds(rand())")
    with pytest.raises(Exception, match=r"lakeprune: .*20200101000000000"):
        spark.sql(f"SELECT * FROM {name} VERSION AS OF '20200101000000000'").collect()
    # Spark reuses the catalog table's relation with the new query's options: the latest again
    assert sorted(tuple(r) for r in spark.table(name).collect()) == sorted(model.values())


def test_merge_by_source_clauses_and_a_merge_that_changes_nothing(
    spark: SparkSession, tmp_path: Path, catalog_name: str
) -> None:
    location = str(tmp_path / "t")
    name = catalog_name
    spark.createDataFrame([(i, f"n{i}", "d0") for i in range(6)], SCHEMA).write.format("lakeprune").option(
        "recordKey", "id"
    ).save(location)
    spark.sql(f"CREATE TABLE {name} USING lakeprune LOCATION '{location}'")
    spark.createDataFrame([(1, "one", "d1"), (9, "nine", "d1")], SCHEMA).createOrReplaceTempView(
        f"{name}_src"
    )
    spark.sql(
        f"MERGE INTO {name} t USING {name}_src s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT * "
        "WHEN NOT MATCHED BY SOURCE AND t.id < 3 THEN DELETE "
        "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET name = upper(t.name)"
    )
    expected = [(1, "one", "d1"), (3, "N3", "d0"), (4, "N4", "d0"), (5, "N5", "d0"), (9, "nine", "d1")]
    assert _rows(spark, location) == expected
    assert sorted(duckdb_rows(snapshot_files(location))) == expected
    before = len(history(LakeTable.open(location)))
    spark.sql(
        f"MERGE INTO {name} t USING {name}_src s ON t.id = s.id AND s.id > 100 WHEN MATCHED THEN DELETE"
    )
    assert len(history(LakeTable.open(location))) == before, "nothing matched: no instant"


def test_a_merge_on_a_composite_key_reads_only_the_files_of_the_sources_keys(
    spark: SparkSession, tmp_path: Path, catalog_name: str
) -> None:
    location = str(tmp_path / "visits")
    name = catalog_name
    schema = "day string, id bigint, name string"
    LakepruneTable.create(location, schema, record_key=["day", "id"], properties=SMALL_FILES, spark=spark)
    spark.sql(f"CREATE TABLE {name} USING lakeprune LOCATION '{location}'")
    model = {(f"d{d}", i): (f"d{d}", i, f"n{i}") for d in range(3) for i in range(20)}
    spark.createDataFrame(list(model.values()), schema).createOrReplaceTempView(f"{name}_rows")
    spark.sql(f"INSERT INTO {name} SELECT * FROM {name}_rows")
    files = len(LakeTable.open(location).snapshot().files())
    spark.createDataFrame(
        [("d1", 5, "five", "update"), ("d1", 7, "", "delete"), ("d1", 99, "new", "insert")],
        "day string, id bigint, name string, op string",
    ).createOrReplaceTempView(f"{name}_changes")
    model[("d1", 5)] = ("d1", 5, "five")
    del model[("d1", 7)]
    model[("d1", 99)] = ("d1", 99, "new")
    merged = _prunes_during(
        lambda: spark.sql(
            f"MERGE INTO {name} t USING {name}_changes s ON t.id = s.id AND t.day = s.day "
            "WHEN MATCHED AND s.op = 'delete' THEN DELETE "
            "WHEN MATCHED THEN UPDATE SET name = s.name "
            "WHEN NOT MATCHED THEN INSERT (day, id, name) VALUES (s.day, s.id, s.name)"
        )
    )
    expected = sorted(model.values())
    assert sorted(tuple(r) for r in spark.table(name).collect()) == expected
    assert sorted(duckdb_rows(snapshot_files(location))) == expected
    # the target was read by the source's key tuples (the record index: day d1 x ids 5, 7, 99), not
    # by the NOT NULL conditions that Spark infers from the join alone
    by_source_keys = [p for p in merged if " IN (" in p["where"]]
    assert by_source_keys and all('"day" = ' in p["where"] for p in by_source_keys)
    assert all(
        "by record_index on day,id" in p["summary"] and p["files_kept"] <= 2 < files for p in by_source_keys
    )


def test_create_table_with_columns_makes_a_lakeprune_table(
    spark: SparkSession, tmp_path: Path, catalog_name: str
) -> None:
    location = str(tmp_path / "made")
    spark.sql(
        f"CREATE TABLE {catalog_name} (id bigint, name string, day string) USING lakeprune "
        f"PARTITIONED BY (day) TBLPROPERTIES ('primaryKey' = 'id') LOCATION '{location}'"
    )
    config = LakeTable.open(location).config
    assert (config.record_key, config.partition_fields) == (("id",), ("day",))
    spark.sql(f"INSERT INTO {catalog_name} VALUES (1, 'a', 'd0'), (2, 'b', 'd1')")
    assert sorted(tuple(r) for r in spark.table(catalog_name).collect()) == [(1, "a", "d0"), (2, "b", "d1")]
    assert {f.partition for f in LakeTable.open(location).snapshot().files()} == {"day=d0", "day=d1"}

    other = f"{catalog_name}_x"
    try:
        with pytest.raises(Exception, match="TBLPROPERTIES \\('primaryKey' = 'id'\\)"):
            spark.sql(f"CREATE TABLE {other} (id bigint) USING lakeprune LOCATION '{tmp_path}/no_key'")
        with pytest.raises(Exception, match="has the columns"):
            spark.sql(f"CREATE TABLE {other} (id int, zzz string) USING lakeprune LOCATION '{location}'")
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {other}")
    assert _rows(spark, location) == [(1, "a", "d0"), (2, "b", "d1")]


def test_insert_into_and_insert_overwrite_run_the_write_path(spark: SparkSession, tmp_path: Path) -> None:
    """Spark SQL's INSERT into a lakeprune catalog table is planned as the DataFrame write (the
    `LakepruneWrites` strategy), not as Parquet files dropped into the table's root (rows never
    committed) nor, for INSERT OVERWRITE, as the deletion of that root with the table's timeline."""
    location = str(tmp_path / "sqlt")
    first = spark.createDataFrame([(1, "a", "d0")], SCHEMA)
    first.write.format("lakeprune").option("recordKey", "id").save(location)
    name = f"lp_sql_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {name} USING lakeprune LOCATION '{location}'")
    try:
        spark.sql(f"INSERT INTO {name} VALUES (2, 'b', 'd1')")
        assert sorted(tuple(r) for r in spark.table(name).collect()) == [(1, "a", "d0"), (2, "b", "d1")]
        spark.sql(f"INSERT INTO {name} SELECT id + 10, upper(name), day FROM {name}")
        spark.createDataFrame([(5, "e", "d1")], SCHEMA).write.insertInto(name)
        expected = [(1, "a", "d0"), (2, "b", "d1"), (5, "e", "d1"), (11, "A", "d0"), (12, "B", "d1")]
        assert _rows(spark, location) == sorted(spark.table(name).collect()) == expected
        existing = r"lakeprune: 1 record key\(s\) already exist .*MERGE INTO"
        with pytest.raises(AnalysisException, match=existing):
            spark.sql(f"INSERT INTO {name} VALUES (5, 'again', 'd1')")
        assert _rows(spark, location) == expected, "nothing written"

        spark.sql(f"INSERT OVERWRITE {name} VALUES (7, 'x', 'd0')")
        assert _rows(spark, location) == [tuple(r) for r in spark.table(name).collect()] == [(7, "x", "d0")]
        table = LakepruneTable(location, spark).table()
        writes = [e["operation"] for e in history(table)]
        assert writes[-1] == "overwrite" and writes.count("insert") == 4
        strays = [p.name for p in Path(location).iterdir() if p.name.startswith(("part-", "_SUCCESS"))]
        assert strays == [], "no file outside lakeprune's commits"
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_save_as_table_creates_the_table_and_its_catalog_entry(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "saved")
    name = f"lp_sql_{uuid.uuid4().hex[:8]}"
    df = spark.createDataFrame([(1, "a", "d0"), (2, "b", "d1")], SCHEMA)
    try:
        df.write.format("lakeprune").option("recordKey", "id").option("path", location).saveAsTable(name)
        assert sorted(tuple(r) for r in spark.table(name).collect()) == [(1, "a", "d0"), (2, "b", "d1")]
        spark.sql(f"INSERT INTO {name} VALUES (3, 'c', 'd0')")
        assert _rows(spark, location) == [(1, "a", "d0"), (2, "b", "d1"), (3, "c", "d0")]
        assert LakepruneTable(location, spark).table().config.record_key == ("id",)
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")
    assert _rows(spark, location) == [(1, "a", "d0"), (2, "b", "d1"), (3, "c", "d0")], "DROP keeps the data"


def test_an_overwrite_of_some_partitions_is_refused(spark: SparkSession, tmp_path: Path) -> None:
    from builder.adopt import adopt_table
    from tests.support_adopt import write_hive

    location = write_hive(spark, tmp_path / "hive", ["city"], range(20))
    adopt_table(spark, str(location), "id", partition_by=["city"])
    before = sorted(tuple(r) for r in spark.read.format("lakeprune").load(str(location)).collect())
    name = f"lp_sql_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {name} USING lakeprune LOCATION '{location}'")
    try:
        refused = "lakeprune: INSERT OVERWRITE of some partitions is not supported"
        with pytest.raises(Exception, match=refused):
            spark.sql(
                f"INSERT OVERWRITE {name} PARTITION (city = 'ams') SELECT 99, 'n', 1.0, DATE '2026-01-01'"
            )
        after = sorted(tuple(r) for r in spark.read.format("lakeprune").load(str(location)).collect())
        assert after == before
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_index_statements_on_catalog_tables_and_on_locations(
    spark: SparkSession, tmp_path: Path, catalog_name: str
) -> None:
    location = str(tmp_path / "people")
    table = LakepruneTable.create(location, SCHEMA, record_key="id", properties=SMALL_FILES, spark=spark)
    table.insert(spark.createDataFrame([(i, f"p{i}", f"d{i % 4}") for i in range(40)], SCHEMA))
    spark.sql(f"CREATE TABLE {catalog_name} USING lakeprune LOCATION '{location}'")
    files = len(LakeTable.open(location).snapshot().files())

    # defined without a build (the CLI's `sql --no-build`), built by REFRESH INDEX
    table.sql("CREATE INDEX bf ON people USING bloom_filters (name)", build=False)
    assert spark.sql(f"SHOW INDEX FROM {catalog_name}").where("name = 'bf'").first().state == "building"
    refreshed = spark.sql(f"REFRESH INDEX bf ON TABLE default.{catalog_name}").first().message
    assert refreshed.startswith("index 'bf' is ready up to ")
    again = spark.sql(f"REFRESH INDEX bf ON {catalog_name}").first().message
    assert again == "index 'bf' is ready (it already was)"
    assert [r.id for r in spark.sql(f"SELECT id FROM {catalog_name} WHERE name = 'p9'").collect()] == [9]
    assert recent_prunes()[-1]["files_kept"] < files, "pruned by the bloom filters REFRESH INDEX built"

    # a table by its location, as lakeprune.`path`; identifiers in Spark's quoting
    spark.sql(f"CREATE INDEX IF NOT EXISTS `by_day` ON lakeprune.`{location}` USING column_stats (`day`)")
    by_location = spark.sql(f"SHOW INDEXES IN lakeprune.`{location}`").collect()
    assert {r.name for r in by_location} >= {"bf", "by_day"}
    dropped = spark.sql(f"DROP INDEX bf ON {catalog_name}").first().message
    assert dropped.startswith("dropped index 'bf'")
    assert "bf" not in {r.name for r in spark.sql(f"SHOW INDEXES ON {catalog_name}").collect()}

    # mistakes are AnalysisExceptions with lakeprune's one line; nothing changes
    with pytest.raises(AnalysisException, match=r"lakeprune: .*nope"):
        spark.sql(f"CREATE INDEX x ON {catalog_name} USING bloom_filters (nope)")
    with pytest.raises(AnalysisException, match=r"lakeprune: .*no index"):
        spark.sql(f"DROP INDEX bf ON {catalog_name}")
    spark.createDataFrame([(1,)], "a int").createOrReplaceTempView(f"{catalog_name}_view")
    with pytest.raises(AnalysisException, match="is not a lakeprune table of the session catalog"):
        spark.sql(f"SHOW INDEXES ON {catalog_name}_view")
    with pytest.raises(AnalysisException, match="lakeprune: expected SHOW INDEXES ON table"):
        spark.sql(f"SHOW INDEXES {catalog_name}")
    with pytest.raises(ParseException) as unread:  # CREATE INDEX that lakeprune cannot read: Spark's
        spark.sql(f"CREATE INDEX\nON {catalog_name} (name)")
    assert "lakeprune" not in str(unread.value)
    with pytest.raises(AnalysisException, match=r"lakeprune: no lakeprune table at .*missing"):
        spark.sql(f"SHOW INDEXES ON lakeprune.`{tmp_path / 'missing'}`").collect()
    assert {r.name for r in spark.sql(f"SHOW INDEXES ON {catalog_name}").collect()} == {
        "files",
        "record_index",
        "by_day",
    }
