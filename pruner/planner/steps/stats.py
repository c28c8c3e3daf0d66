"""Steps 2 and 6: partition stats and column stats (RFC-27). Both are min / max / null / NaN
counts evaluated against the predicate's domains (`stats_eval.might_match`); partition stats have
one row per (column, partition), column stats one per (column, file). A key (partition, or
partition + file) is ruled out when some column's stats prove no value of it can match."""

from __future__ import annotations

from typing import ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from pruner.index.definitions import IndexType
from pruner.metadata.files_index import DataFile
from pruner.planner.stats_eval import might_match
from pruner.planner.steps.base import Kept, Skipped, StepContext, StepOutcome


class _StatsStep:
    """A min / max index whose rows are identified by `key` (partition, or partition + file)."""

    index_type: ClassVar[IndexType]
    key: ClassVar[tuple[str, ...]]

    def run(self, context: StepContext, files: list[DataFile]) -> StepOutcome:
        definition = context.ready(self.index_type)
        if isinstance(definition, Skipped):
            return definition
        columns = [c for c in context.predicate.columns if c in definition.columns]
        if not columns:
            return Skipped(f"no predicate on a column with {self.index_type}")
        rows = context.rows_for(definition, files)
        excluded = self._excluded(context, rows, columns)
        return Kept([f for f in files if tuple(getattr(f, k) for k in self.key) not in excluded])

    def _excluded(self, context: StepContext, rows: pa.Table, columns: list[str]) -> set[tuple[str, ...]]:
        """Keys that some column's stats prove cannot match."""
        excluded: set[tuple[str, ...]] = set()
        for column in columns:
            subset = rows.filter(pc.equal(rows["column"], column))
            if subset.num_rows == 0:
                continue
            keep = might_match(context.predicate.domain(column), context.schema.column(column).type, subset)
            pruned = subset.filter(pa.array(~keep)).select(list(self.key)).to_pylist()
            excluded.update(tuple(r[k] for k in self.key) for r in pruned)
        return excluded


class PartitionStats(_StatsStep):
    name: ClassVar[str] = "partition_stats"
    index: ClassVar[str | None] = "partition_stats"
    index_type = IndexType.PARTITION_STATS
    key = ("partition",)


class ColumnStats(_StatsStep):
    name: ClassVar[str] = "column_stats"
    index: ClassVar[str | None] = "column_stats"
    index_type = IndexType.COLUMN_STATS
    key = ("partition", "file_name")
