"""`analyze` (`lakeprune table analyze`): the column stats rows of files indexed without what
optimizers need (distinct-value sketches, data sizes) are recomputed as a new instant, after which
the table's statistics have them; a table with them all is left alone, and one without a ready
column stats index is refused."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from builder.index_build import analyze
from builder.instants import run_instant
from builder.lock import table_lock
from pruner.errors import InvalidInputError
from pruner.format.timeline import Action
from pruner.index.kinds import partition_of
from pruner.index.stats import OPTIMIZER_FIELDS
from pruner.metadata.index_partition import write_logs
from pruner.metadata.spec import OP_FIELD, OP_UPSERT
from pruner.table.statistics import table_statistics
from pruner.table.table import LakeTable
from tests.support import CITIES, create, make_row, to_df


def _forget_optimizer_fields(location: str, files: int) -> None:
    """Rewrite the column stats rows of `files` live files without the optimizer fields, as a
    table indexed by a lakeprune before they existed reads (`with_missing_fields`: nulls)."""
    table = LakeTable.open(location)
    definition = table.definition("stats")
    spec = table.spec(definition)
    forgotten = {f.file_name for f in table.snapshot().files()[:files]}
    rows = table.snapshot().index_partition(spec).read_all()
    rows = rows.filter(pa.array([name in forgotten for name in rows["file_name"].to_pylist()]))
    for field in OPTIMIZER_FIELDS:
        rows = rows.set_column(
            rows.schema.get_field_index(field.name), field, pa.nulls(len(rows), field.type)
        )
    rows = rows.append_column(
        pa.field(OP_FIELD, pa.int8(), nullable=False), pa.array([OP_UPSERT] * len(rows), pa.int8())
    )
    with table_lock(table.storage, "test"), run_instant(table.storage, Action.COMMIT, {}) as pending:
        pending.inflight([], [partition_of(definition)])
        written = write_logs(table.storage, spec, pending.timestamp, rows)
        pending.complete({"operation": "index_build", "index": "stats", "index_files": written, "stats": {}})


def _distinct_ids(location: str) -> float | None:
    snapshot = LakeTable.open(location).snapshot()
    stats = table_statistics(snapshot, snapshot.files())
    return next(c for c in stats.columns if c.column == "id").distinct_values_count


def test_analyze_recomputes_the_stats_of_files_without_sketches(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "t")
    table = create(location, spark)
    table.insert(to_df(spark, [make_row(k, CITIES[k % 3]) for k in range(60)]))
    with pytest.raises(InvalidInputError, match="create one first"):
        analyze(location, spark)
    table.sql("CREATE INDEX stats ON t USING column_stats (id, city, score)")
    assert _distinct_ids(location) is not None  # written by this lakeprune: nothing to analyze
    assert analyze(location, spark) == (0, None)

    _forget_optimizer_fields(location, 2)
    assert _distinct_ids(location) is None
    files, instant = analyze(location, spark)
    assert files == 2 and instant is not None
    assert LakeTable.open(location).definition("stats").complete_up_to == instant
    distinct = _distinct_ids(location)
    assert distinct is not None and round(distinct) == 60
    assert analyze(location, spark) == (0, None)
