"""A TupleDomain as a pyarrow compute expression, for filtering rows that were read from a data
file (the Thrift `GetRows` path). The expression keeps exactly the rows `TupleDomain.matches`
accepts — NULL only where the domain allows it, NaN only under a domain whose values are all — so
the row filter and the pruning algebra can never disagree. Values are converted to Arrow scalars
of the column's Arrow type from `pruner.types`, the one type mapping."""

from __future__ import annotations

import functools
import operator

import pyarrow as pa
import pyarrow.compute as pc

from pruner.predicate.domain import Domain
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import Value
from pruner.types import TableSchema

_FALSE = pc.scalar(False)


def row_filter(predicate: TupleDomain, schema: TableSchema) -> pc.Expression | None:
    """The expression matching exactly the rows of `predicate` (None: every row matches)."""
    domains = predicate.domains
    if domains is None:
        return _FALSE
    parts = []
    for column, domain in domains.items():
        if not domain.is_all():
            arrow_type = schema.column(column).type.to_arrow()
            parts.append(domain_filter(pc.field(column), domain, arrow_type))
    return functools.reduce(operator.and_, parts) if parts else None


def domain_filter(field: pc.Expression, domain: Domain, arrow_type: pa.DataType) -> pc.Expression:
    """Rows whose value lies in `domain` (a column of `arrow_type`)."""
    values = domain.values
    if values.is_all():
        matched = field.is_valid()
    elif values.is_none():
        matched = _FALSE
    elif values.is_discrete():
        matched = field.isin(pa.array(list(values.discrete_values()), type=arrow_type))
    else:
        matched = functools.reduce(operator.or_, (_range_filter(field, r, arrow_type) for r in values.ranges))
    if domain.nan_allowed:
        matched = matched | pc.is_nan(field)  # Kleene OR: NULL stays unmatched, as a NULL value is
    return matched | field.is_null() if domain.null_allowed else matched


def _range_filter(field: pc.Expression, r: Range, arrow_type: pa.DataType) -> pc.Expression:
    parts = []
    if r.low is not None:
        low = _scalar(r.low, arrow_type)
        parts.append(field >= low if r.low_inclusive else field > low)
    if r.high is not None:
        high = _scalar(r.high, arrow_type)
        parts.append(field <= high if r.high_inclusive else field < high)
    # Both ends unbounded means the set is all, which `domain_filter` handles before ranges.
    return functools.reduce(operator.and_, parts) if parts else field.is_valid()


def _scalar(value: Value, arrow_type: pa.DataType) -> pc.Expression:
    return pc.scalar(pa.scalar(value, type=arrow_type))
