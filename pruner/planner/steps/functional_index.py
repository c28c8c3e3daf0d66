"""Step 5: functional indexes (RFC-63). Each functional index is a hidden virtual column named
after the index: a domain on that column (the SQL translator also maps the indexed expression to
it) is evaluated against the index's rows, and so is a range on the source column projected onto
the function's values — when the function is monotonic, and only then. A file without rows in the
index is kept."""

from __future__ import annotations

from typing import ClassVar

import pyarrow.compute as pc

from pruner.functions import Order
from pruner.index.definitions import IndexState
from pruner.index.functional import VirtualColumn, project
from pruner.metadata.files_index import DataFile
from pruner.planner.stats_eval import might_match
from pruner.planner.steps.base import Kept, Skipped, StepContext, StepOutcome
from pruner.predicate.domain import Domain


class FunctionalIndex:
    name: ClassVar[str] = "functional_index"
    index: ClassVar[str | None] = "functional_index"

    def run(self, context: StepContext, files: list[DataFile]) -> StepOutcome:
        virtual = context.table.virtual_columns
        if not virtual:
            return Skipped("no functional index")
        survivors, used, reasons = files, 0, []
        for column in virtual:
            domain = _domain_on(context, column)
            if domain is None:
                continue
            if column.definition.state != IndexState.READY:
                reasons.append(f"index {column.name} is still building")
                continue
            used += 1
            rows = context.rows_for(column.definition, survivors)
            rows = rows.filter(pc.equal(rows["column"], column.name))
            keep = might_match(domain, column.type, rows)
            keys = list(zip(rows["partition"].to_pylist(), rows["file_name"].to_pylist(), strict=True))
            indexed = set(keys)
            kept = {k for k, ok in zip(keys, keep, strict=True) if ok}
            survivors = [
                f
                for f in survivors
                if (f.partition, f.file_name) not in indexed or (f.partition, f.file_name) in kept
            ]
        if not used:
            return Skipped(
                "; ".join(reasons)
                or "no predicate on a functional index, its expression or a monotonic source"
            )
        return Kept(survivors)


def _domain_on(context: StepContext, column: VirtualColumn) -> Domain | None:
    """The predicate's domain on the virtual column, narrowed by a projected source-column range."""
    predicate = context.predicate
    domain = predicate.domain(column.name) if column.name in predicate.columns else None
    source = column.function.column
    if source in predicate.columns and column.function.order == Order.MONOTONIC:
        projected = project(column.function, predicate.domain(source))
        domain = projected if domain is None else domain.intersect(projected)
    return domain
