"""Step 4: secondary indexes (RFC-77). EQUAL / IN (without NULL: NULLs are not indexed) on a column
with a ready secondary index: the values' entries give record keys, the record index gives their
file groups, and only those are kept; all values are looked up as one Arrow array, and a lookup of
many values that the files in play are expected to hold anyway is skipped before any index data is
read (`PruneLimits.lookup_skipped`). Ranges (and LIKE 'prefix%') scan the index's sorted buckets
with a filter, but only when footer statistics say the scan is selective
(`PruneLimits.range_max_index_share`); otherwise the step says so and leaves the range to column
stats, which run later and are cheaper then."""

from __future__ import annotations

import functools
import operator
from typing import ClassVar

import pyarrow as pa
import pyarrow.dataset as ds

from pruner.index.definitions import IndexDefinition, IndexState, IndexType
from pruner.planner.steps.base import AllOf, InPlay, Skipped, StepContext, StepOutcome, Verdict
from pruner.planner.steps.record_index import kept_file_groups
from pruner.predicate.domain import Domain


class SecondaryIndex:
    name: ClassVar[str] = "secondary_index"
    index: ClassVar[str | None] = "secondary_index"

    def plan(self, context: StepContext, in_play: InPlay) -> StepOutcome:
        definitions = [d for d in context.table.definitions if d.index_type == IndexType.SECONDARY_INDEX]
        if not definitions:
            return Skipped("no secondary index")
        usable = [d for d in definitions if d.columns[0] in context.predicate.columns]
        if not usable:
            return Skipped("no predicate on a column with a secondary index")
        reasons: list[str] = []
        verdicts: list[Verdict] = []
        for definition in usable:
            outcome = self._one(context, definition, in_play)
            if isinstance(outcome, str):
                reasons.append(outcome)
                continue
            verdicts.append(outcome)
            in_play = outcome.in_play or in_play
        if not verdicts:
            return Skipped("; ".join(reasons))
        return Verdict(AllOf(tuple(v.filter for v in verdicts)), in_play, tuple(reasons))

    def _one(self, context: StepContext, definition: IndexDefinition, in_play: InPlay) -> Verdict | str:
        """Keep the files holding a row the index lists for the column's domain, or why this index
        cannot narrow them."""
        column = definition.columns[0]
        domain = context.predicate.domain(column)
        if definition.state != IndexState.READY:
            return f"index {definition.name} is still building"
        if not definition.covers(context.snapshot.instant):
            return (
                f"index {definition.name} is complete from instant {definition.complete_up_to}; "
                f"snapshot {context.snapshot.instant} is older"
            )
        if domain.is_null_allowed():
            return f"{column}: NULLs are not indexed by {definition.name}"
        if domain.values.is_all():
            return f"{column}: only IS NOT NULL"
        if domain.is_nan_allowed():
            return f"{column}: NaN matches, and {definition.name} is looked up by value"
        limits = context.limits
        count = domain.values.range_count()
        if count > limits.max_key_lookups:
            return f"{column}: more than {limits.max_key_lookups} values or ranges"
        view = context.snapshot.index_partition(context.table.spec(definition))
        if domain.values.is_discrete():
            reason = limits.lookup_skipped(f"{column} ({definition.name})", count, in_play.count)
            if reason is not None:
                return reason
            pairs = view.lookup(context.keys(column))
        else:  # ranges, LIKE 'prefix%': a scan of the sorted buckets, if selective
            expression = ranges_expression(domain, context.schema.column(column).type.to_arrow())
            fraction = view.estimate_fraction(expression)
            if fraction > limits.range_max_index_share:
                return (
                    f"{column}: the range admits {fraction:.0%} of {definition.name}'s row groups "
                    f"(> {limits.range_max_index_share:.0%}), not selective; left to column stats"
                )
            pairs = view.scan(expression)
        context.check_deadline()
        return kept_file_groups(in_play, context.snapshot.record_index().lookup(pairs["key"]))


def ranges_expression(domain: Domain, arrow_type: pa.DataType) -> ds.Expression:
    """The domain's ranges as a dataset filter on `secondary_key` (NULL not included)."""
    key = ds.field("secondary_key")
    alternatives = []
    for item in domain.values.ranges:
        parts = []
        if item.low is not None:
            low = pa.scalar(item.low, arrow_type)
            parts.append(key >= low if item.low_inclusive else key > low)
        if item.high is not None:
            high = pa.scalar(item.high, arrow_type)
            parts.append(key <= high if item.high_inclusive else key < high)
        alternatives.append(functools.reduce(operator.and_, parts) if parts else key.is_valid())
    return functools.reduce(operator.or_, alternatives)
