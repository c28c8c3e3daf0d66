"""Step 4: secondary indexes (RFC-77). EQUAL / IN (without NULL: NULLs are not indexed) on a column
with a ready secondary index: the values' entries give record keys, the record index gives their
file groups, and only those are kept; all values are looked up as one Arrow array, and a lookup of
many values that the files in play are expected to hold anyway is skipped before any index data is
read (`PruneLimits.lookup_skipped`). Ranges (and LIKE 'prefix%') scan the index's sorted buckets
with a filter, but only when footer statistics say the scan is selective
(`PruneLimits.range_max_index_share`); otherwise the step says so and leaves the range to column
stats, which run later and are cheaper then.

A composite index on (a, b, ...) answers EQUAL / IN on all its columns (a lookup of each
combination of their values) and on a leading prefix (a, or a and b, ...): a scan of the keys
starting with each combination's encoding (`pruner.index.secondary.prefix_range`), under the same
footer-statistics guard as a range, for at most `MAX_PREFIX_SCANS` combinations.

An index over an expression answers the domain on its virtual column (the SQL translator maps the
expression to it), narrowed by what its source columns' domains imply (`virtual_domain`: `name IN
('Bob', 'BOB')` is `lower(name) = 'bob'`), as a one-column index does."""

from __future__ import annotations

import functools
import math
import operator
from typing import ClassVar

import pyarrow as pa
import pyarrow.dataset as ds

from pruner.index import secondary
from pruner.index.definitions import IndexDefinition, IndexState, IndexType
from pruner.index.functional import virtual_domain
from pruner.metadata.index_partition import IndexPartitionView
from pruner.planner.keys import combinations, discrete_keys
from pruner.planner.limits import PruneLimits
from pruner.planner.steps.base import AllOf, InPlay, OfIndex, Skipped, StepContext, StepOutcome, Verdict
from pruner.planner.steps.record_index import kept_file_groups
from pruner.predicate.domain import Domain

# A leading-prefix lookup scans with one range per combination of the prefix's values.
MAX_PREFIX_SCANS = 64


