"""Step 5: functional indexes (RFC-63). Each functional index is a hidden virtual column named
after the index: a domain on that column (the SQL translator also maps the indexed expression to
it) is evaluated against the index's rows, and so is what the predicate's domains on the
expression's source columns imply: the expression's exact values when each of them is an `=` / `IN`
(any expression), or a range on its one source column projected onto its values when it never
decreases (or never increases) with it. A file without rows in the index is kept."""

from __future__ import annotations

from typing import ClassVar

import pyarrow.compute as pc

from pruner.index.definitions import FunctionalKind, IndexState, IndexType
from pruner.index.functional import VirtualColumn, virtual_domain
from pruner.planner.keys import discrete_keys
from pruner.planner.stats_eval import might_match
from pruner.planner.steps.base import (
    AllOf,
    FileFilter,
    InPlay,
    Keeping,
    OfIndex,
    Skipped,
    StepContext,
    StepOutcome,
    Verdict,
)
from pruner.planner.steps.bloom_filters import Probing, column_probe, float_keys_unsafe
from pruner.predicate.domain import Domain


class FunctionalIndex:
    name: ClassVar[str] = "functional_index"
    index: ClassVar[str | None] = "functional_index"

    def plan(self, context: StepContext, in_play: InPlay) -> StepOutcome:
        virtual = [
            v for v in context.table.virtual_columns if v.definition.index_type == IndexType.FUNCTIONAL
        ]
        if not virtual:
            return Skipped("no functional index")
        filters: list[FileFilter] = []
        reasons: dict[str, str] = {}
        for column in virtual:
            domain = virtual_domain(column, context.predicate)
            if domain is None:
                continue
            if column.definition.state != IndexState.READY:
                reasons[column.name] = f"index {column.name} is still building"
                continue
            if column.definition.kind == FunctionalKind.BLOOM_FILTERS:
                outcome = _bloom(context, in_play, column, domain)
                if isinstance(outcome, str):
                    reasons[column.name] = outcome
                else:
                    filters.append(OfIndex(column.name, outcome))
                continue
            rows = context.rows_for(column.definition, in_play)
            rows = rows.filter(pc.equal(rows["column"], column.name))
            keep = might_match(domain, column.type, rows)
            keys = list(zip(rows["partition"].to_pylist(), rows["file_name"].to_pylist(), strict=True))
            kept = {k for k, ok in zip(keys, keep, strict=True) if ok}
            filters.append(OfIndex(column.name, _ruling_out(set(keys) - kept)))
        if not filters:
            return Skipped(
                "; ".join(reasons.values())
                or "no predicate on a functional index, its expression or a monotonic source",
                reasons,
            )
        return Verdict(AllOf(tuple(filters)), by_index=reasons)


def _bloom(context: StepContext, in_play: InPlay, column: VirtualColumn, domain: Domain) -> FileFilter | str:
    """The probe of a bloom-backed index with the domain's values, or why it cannot run: only an
    EQUAL / IN without NULL or NaN can be probed (a range projected from a source column cannot),
    and only when the lookup can pay (`PruneLimits.lookup_skipped`)."""
    values = domain.values
    if not values.is_discrete() or domain.is_null_allowed() or domain.is_nan_allowed():
        return f"index {column.name} holds bloom filters: it answers EQUAL / IN (without NULL or NaN) only"
    if float_keys_unsafe(column.type, domain):
        return f"index {column.name} holds bloom filters of float values, which a 64-bit literal may miss"
    reason = context.limits.lookup_skipped(column.name, values.range_count(), in_play.count)
    if reason is not None:
        return reason
    keys = discrete_keys(values, column.type)
    return Probing(context, (column_probe(column.name, keys, context.rows_for(column.definition, in_play)),))


def _ruling_out(keys: set[tuple[str, str]]) -> Keeping:
    """Keep every file but those whose (partition, file name) is among `keys`."""
    return Keeping(lambda f: (f.partition, f.file_name) not in keys)
