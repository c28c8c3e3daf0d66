"""The invariant over generated tables: hypothesis chooses the rows (NULL, NaN, infinities, skewed
or clustered values), the file size, updates that may move partitions and deletes; Spark writes the
table and maintains every index; then random predicates are planned and checked against the oracle.
Each example writes a table, so there are few of them, in the slow suite."""

from __future__ import annotations

import math
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from builder import LakepruneTable
from pruner.planner.prune import prune
from pruner.predicate.tuple_domain import TupleDomain
from pruner.table.table import LakeTable
from tests.pruner.planner.conftest import Oracle
from tests.pruner.planner.test_invariant import domains

SCHEMA = "id bigint, part string, v double, w bigint, s string"
COLUMNS = ["id", "part", "v", "w", "s"]
doubles = st.one_of(st.none(), st.just(math.nan), st.just(math.inf), st.floats(-100, 100, allow_nan=False))


@st.composite
def tables(draw: st.DrawFn) -> dict[str, object]:
    n = draw(st.integers(20, 120))
    skewed = draw(st.booleans())
    rows = [
        (
            k,
            draw(st.sampled_from(["a", "b", "c"])),
            draw(doubles),
            0 if skewed and draw(st.integers(0, 4)) else k * draw(st.integers(1, 3)),
            draw(st.one_of(st.none(), st.text("xyz", max_size=3))),
        )
        for k in range(n)
    ]
    updated = draw(st.lists(st.integers(0, n - 1), max_size=15, unique=True))
    updates = [(k, draw(st.sampled_from(["a", "b", "d"])), draw(doubles), k, "u") for k in updated]
    deleted = draw(st.lists(st.integers(0, n + 5), max_size=10, unique=True))
    return {
        "rows": rows,
        "updates": updates,
        "deleted": deleted,
        "target": draw(st.sampled_from([400, 900, 4000])),
    }


@pytest.mark.slow
def test_invariant_holds_on_generated_tables(spark: SparkSession) -> None:
    @settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
    @given(tables(), st.data())
    def check(spec: dict[str, object], data: st.DataObject) -> None:
        workdir = Path(tempfile.mkdtemp(prefix="lakeprune-gen-"))
        try:
            location = str(workdir / "t")
            table = LakepruneTable.create(
                location,
                SCHEMA,
                record_key="id",
                partition_by=["part"],
                spark=spark,
                properties={
                    "write.target_file_size_bytes": spec["target"],
                    "write.small_file_limit_bytes": 100,
                },
            )
            table.sql("CREATE INDEX stats ON t USING column_stats")
            table.sql("CREATE INDEX pstats ON t USING partition_stats")
            table.sql("CREATE INDEX bf ON t USING bloom_filters (w, s)")
            table.insert(spark.createDataFrame(spec["rows"], SCHEMA))
            if spec["updates"]:
                table.upsert(spark.createDataFrame(spec["updates"], SCHEMA))
            if spec["deleted"]:
                table.delete(spark.createDataFrame([(k,) for k in spec["deleted"]], "id bigint"))
            snapshot = LakeTable.open(location).snapshot()
            oracle = Oracle(snapshot)
            pools = {
                c: sorted(
                    {r[c] for rows in oracle.rows.values() for r in rows if r[c] is not None and r[c] == r[c]}
                )
                or [0]
                for c in COLUMNS
            }
            for _ in range(25):
                columns = data.draw(st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=2, unique=True))
                predicate = TupleDomain.with_domains({c: data.draw(domains(pools[c])) for c in columns})
                selected = {
                    s.path for s in prune(snapshot.table, predicate, snapshot=snapshot.instant).splits
                }
                assert oracle.files_matching(predicate) <= selected, predicate
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    check()
