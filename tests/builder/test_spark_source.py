"""Pruned Spark reads (`spark.read.format("lakeprune")`, `LakepruneTable.read(where=...)`, SQL over a
view): the DataFrame equals a full read filtered by Spark, and Spark reads exactly the files the
prune kept, counted by Spark itself (the scan's "number of files read" metric). Functional index
expressions written as Spark expressions prune; files the prune drops are never opened; user
mistakes are one line; a session started without the jar reads the format after
`builder.register(spark)`; the jar is built on demand."""

from __future__ import annotations

import math
import os
import random
import shutil
import time
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from builder import LakepruneTable
from builder.spark_source import CHECKOUT, JAR_ENV, SparkSourceError, recent_prunes, spark_jar
from pruner.errors import SnapshotNotFoundError
from pruner.index.definitions import IndexState
from pruner.table import statistics as statistics_module
from pruner.table.table import LakeTable
from tests import support
from tests.e2e.warehouse import table_reference
from tests.support_people import CASES as PEOPLE_CASES
from tests.support_people import Case
from tests.support_spark_cluster import spark_submit

SCHEMA = "id bigint, name string, score double, ts timestamp, day date"
BASE = datetime(2026, 1, 1, tzinfo=UTC)
NAMES = ["Ams", "BER", "cdg", "Dub", None]
# 20-row files: sorted by hour, each file holds one hour of the day.
FILE_ROWS = {"write.target_file_size_bytes": 64 * 20, "write.small_file_limit_bytes": 1}


def _rows(seed: int, count: int, names_by_hour: bool = False) -> list[tuple[Any, ...]]:
    """Random rows; with `names_by_hour`, the name depends on the hour (so `lower(name)` prunes)."""
    rng = random.Random(seed)
    rows = []
    for key in range(count):
        hour = key % 24
        rows.append(
            (
                key,
                NAMES[hour % 4] if names_by_hour else rng.choice(NAMES),
                rng.choice([None, float("nan"), round(rng.uniform(-5, 5), 2), round(rng.uniform(-5, 5), 2)]),
                BASE + timedelta(days=rng.randrange(3), hours=hour, minutes=rng.randrange(60)),
                (BASE + timedelta(days=rng.randrange(4))).date(),
            )
        )
    return rows


def _table(spark: SparkSession, location: Path, rows: list[tuple[Any, ...]]) -> LakepruneTable:
    table = LakepruneTable.create(str(location), SCHEMA, record_key="id", properties=FILE_ROWS, spark=spark)
    table.sql(f"CREATE INDEX hour_of_day ON {location.name} (hour(ts))")
    table.sql(f"CREATE INDEX name_lower ON {location.name} (lower(name))")
    table.sql(f"CREATE INDEX day_hour ON {location.name} (date_format(ts, '%Y-%m-%d %H'))")
    table.sql(f"CREATE INDEX hour_name ON {location.name} USING value_list (hour(ts) * 100 + length(name))")
    tail = "regexp_extract(name, '^[A-Z]([a-z]+)', 1)"
    table.sql(f"CREATE INDEX name_tail ON {location.name} USING value_list ({tail})")
    table.insert(spark.createDataFrame(rows, SCHEMA), sort_by=["hour(ts)"])
    return table