class SecondaryIndex:
    name: ClassVar[str] = "secondary_index"
    index: ClassVar[str | None] = "secondary_index"

    def plan(self, context: StepContext, in_play: InPlay) -> StepOutcome:
        definitions = [d for d in context.table.definitions if d.index_type == IndexType.SECONDARY_INDEX]
        if not definitions:
            return Skipped("no secondary index")
        domains = {d.name: domain for d in definitions if (domain := _domain(context, d)) is not None}
        usable = [d for d in definitions if d.name in domains]
        if not usable:
            return Skipped("no predicate on a column or an expression with a secondary index")
        reasons: dict[str, str] = {}
        filters: list[OfIndex] = []
        for definition in usable:
            outcome = self._one(context, definition, domains[definition.name], in_play)
            if isinstance(outcome, str):
                reasons[definition.name] = outcome
                continue
            filters.append(OfIndex(definition.name, outcome.filter))
            in_play = outcome.in_play or in_play
        if not filters:
            return Skipped("; ".join(reasons.values()), reasons)
        return Verdict(AllOf(tuple(filters)), in_play, tuple(reasons.values()), reasons)

    def _one(
        self, context: StepContext, definition: IndexDefinition, domain: Domain, in_play: InPlay
    ) -> Verdict | str:
        """Keep the files holding a row the index lists for `domain` (on its column, or on its
        expression), or why this index cannot narrow them."""
        if definition.state != IndexState.READY:
            return f"index {definition.name} is still building"
        if not definition.covers(context.snapshot.instant):
            return (
                f"index {definition.name} is complete from instant {definition.complete_up_to}; "
                f"snapshot {context.snapshot.instant} is older"
            )
        if definition.expression is None and len(definition.columns) > 1:
            return self._composite(context, definition, in_play)
        column = definition.columns[0] if definition.expression is None else definition.name
        key_type = context.table.query_schema.column(column).type
        if domain.is_null_allowed():
            return f"{column}: NULLs are not indexed by {definition.name}"
        if domain.values.is_all():
            return f"{column}: only IS NOT NULL"
        limits = context.limits
        count = domain.values.range_count()
        if count > limits.max_key_lookups:
            return f"{column}: more than {limits.max_key_lookups} values or ranges"
        view = context.snapshot.index_partition(context.table.spec(definition))
        if domain.values.is_discrete():
            reason = limits.lookup_skipped(f"{column} ({definition.name})", count, in_play.count)
            if reason is not None:
                return reason
            pairs = view.lookup(discrete_keys(domain.values, key_type))
        else:  # ranges, LIKE 'prefix%': a scan of the sorted buckets, if selective
            expression = ranges_expression(domain, key_type.to_arrow())
            scanned = _scan_if_selective(view, expression, limits, f"{column}: the range", definition)
            if isinstance(scanned, str):
                return scanned
            pairs = scanned
        context.check_deadline()
        return kept_file_groups(in_play, context.snapshot.record_index().lookup(pairs["key"]))

    def _composite(self, context: StepContext, definition: IndexDefinition, in_play: InPlay) -> Verdict | str:
        """A composite index: a lookup when every column has an IN list (without NULL), a
        scan of key ranges when only its leading columns have."""
        predicate, limits = context.predicate, context.limits
        prefix: list[str] = []
        for column in definition.columns:
            domain = predicate.domain(column)
            if column not in predicate.columns or not domain.values.is_discrete():
                break
            if domain.is_null_allowed():
                break
            prefix.append(column)
        names = ", ".join(definition.columns)
        if not prefix:
            return f"({names}): no EQUAL / IN without NULL on its leading column {definition.columns[0]}"
        count = math.prod(predicate.domain(c).values.range_count() for c in prefix)
        label = f"({', '.join(prefix)}) of {definition.name}"
        if count > limits.max_key_lookups:
            return f"{label}: {count:,} combinations exceed the lookup limit {limits.max_key_lookups}"
        values = pa.table(dict(zip(prefix, combinations([context.keys(c) for c in prefix]), strict=True)))
        view = context.snapshot.index_partition(context.table.spec(definition))
        if values.num_rows == 0:  # no row of the columns can hold those values
            pairs = view.lookup(pa.array([], pa.string()))
        elif len(prefix) == len(definition.columns):
            reason = limits.lookup_skipped(label, count, in_play.count)
            if reason is not None:
                return reason
            pairs = view.lookup(secondary.secondary_keys(values, definition.columns))
        else:
            if count > MAX_PREFIX_SCANS:
                return f"{label}: {count:,} leading combinations exceed {MAX_PREFIX_SCANS} range scans"
            what = f"{label}: the leading columns"
            scanned = _scan_if_selective(view, _prefix_expression(values), limits, what, definition)
            if isinstance(scanned, str):
                return scanned
            pairs = scanned
        context.check_deadline()
        return kept_file_groups(in_play, context.snapshot.record_index().lookup(pairs["key"]))


def _domain(context: StepContext, definition: IndexDefinition) -> Domain | None:
    """What the predicate says of the index's key: the domain on its (first) column, or on its
    expression's virtual column narrowed by its source columns' domains; None: nothing."""
    if definition.expression is None:
        column = definition.columns[0]
        return context.predicate.domain(column) if column in context.predicate.columns else None
    virtual = next((v for v in context.table.virtual_columns if v.name == definition.name), None)
    return None if virtual is None else virtual_domain(virtual, context.predicate)


def _scan_if_selective(
    view: IndexPartitionView,
    expression: ds.Expression,
    limits: PruneLimits,
    what: str,
    definition: IndexDefinition,
) -> pa.Table | str:
    """The index rows `expression` admits, or why not: footer statistics say the scan would read
    more than `limits.range_max_index_share` of the index's row groups."""
    fraction = view.estimate_fraction(expression)
    if fraction > limits.range_max_index_share:
        return (
            f"{what} admits {fraction:.0%} of {definition.name}'s row groups "
            f"(> {limits.range_max_index_share:.0%}), not selective; left to column stats"
        )
    return view.scan(expression)


def _prefix_expression(values: pa.Table) -> ds.Expression:
    """The keys continuing each row's encoding (`secondary.prefix_range`), as a dataset filter."""
    key = ds.field("secondary_key")
    lows, highs = secondary.prefix_range(values)
    ranges = [(key >= low) & (key < high) for low, high in zip(lows, highs, strict=True)]
    return functools.reduce(operator.or_, ranges)


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
    if not alternatives:  # an empty domain (`id_key IN (0, 100) AND id = 0`: id + 7 is 7): no key
        return ds.scalar(False)
    return functools.reduce(operator.or_, alternatives)
