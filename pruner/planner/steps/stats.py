"""Steps 2 and 6: partition stats and column stats (RFC-27). Both are min / max / null / NaN
counts evaluated against the predicate's domains (`stats_eval.might_match`); partition stats have
one row per (column, partition), column stats one per (column, file). A key (partition, or
partition + file) is ruled out when some column's stats prove no value of it can match; the rows
of every partition in play are read and evaluated once, and files are then decided by their key."""

from __future__ import annotations

from typing import ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from pruner.index.definitions import IndexType
from pruner.planner.stats_eval import might_match
from pruner.planner.steps.base import InPlay, Keeping, Skipped, StepContext, StepOutcome, Verdict


class _StatsStep:
    """A min / max index whose rows are identified by `key` (partition, or partition + file)."""

    index_type: ClassVar[IndexType]
    key: ClassVar[tuple[str, ...]]

    def plan(self, context: StepContext, in_play: InPlay) -> StepOutcome:
        definition = context.ready(self.index_type)
        if isinstance(definition, Skipped):
            return definition
        columns = [c for c in context.predicate.columns if c in definition.columns]
        if not columns:
            return Skipped(f"no predicate on a column with {self.index_type}")
        excluded = self._excluded(context, context.rows_for(definition, in_play), columns)
        key = self.key
        return Verdict(
            Keeping(lambda f: tuple(getattr(f, k) for k in key) not in excluded),
            self._narrowed(in_play, excluded),
        )

    def _narrowed(self, in_play: InPlay, excluded: set[tuple[str, ...]]) -> InPlay | None:
        """What is in play after the step, as far as its keys tell (None: unchanged)."""
        return None

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

    def _narrowed(self, in_play: InPlay, excluded: set[tuple[str, ...]]) -> InPlay | None:
        return in_play.within(in_play.partitions - {k[0] for k in excluded})


class ColumnStats(_StatsStep):
    name: ClassVar[str] = "column_stats"
    index: ClassVar[str | None] = "column_stats"
    index_type = IndexType.COLUMN_STATS
    key = ("partition", "file_name")
