"""Index statements and builds: clear errors that write nothing, a build that catches up with writes
committed after the index was defined, maintenance through upserts and deletes, and DROP."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pytest
from pyspark.sql import SparkSession

from builder.index_build import build_index, execute
from pruner.errors import InvalidInputError
from pruner.index.definitions import INDEX_DEFS, IndexState
from pruner.table.table import LakeTable
from tests.support import CITIES, create, keys_df, make_row, to_df


def _covered_files(location: str, index: str) -> set[tuple[str, str]]:
    table = LakeTable.open(location)
    rows = table.snapshot().index_partition(table.spec(table.definition(index))).read_all()
    return set(zip(rows["partition"].to_pylist(), rows["file_name"].to_pylist(), strict=True))


def _live_files(location: str) -> set[tuple[str, str]]:
    return {(f.partition, f.file_name) for f in LakeTable.open(location).snapshot().files()}


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("CREATE INDEX s ON t USING sorted_stuff (id)", "unknown index type"),
        ("CREATE INDEX s ON t USING column_stats (nope)", "unknown column 'nope'"),
        ("CREATE INDEX files ON t USING column_stats", "already exists"),
        ("CREATE INDEX b ON t USING bloom_filters", "needs its column"),
        ("CREATE INDEX b ON t USING bloom_filters (id) OPTIONS (fpp = 2)", "fpp must be between"),
        ("CREATE INDEX b ON t USING bloom_filters (id) OPTIONS (colour = 'red')", "unknown option"),
        ("CREATE INDEX p ON t USING partition_stats", "not partitioned"),
        ("CREATE INDEX h ON t (hour(ok))", "takes a value of type"),
        ("CREATE INDEX s ON other USING column_stats", "names table 'other'"),
        ("DROP INDEX nope ON t", "has no index 'nope'"),
        ("SELECT * FROM t", "unsupported statement"),
    ],
)
def test_bad_statements_are_refused_and_write_nothing(tmp_path: Path, statement: str, message: str) -> None:
    from builder.create import create_table

    location = str(tmp_path / "t")
    create_table(location, "id bigint, ok boolean, ts timestamp", "id")
    with pytest.raises(InvalidInputError, match=message):
        execute(location, statement)
    assert not (tmp_path / "t" / INDEX_DEFS).exists()


def test_build_catches_up_and_writes_keep_indexes_current(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "t")
    table = create(location, spark)
    table.insert(to_df(spark, [make_row(k, CITIES[k % 3]) for k in range(30)]))
    table.sql("CREATE INDEX stats ON t USING column_stats (id, score)", build=False)
    assert LakeTable.open(location).definition("stats").state == IndexState.BUILDING
    # A write while the index is building maintains it for the files it writes ...
    table.upsert(to_df(spark, [make_row(k, CITIES[k % 3], 1) for k in (0, 3)]))  # one partition only
    assert _covered_files(location, "stats") < _live_files(location)
    # ... and the build covers the rest, then marks it ready.
    instant = build_index(location, "stats", spark)
    definition = LakeTable.open(location).definition("stats")
    assert definition.state == IndexState.READY and definition.complete_up_to == instant
    assert _covered_files(location, "stats") == _live_files(location)

    table.sql("CREATE INDEX pstats ON t USING partition_stats (id)")
    table.sql("CREATE INDEX bf ON t USING bloom_filters (id)")
    table.upsert(to_df(spark, [make_row(k, CITIES[(k + 1) % 3], 2) for k in range(1, 30, 5)]))
    table.delete(keys_df(spark, list(range(0, 30, 3))))
    for index in ("stats", "bf"):
        assert _covered_files(location, index) == _live_files(location), index
    snapshot = LakeTable.open(location).snapshot()
    pstats = snapshot.index_partition(snapshot.table.spec(snapshot.table.definition("pstats"))).read_all()
    counts = {
        p: sum(1 for f in snapshot.files() if f.partition == p) for p in pstats["partition"].to_pylist()
    }
    assert pstats["files"].to_pylist() == [counts[p] for p in pstats["partition"].to_pylist()]
    ids = [r["id"] for r in snapshot.read(["id"]).to_pylist()]
    assert pc.max(pstats["max_int"]).as_py() == max(ids)

    shown = {r["name"]: r for r in table.sql("SHOW INDEXES ON t").rows}
    assert set(shown) == {"files", "record_index", "stats", "pstats", "bf"}
    assert "dropped index 'bf'" in table.sql("DROP INDEX bf ON t").message
    assert not list((tmp_path / "t" / ".lakeprune" / "metadata" / "bloom_filters").glob("*.parquet"))
    assert "nothing dropped" in table.sql("DROP INDEX IF EXISTS bf ON t").message


def test_an_index_dropped_and_created_again_starts_afresh(spark: SparkSession, tmp_path: Path) -> None:
    """The old index's files are deleted with it; the new one must not expect them (a missing file
    would read as damage and make every prune fall back)."""
    location = str(tmp_path / "t")
    table = create(location, spark)
    table.sql("CREATE INDEX stats ON t USING column_stats (id)")
    table.insert(to_df(spark, [make_row(k, CITIES[k % 3]) for k in range(30)]))
    table.sql("DROP INDEX stats ON t")
    table.upsert(to_df(spark, [make_row(k, CITIES[k % 3], 1) for k in (1, 2)]))
    table.sql("CREATE INDEX stats ON t USING column_stats (id, score)")
    table.insert(to_df(spark, [make_row(k, CITIES[k % 3]) for k in range(30, 40)]))
    assert _covered_files(location, "stats") == _live_files(location)
    result = table.prune("id BETWEEN 3 AND 4")
    assert result.fallbacks == 0, [s.fallback for s in result.explain if s.fallback]
    assert result.files_selected < result.files_total


def test_build_over_a_table_with_no_live_file(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "t")
    table = create(location, spark)
    table.insert(to_df(spark, [make_row(k, CITIES[k % 3]) for k in range(6)]))
    table.delete(keys_df(spark, list(range(6))))
    assert LakeTable.open(location).snapshot().files() == []

    table.sql("CREATE INDEX by_day ON t USING secondary_index (day)")

    loaded = LakeTable.open(location)
    assert loaded.definition("by_day").state == IndexState.READY
    assert (
        loaded.snapshot().index_partition(loaded.spec(loaded.definition("by_day"))).read_all().num_rows == 0
    )
