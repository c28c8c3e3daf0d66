"""Step 1: partition values. A file whose partition path holds, for a column of the predicate, a
value outside that column's domain cannot match. A path is judged only on the columns it carries:
after partition evolution a file's path may lack a partition column (its value is unknown there, so
the file is kept) or carry an earlier one."""

from __future__ import annotations

from typing import ClassVar

from pruner.format.keys import parse_partition_path
from pruner.format.path_columns import typed_value
from pruner.metadata.files_index import DataFile
from pruner.planner.steps.base import Kept, Skipped, StepContext, StepOutcome


class PartitionValues:
    name: ClassVar[str] = "partition_values"
    index: ClassVar[str | None] = None

    def run(self, context: StepContext, files: list[DataFile]) -> StepOutcome:
        predicate = context.predicate
        columns = [c for c in context.table.config.all_partition_fields if c in predicate.columns]
        if not columns:
            return Skipped("no predicate on a partition column")
        verdicts: dict[str, bool] = {}
        for partition in {f.partition for f in files}:
            raw = parse_partition_path(partition)
            verdicts[partition] = all(
                predicate.domain(c).contains_value(typed_value(raw[c], context.schema.column(c).type))
                for c in columns
                if c in raw
            )
        return Kept([f for f in files if verdicts[f.partition]])