@pytest.fixture(scope="module")
def events(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> LakepruneTable:
    return _table(spark, tmp_path_factory.mktemp("warehouse") / "events", _rows(1, 480, names_by_hour=True))


@pytest.fixture(scope="module")
def tables(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> list[LakepruneTable]:
    """Two random tables, the second updated once (so it has file slices of two instants)."""
    root = tmp_path_factory.mktemp("random")
    first = _table(spark, root / "first", _rows(7, 200))
    second = _table(spark, root / "second", _rows(11, 150))
    second.upsert(spark.createDataFrame(_rows(12, 150)[::5], SCHEMA))
    return [first, second]


def files_read(df: DataFrame) -> tuple[list[Any], int | None]:
    """The rows of `df` and the number of files its scan read, from Spark's own metric (None when
    Spark's optimizer proved the result empty and planned no scan at all)."""
    rows = df.collect()
    plan = df._jdf.queryExecution().executedPlan()
    counts = [int(node.metrics().apply("numFiles").value()) for node in _nodes(plan) if _is_scan(node)]
    assert len(counts) <= 1, plan.toString()
    return rows, counts[0] if counts else None


def _is_scan(node: Any) -> bool:
    return bool(node.nodeName().startswith("Scan") and node.metrics().contains("numFiles"))


def _nodes(plan: Any) -> Iterator[Any]:
    if plan.nodeName() == "AdaptiveSparkPlan":
        plan = plan.executedPlan()
    yield plan
    children = plan.children()
    for i in range(children.size()):
        yield from _nodes(children.apply(i))


def full_read(spark: SparkSession, table: LakepruneTable, snapshot: str | None = None) -> DataFrame:
    """Every file of a snapshot, read by Spark's Parquet reader (the oracle)."""
    snap = table.snapshot(snapshot)
    paths = [snap.table.storage.full_uri(f.path) for f in snap.files()]
    return spark.read.schema(SCHEMA).parquet(*paths)


def assert_same(left: list[Any], right: list[Any]) -> None:
    """The same rows (NaN equal to NaN, as Spark has it)."""

    def rows(found: list[Any]) -> list[tuple[Any, ...]]:
        return sorted(
            tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in row) for row in found
        )

    assert rows(left) == rows(right)


@pytest.mark.parametrize(
    ("where", "kept"),
    [
        ("hour(ts) = 12", 1),
        ("hour(ts) IN (3, 4)", 2),
        ("date_format(ts, 'yyyy-MM-dd HH') = '2026-01-01 00'", 1),
        ("lower(name) = 'ams'", 6),  # hours 0, 4, 8, ...
        ("id = 17", 1),
        ("hour(ts) * 100 + length(name) = 1203", 1),  # an expression tree: hour 12 is 'Ams'
        ("length(name) + 100 * hour(ts) IN (1203, 1303)", 2),  # the same, commuted
        # 'Ams' and 'Dub' match, 'BER' and 'cdg' do not (Spark: '', the index: NULL)
        ("regexp_extract(name, '^[A-Z]([a-z]+)', 1) = 'ms'", 6),
        ("regexp_extract(name, '^[A-Z]([a-z]+)', 1) IN ('ms', 'ub')", 12),
    ],
)
def test_functional_and_key_predicates_prune(
    spark: SparkSession, events: LakepruneTable, where: str, kept: int | None
) -> None:
    rows, read = files_read(spark.read.format("lakeprune").load(events.location).where(where))
    assert_same(rows, full_read(spark, events).where(where).collect())
    assert rows
    total = len(events.snapshot().files())
    assert read == recent_prunes()[-1]["files_kept"]
    assert read == kept if kept is not None else read < total


def test_sql_over_a_view_and_read_where_prune(spark: SparkSession, events: LakepruneTable) -> None:
    spark.read.format("lakeprune").load(events.location).createOrReplaceTempView("events_view")
    rows, read = files_read(spark.sql("SELECT id, ts FROM events_view WHERE hour(ts) = 5"))
    assert read == 1 and len(rows) == 20
    assert recent_prunes()[-1]["summary"].endswith(
        "kept 1 of 24 files by functional_index on hour_of_day,ts 24->1"
    )
    rows, read = files_read(events.read(where="hour(ts) BETWEEN 5 AND 6"))
    assert read == 2 and len(rows) == 40


def test_partitioned_tables_and_joins(spark: SparkSession, tmp_path: Path) -> None:
    table = support.create(str(tmp_path / "trips"), spark)
    table.insert(support.to_df(spark, [support.make_row(k, support.CITIES[k % 3]) for k in range(60)]))
    df = spark.read.format("lakeprune").load(table.location)
    rows, read = files_read(df.where("city = 'ber'"))
    assert sorted(r.id for r in rows) == list(range(1, 60, 3))
    assert read is not None and read < len(table.snapshot().files())
    keys = spark.createDataFrame([(4,), (5,), (99,)], "id bigint")
    joined = df.join(keys, "id").where("city <> 'cdg'").select("id", "city")
    assert sorted(tuple(r) for r in joined.collect()) == [(4, "ber")]


def test_snapshot_and_warehouse_name(spark: SparkSession, tmp_path: Path) -> None:
    table = LakepruneTable.create(str(tmp_path / "t"), SCHEMA, record_key="id", spark=spark)
    assert table.read().count() == 0  # a table with no files
    first = table.insert(spark.createDataFrame(_rows(3, 10), SCHEMA)).instant
    table.insert(spark.createDataFrame([(100 + r[0], *r[1:]) for r in _rows(4, 10)], SCHEMA))
    reader = spark.read.format("lakeprune")
    assert reader.load(table.location).count() == 20
    assert reader.option("snapshot", first).load(table.location).count() == 10
    assert table.read(snapshot=first).count() == 10
    by_name = spark.read.format("lakeprune").option("warehouse", str(tmp_path)).load("t")
    assert by_name.where("id >= 100").count() == 10
    by_option = spark.read.format("lakeprune").option("warehouse", str(tmp_path)).option("table", "t").load()
    assert sorted(by_option.inputFiles()) == sorted(
        f"file://{table.location}/{f.path}" for f in table.snapshot().files()
    )


def test_nan_is_greater_than_every_number_in_spark(spark: SparkSession, tmp_path: Path) -> None:
    table = LakepruneTable.create(
        str(tmp_path / "nan"),
        SCHEMA,
        record_key="id",
        properties={"write.target_file_size_bytes": 1, "write.small_file_limit_bytes": 1},
        spark=spark,
    )
    table.sql("CREATE INDEX score_stats ON nan USING column_stats (score)")
    rows = [(key, None, score, BASE, BASE.date()) for key, score in enumerate([1.0, math.nan, 5.0])]
    table.insert(spark.createDataFrame(rows, SCHEMA))
    assert len(table.snapshot().files()) == 3
    df = spark.read.format("lakeprune").load(table.location)
    wheres = ("score > 3", "score >= 3", "score = double('NaN')", "score < 3", "score BETWEEN 0 AND 2")
    for where in (*wheres, "NOT isnan(score)", "isnan(score)"):
        assert_same(df.where(where).collect(), full_read(spark, table).where(where).collect())
    assert sorted(r.id for r in df.where("score > 3").collect()) == [1, 2]
    # Files read: each file's NaN count says whether NaN can pass a range that NaN passes in Spark.
    assert [files_read(df.where(where))[1] for where in wheres] == [2, 2, 3, 1, 1]


def test_a_composite_secondary_index_prunes_spark_filters_on_its_columns(
    spark: SparkSession, tmp_path: Path
) -> None:
    """`USING secondary_index (name, day)`: Spark's filters on both columns keep only the files
    holding their combinations (a leading prefix alone: `tests/builder/test_secondary_index.py`)."""
    table = LakepruneTable.create(
        str(tmp_path / "places"), SCHEMA, record_key="id", properties=FILE_ROWS, spark=spark
    )
    rows = [
        (key, f"n{key // 20}", float(key), BASE, (BASE + timedelta(days=key % 3)).date()) for key in range(80)
    ]
    table.insert(spark.createDataFrame(rows, SCHEMA), sort_by=["id"])
    table.sql("CREATE INDEX by_name_day ON places USING secondary_index (name, day)")
    files = len(table.snapshot().files())
    df = spark.read.format("lakeprune").load(table.location)
    assert files == 4  # one per name, 20 rows each
    for where, holding in (
        ("name = 'n1' AND day = DATE '2026-01-02'", 1),
        ("name IN ('n0', 'n2') AND day = DATE '2026-01-03'", 2),
        ("name = 'n9' AND day = DATE '2026-01-01'", 0),
    ):
        found, read = files_read(df.where(where))
        assert_same(found, full_read(spark, table).where(where).collect())
        assert (read or 0) == holding, (where, read, recent_prunes()[-1])
        assert "secondary_index" in recent_prunes()[-1]["summary"], recent_prunes()[-1]


@pytest.mark.parametrize("case", PEOPLE_CASES, ids=lambda case: case.name)
def test_predicates_as_users_write_them_prune_through_expression_indexes(
    spark: SparkSession, people_table: str, case: Case
) -> None:
    """Issue 38: indexes on `lower(substring(name, 1, 3))`, `salary + salary * pct`,
    `hour(from_unixtime(epoch))` (Catalyst's `hour(CAST(from_unixtime(epoch, ...) AS TIMESTAMP))`),
    `(country, city)` and a bloom filter on `lower(email)`, each reached by the predicate as a Spark
    user writes it: DuckDB's answer, Spark reads few files."""
    found, read = files_read(spark.read.format("lakeprune").load(people_table).where(case.spark))
    want = table_reference(people_table, f"SELECT id FROM {{t}} WHERE {case.duckdb} ORDER BY id")
    assert sorted(row[0] for row in found) == [row[0] for row in want] and want
    assert read is not None and 0 < read <= case.kept, (case.name, read, recent_prunes()[-1])


def test_the_relation_size_is_its_files_and_reads_no_column_stats(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spark's size of a lakeprune relation (what its join planning weighs) is the snapshot's bytes
    of data files, and describing the table for it does not read the column-stats index."""
    table = LakepruneTable.create(str(tmp_path / "sized"), SCHEMA, record_key="id", spark=spark)
    table.sql("CREATE INDEX score_stats ON sized USING column_stats (score)")
    table.insert(spark.createDataFrame(_rows(5, 40), SCHEMA))
    assert {d.state for d in table.snapshot().table.definitions} == {IndexState.READY}

    def unread(*args: object) -> None:
        raise AssertionError("the Spark source read column statistics to size a relation")

    monkeypatch.setattr(statistics_module, "column_statistics", unread)
    df = spark.read.format("lakeprune").load(table.location)
    size = df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()
    assert int(size) == sum(f.size for f in table.snapshot().files())


def test_dropped_files_are_never_opened(spark: SparkSession, events: LakepruneTable, tmp_path: Path) -> None:
    copy = tmp_path / "events"
    shutil.copytree(events.location, copy)
    snapshot = LakeTable.open(str(copy)).snapshot()
    kept = {s.path for s in LakepruneTable(str(copy), spark).prune("hour(ts) = 12").splits}
    victim = next(f for f in snapshot.files() if snapshot.table.storage.full_uri(f.path) not in kept)
    (copy / victim.path).write_bytes(b"not parquet")
    df = spark.read.format("lakeprune").load(str(copy))
    assert df.where("hour(ts) = 12").count() == 20
    with pytest.raises(Py4JJavaError, match="is not a Parquet file"):  # a full read opens it
        df.count()


def test_user_mistakes_are_one_line(spark: SparkSession, events: LakepruneTable, tmp_path: Path) -> None:
    with pytest.raises(PySparkException, match=r"lakeprune: no lakeprune table at .*nope") as missing:
        spark.read.format("lakeprune").load(str(tmp_path / "nope")).count()
    assert "Traceback" not in str(missing.value)
    with pytest.raises(PySparkException, match=r"lakeprune: no completed instant 20990101000000000"):
        spark.read.format("lakeprune").option("snapshot", "20990101000000000").load(events.location)
    with pytest.raises(SnapshotNotFoundError, match="not an instant"):
        events.read(snapshot="yesterday")


COLUMNS = st.sampled_from(["id", "score"])
atoms = st.one_of(
    st.builds(
        lambda c, op, v: f"{c} {op} {v}",
        COLUMNS,
        st.sampled_from(["=", "<", ">=", "<>"]),
        st.integers(-5, 210),
    ),
    st.builds(lambda a, b: f"id IN ({a}, {b})", st.integers(0, 210), st.integers(0, 210)),
    st.builds(lambda h: f"hour(ts) = {h}", st.integers(-1, 24)),
    st.builds(lambda h: f"hour(ts) >= {h}", st.integers(0, 23)),
    st.builds(lambda n: f"lower(name) = '{n}'", st.sampled_from(["ams", "ber", "Cdg", "x"])),
    st.builds(lambda n: f"name = '{n}'", st.sampled_from(["Ams", "BER", "cdg"])),
    st.builds(
        lambda d, h: f"date_format(ts, 'yyyy-MM-dd HH') = '2026-01-0{d} {h:02d}'",
        st.integers(1, 3),
        st.integers(0, 23),
    ),
    st.builds(
        lambda d, h: f"ts < TIMESTAMP '2026-01-0{d} {h:02d}:30:00'", st.integers(1, 3), st.integers(0, 23)
    ),
    st.builds(lambda d: f"day = DATE '2026-01-0{d}'", st.integers(1, 4)),
    st.sampled_from(["name IS NULL", "score IS NOT NULL", "name LIKE 'B%'", "abs(score) < 1"]),
)
predicates = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.builds(lambda a, b: f"({a}) AND ({b})", inner, inner),
        st.builds(lambda a, b: f"({a}) OR ({b})", inner, inner),
        st.builds(lambda a: f"NOT ({a})", inner),
    ),
    max_leaves=3,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(index=st.integers(0, 1), where=predicates)
def test_spark_reads_keep_the_invariant(
    spark: SparkSession, tables: list[LakepruneTable], index: int, where: str
) -> None:
    table = tables[index]
    before = recent_prunes()[-1:]
    rows, read = files_read(spark.read.format("lakeprune").load(table.location).where(where))
    assert_same(rows, full_read(spark, table).where(where).collect())
    if read is None:  # an empty result without a scan (e.g. `lower(name) = 'ams' AND name = 'BER'`)
        assert not rows and all(a is b for a, b in zip(recent_prunes()[-1:], before, strict=True))
    else:
        assert read == recent_prunes()[-1]["files_kept"] <= len(table.snapshot().files())


REGISTER_LATER = """
import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
try:
    spark.read.format("lakeprune").load(sys.argv[1]).count()
    print("read before register")
except Exception as exc:
    print("before:", type(exc).__name__)
import builder
builder.register(spark)
print("rows:", spark.read.format("lakeprune").load(sys.argv[1]).where("hour(ts) = 12").count())
"""


def test_a_session_without_the_jar_reads_after_register(events: LakepruneTable, tmp_path: Path) -> None:
    script = tmp_path / "register_later.py"
    script.write_text(REGISTER_LATER)
    submission = spark_submit("local[1]", [str(script), events.location], {}, tmp_path)
    assert submission.returncode == 0, submission.stderr[-3000:]
    lines = submission.stdout.splitlines()
    assert "read before register" not in lines
    assert "rows: 20" in lines


def test_the_jar_is_found_or_built_on_demand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(JAR_ENV, raising=False)
    checkout = tmp_path / "checkout"
    shutil.copytree(CHECKOUT / "connector" / "spark" / "src", checkout / "connector" / "spark" / "src")
    shutil.copy(CHECKOUT / "connector" / "spark" / "build.sh", checkout / "connector" / "spark")
    shutil.copytree(CHECKOUT / "proto", checkout / "proto")  # the wire's messages are generated from it
    with pytest.raises(SparkSourceError, match=r"run connector/spark/build\.sh"):
        spark_jar(checkout, build=False)
    jar = spark_jar(checkout)
    assert jar == checkout / "connector" / "spark" / "target" / "lakeprune-spark.jar"
    with zipfile.ZipFile(jar) as archive:
        names = archive.namelist()
    # the source, the lakeprune.v1 messages and the protobuf runtime they need
    assert {
        "io/lakeprune/spark/LakepruneFileIndex.class",
        "lakeprune/v1/PruningServiceOuterClass.class",
    } <= set(names)
    assert "com/google/protobuf/Message.class" in names
    old = time.time() - 3600  # a checkout that pulled newer sources than its jar runs build.sh again
    os.utime(jar, (old, old))
    assert spark_jar(checkout) == jar and jar.stat().st_mtime > old
    monkeypatch.setenv(JAR_ENV, str(tmp_path / "missing.jar"))
    with pytest.raises(SparkSourceError, match=r"\$LAKEPRUNE_SPARK_JAR: .*missing.jar is not a file"):
        spark_jar(checkout)
