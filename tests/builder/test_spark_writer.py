"""`df.write.format("lakeprune")` (issue 40, item 1): a new table is created from the DataFrame's
schema and the writer's options and filled in one instant; `append` inserts, upserts or deletes
through the write path of `LakepruneTable` (its indexes maintained: a secondary index answers the
upserted values); `overwrite` replaces every record in one instant, the indexes kept; `ignore`
leaves an existing table alone; the default mode refuses one; user mistakes (no record key, an
unknown operation) are one line starting "lakeprune:"."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from builder import LakepruneTable
from pruner.table.describe import history

SCHEMA = "id bigint, name string, day string"


def _rows(spark: SparkSession, location: str) -> list[tuple[object, ...]]:
    return sorted(tuple(r) for r in spark.read.format("lakeprune").load(location).collect())


def test_a_dataframe_writes_a_table_as_lakeprune_table_does(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "people")
    first = spark.createDataFrame([(i, f"n{i}", f"d{i % 2}") for i in range(20)], SCHEMA)
    first.write.format("lakeprune").option("recordKey", "id").partitionBy("day").save(location)
    table = LakepruneTable(location, spark)
    config = table.table().config
    assert (config.partition_fields, config.record_key) == (("day",), ("id",))
    assert _rows(spark, location) == sorted((i, f"n{i}", f"d{i % 2}") for i in range(20))
    table.sql("CREATE INDEX by_name ON people USING secondary_index (name)")

    changed = spark.createDataFrame([(3, "moved", "d1"), (40, "new", "d0")], SCHEMA)
    changed.write.format("lakeprune").mode("append").option("operation", "upsert").save(location)
    gone = spark.createDataFrame([(4, None, None)], SCHEMA)
    gone.write.format("lakeprune").mode("append").option("operation", "delete").save(location)
    expected = {(i, f"n{i}", f"d{i % 2}") for i in range(20) if i not in (3, 4)} | {
        (3, "moved", "d1"),
        (40, "new", "d0"),
    }
    assert _rows(spark, location) == sorted(expected)
    writes = [
        e["operation"] for e in history(table.table()) if e["operation"] in ("insert", "upsert", "delete")
    ]
    assert writes == ["insert", "upsert", "delete"]  # one instant each
    kept = table.prune("name = 'moved'")
    assert kept.files_selected == 1  # the secondary index was maintained by the DataFrame write

    before = len(history(table.table()))
    first.write.format("lakeprune").mode("ignore").save(location)
    assert len(history(table.table())) == before


def test_overwrite_replaces_every_record_and_keeps_the_indexes(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "people")
    rows = [(i, f"n{i}", f"d{i % 2}") for i in range(20)]
    spark.createDataFrame(rows, SCHEMA).write.format("lakeprune").option("recordKey", "id").save(location)
    table = LakepruneTable(location, spark)
    table.sql("CREATE INDEX by_name ON people USING secondary_index (name)")

    replacement = [(3, "n3", "d1"), (7, "seven", "d0"), (50, "fifty", "d0")]
    spark.createDataFrame(replacement, SCHEMA).write.format("lakeprune").mode("overwrite").save(location)
    assert _rows(spark, location) == sorted(replacement)
    assert [e["operation"] for e in history(table.table())][-1] == "overwrite"
    assert table.prune("name = 'n5'").files_selected == 0, "the secondary index dropped the old names"
    assert table.prune("name = 'seven'").files_selected == 1

    fresh = str(tmp_path / "fresh")  # overwrite creates a table that does not exist
    spark.createDataFrame(rows, SCHEMA).write.format("lakeprune").mode("overwrite").option(
        "recordKey", "id"
    ).save(fresh)
    assert _rows(spark, fresh) == sorted(rows)


@pytest.mark.parametrize(
    ("mode", "options", "error"),
    [
        ("errorifexists", {"recordKey": "id"}, "already exists"),
        ("overwrite", {"operation": "upsert"}, "option operation 'upsert' is for mode('append')"),
        ("append", {"operation": "merge"}, "option operation must be insert, upsert or delete"),
    ],
)
def test_mistakes_on_an_existing_table_are_one_line(
    spark: SparkSession, tmp_path: Path, mode: str, options: dict[str, str], error: str
) -> None:
    location = str(tmp_path / "t")
    df = spark.createDataFrame([(1, "a", "d0")], SCHEMA)
    df.write.format("lakeprune").option("recordKey", "id").save(location)
    with pytest.raises(Exception, match="lakeprune: ") as raised:
        df.write.format("lakeprune").mode(mode).options(**options).save(location)
    assert error in str(raised.value)
    assert _rows(spark, location) == [(1, "a", "d0")]


def test_a_new_table_needs_a_record_key(spark: SparkSession, tmp_path: Path) -> None:
    df = spark.createDataFrame([(1, "a", "d0")], SCHEMA)
    with pytest.raises(Exception, match="option\\('recordKey', 'id'\\)"):
        df.write.format("lakeprune").mode("append").save(str(tmp_path / "t"))
    assert not (tmp_path / "t").exists()
