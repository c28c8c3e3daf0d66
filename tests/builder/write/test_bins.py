"""How new rows are cut into file groups: by boundaries on their (sort values, record key) order
found over the narrow order values, then a range join. Checked against the definition — each bin
takes the rows ranked [start, end) within their partition by Spark's own sort of the typed columns
(nulls first) — on sort values with nulls, NaN, infinities and both zeros, several partitions and
bins of random sizes (a single bin for a partition, single-row bins). Above the sampling threshold,
every row still gets exactly one bin, the bins in rank order."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from builder.write import writer
from builder.write.plan import InsertBin
from builder.write.tasks import FILE_GROUP, PARTITION
from pruner.table.table import LakeTable
from tests.support import create, make_row, to_df

Assign = Callable[[DataFrame, list[InsertBin]], DataFrame]
SCORES = [None, float("nan"), float("-inf"), float("inf"), -0.0, 0.0, 1.5, -2.25, 7.0]


def _rows(spark: SparkSession, seed: int) -> DataFrame:
    rng = random.Random(seed)
    rows = []
    for key in rng.sample(range(10_000), 300):
        row = make_row(key, rng.choice(["ams", "ber", "cdg"]))
        row["score"] = rng.choice(SCORES)
        rows.append(row)
    return to_df(spark, rows).withColumn(PARTITION, F.concat(F.lit("city="), F.col("city")))


def _bins(counts: dict[str, int], seed: int) -> list[InsertBin]:
    rng = random.Random(seed)
    bins = []
    for partition, count in sorted(counts.items()):
        cuts = sorted(rng.sample(range(1, count), min(count - 1, rng.randint(0, 6))))
        edges = [0, *cuts, count]
        bins += [
            InsertBin(partition, f"{partition}#{i}", a, b)
            for i, (a, b) in enumerate(itertools.pairwise(edges))
        ]
    return bins


def _insert(spark: SparkSession, tmp_path: Path, seed: int) -> tuple[DataFrame, list[InsertBin], Assign]:
    """Random rows, random bins over them, and the bin assignment of an insert sorted by score."""
    location = str(tmp_path / "t")
    create(location, spark)
    table = LakeTable.open(location)
    sort_by = writer.sort_expressions(table.config.schema, ["score"])
    write = writer._Write(spark, table, writer.WriteMode.INSERT, sort_by)
    rows = _rows(spark, seed)
    counts = {r[PARTITION]: int(r["count"]) for r in rows.groupBy(PARTITION).count().collect()}
    return rows, _bins(counts, seed), write._assign_bins


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rows_go_to_the_bin_of_their_rank(spark: SparkSession, tmp_path: Path, seed: int) -> None:
    rows, bins, assign = _insert(spark, tmp_path, seed)

    assigned = {r["id"]: r[FILE_GROUP] for r in assign(rows, bins).select("id", FILE_GROUP).collect()}

    rank = (
        F.row_number().over(Window.partitionBy(PARTITION).orderBy(F.col("score").asc_nulls_first(), "id")) - 1
    )
    ranked = rows.withColumn("rank", rank).select("id", PARTITION, "rank").collect()
    expected = {
        r["id"]: next(
            b.file_group for b in bins if b.partition == r[PARTITION] and b.start <= r["rank"] < b.end
        )
        for r in ranked
    }
    assert assigned == expected


@pytest.mark.parametrize("seed", [4, 5])
def test_sampled_boundaries_give_every_row_one_bin_in_rank_order(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Above `BOUNDARY_SAMPLE_ROWS` new rows the boundaries come from a sample: bins then hold about
    their planned rows, but every row still has exactly one bin, and a partition's bins still cut
    its rows in rank order (bin after bin, none overlapping)."""
    monkeypatch.setattr(writer, "BOUNDARY_SAMPLE_ROWS", 60)
    rows, bins, assign = _insert(spark, tmp_path, seed)

    assigned = assign(rows, bins).select("id", FILE_GROUP).collect()

    assert sorted(r["id"] for r in assigned) == sorted(r["id"] for r in rows.select("id").collect())
    group_of = {r["id"]: r[FILE_GROUP] for r in assigned}
    position = {b.file_group: (b.partition, b.start) for b in bins}
    rank = F.row_number().over(Window.partitionBy(PARTITION).orderBy(F.col("score").asc_nulls_first(), "id"))
    ranked = rows.withColumn("rank", rank).orderBy(PARTITION, "rank").collect()
    for partition, members in itertools.groupby(ranked, key=lambda r: r[PARTITION]):
        starts = [position[group_of[r["id"]]] for r in members]
        assert all(p == partition for p, _ in starts)
        assert starts == sorted(starts), f"bins of {partition} are not in rank order"
