"""Step 1: partition values. A file whose partition path holds, for a column of the predicate, a
value outside that column's domain cannot match. A path is judged only on the columns it carries:
after partition evolution a file's path may lack a partition column (its value is unknown there, so
the file is kept) or carry an earlier one."""

from __future__ import annotations

from typing import ClassVar

from pruner.format.keys import parse_partition_path
from pruner.format.path_columns import typed_value
from pruner.planner.steps.base import InPlay, Keeping, Skipped, StepContext, StepOutcome, Verdict


class PartitionValues:
    name: ClassVar[str] = "partition_values"
    index: ClassVar[str | None] = None

    def plan(self, context: StepContext, in_play: InPlay) -> StepOutcome:
        predicate = context.predicate
        columns = [c for c in context.table.config.all_partition_fields if c in predicate.columns]
        if not columns:
            return Skipped("no predicate on a partition column")
        kept = set()
        for partition in in_play.partitions:
            raw = parse_partition_path(partition)
            if all(
                predicate.domain(c).contains_value(typed_value(raw[c], context.schema.column(c).type))
                for c in columns
                if c in raw
            ):
                kept.add(partition)
        return Verdict(Keeping(lambda f: f.partition in kept), in_play.within(kept))
