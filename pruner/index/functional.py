"""Functional index partitions (RFC-63), `func_index_<name>`: rows of an index expression's values
per data file (`pruner.functions`: registry calls, arithmetic, casts ... over one or more columns),
computed with its Arrow implementation both when a writer indexes the file it wrote and when the
sidecar computes virtual column values.

- `column_stats` kind: one column stats row per file (`stats.py` schema; `column` = index name),
  so the planner evaluates a domain on f(col) exactly as on a real column.
- `value_list` kind: one row per distinct f(col) value per file (min = max = the value; NULL as a
  row with a null count), keyed by (index name, partition, file, value text): value -> files for
  low-cardinality expressions. A file is pruned when none of its values can match.
- `bloom_filters` kind: one bloom filter of the expression's values per file (`bloom.py`, the
  definition's `fpp`): equality and IN on high-cardinality expressions.

Both hash on the partition path, like the other per-file indexes."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pruner.functions import Expression, Monotonicity, parse_expression
from pruner.index import bloom
from pruner.index.definitions import FunctionalKind, IndexDefinition, IndexType
from pruner.index.stats import FILE_STATS_SCHEMA, family, file_stats
from pruner.metadata.spec import IndexPartitionSpec
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import is_nan
from pruner.types import Column, ColumnType, TableSchema

VALUE_LIST_SCHEMA = pa.schema(
    [
        *list(FILE_STATS_SCHEMA)[:3],
        pa.field("value", pa.string(), nullable=False),
        *list(FILE_STATS_SCHEMA)[3:],
    ]
)
NULL_KEY = ""


def index_expression(definition: IndexDefinition, schema: TableSchema) -> Expression:
    assert definition.expression is not None
    return _parsed(definition.expression, schema)


@functools.lru_cache(maxsize=1024)
def _parsed(text: str, schema: TableSchema) -> Expression:
    """An index's expression, parsed once per (text, schema): every file a write indexes, every
    table opened and every step that asks what an index prunes by would otherwise run sqlglot
    again (trees are immutable, so they are shared)."""
    return parse_expression(text, {c.name: c.type for c in schema.columns})


def functional_spec(definition: IndexDefinition, partition: str, num_buckets: int) -> IndexPartitionSpec:
    if definition.kind == FunctionalKind.BLOOM_FILTERS:
        keys: tuple[str, ...] = ("column", "partition", "file_name")
        return IndexPartitionSpec(partition, keys, "partition", bloom.FILTER_ROWS_SCHEMA, num_buckets)
    if definition.kind == FunctionalKind.VALUE_LIST:
        keys = ("column", "partition", "file_name", "value")
        return IndexPartitionSpec(partition, keys, "partition", VALUE_LIST_SCHEMA, num_buckets)
    keys = ("column", "partition", "file_name")
    return IndexPartitionSpec(partition, keys, "partition", FILE_STATS_SCHEMA, num_buckets)


def functional_rows(
    rows: pa.Table, schema: TableSchema, definition: IndexDefinition, partition: str, file_name: str
) -> pa.Table:
    """The index rows of one data file."""
    expression = index_expression(definition, schema)
    values = expression.arrow(rows)
    if definition.kind == FunctionalKind.BLOOM_FILTERS:
        data = bloom.filter_for(values, definition.fpp)
        record = {"column": definition.name, "partition": partition, "file_name": file_name, "filter": data}
        return pa.Table.from_pylist([record], schema=bloom.FILTER_ROWS_SCHEMA)
    virtual = TableSchema((Column(definition.name, expression.type),))
    if definition.kind != FunctionalKind.VALUE_LIST:  # column stats, also when unset
        return file_stats(
            pa.table({definition.name: values}), virtual, (definition.name,), partition, file_name
        )
    fam = family(expression.type)
    records = []
    if values.null_count:
        records.append(
            {
                "value": NULL_KEY,
                "value_count": values.null_count,
                "null_count": values.null_count,
                "nan_count": 0,
            }
        )
    counted = pc.value_counts(values.drop_null())
    for item in counted.to_pylist():
        value = item["values"]
        records.append(
            {
                "value": "=" + str(value),
                "value_count": item["counts"],
                "null_count": 0,
                "nan_count": 0,
                f"min_{fam}": value,
                f"max_{fam}": value,
            }
        )
    for record in records:
        record.update({"column": definition.name, "partition": partition, "file_name": file_name})
    return pa.Table.from_pylist(records, schema=VALUE_LIST_SCHEMA)


@dataclass(frozen=True)
class VirtualColumn:
    """A functional index seen as a hidden column named after the index."""

    name: str
    expression: Expression
    definition: IndexDefinition

    @property
    def type(self) -> ColumnType:
        return self.expression.type


# The index types whose definitions over an expression have a virtual column named after them.
VIRTUAL_TYPES = (IndexType.FUNCTIONAL, IndexType.SECONDARY_INDEX)


def virtual_columns(schema: TableSchema, definitions: Iterable[IndexDefinition]) -> list[VirtualColumn]:
    """The hidden virtual columns of a table's indexes over expressions (functional indexes and
    secondary indexes over an expression), in name order. An index that cannot be used
    (`IndexDefinition.check_usable`: stored under a name the naming rule refuses) has none, so that
    reading the table's metadata or a predicate does not fail on it."""
    out = []
    for d in sorted(definitions, key=lambda d: d.name):
        if d.index_type in VIRTUAL_TYPES and d.expression is not None and d.usable:
            out.append(VirtualColumn(d.name, index_expression(d, schema), d))
    return out


def expression_prunes_by(definition: IndexDefinition, schema: TableSchema) -> tuple[str, ...]:
    """What an index over an expression prunes by: its virtual column, and the column of an
    expression over one column (an `=` / IN on it maps to the expression's values, and a range too
    where the expression is ordered)."""
    source = index_expression(definition, schema).source
    return (definition.name, *((source,) if source is not None else ()))


def virtual_domain(column: VirtualColumn, predicate: TupleDomain) -> Domain | None:
    """The predicate's domain on the virtual column, narrowed by what its source columns' domains
    imply (`source_domain`); None when the predicate says nothing about either."""
    domain = predicate.domain(column.name) if column.name in predicate.columns else None
    implied = source_domain(column.expression, predicate)
    if implied is not None:
        domain = implied if domain is None else domain.intersect(implied)
    return domain


def with_virtual(schema: TableSchema, virtual: Iterable[VirtualColumn]) -> TableSchema:
    extra = tuple(Column(v.name, v.type) for v in virtual if not schema.has(v.name))
    return TableSchema(schema.columns + extra)


# Source-value combinations an expression is computed over to project discrete domains: an IN list
# of a dynamic filter can hold thousands of values, and the image is computed per prune.
IMAGE_LIMIT = 4096


def source_domain(expression: Expression, predicate: TupleDomain) -> Domain | None:
    """A domain on the expression's values implied by the predicate's domains on its source columns,
    or None when they imply nothing: the exact image of the values when every column it reads is
    constrained to a discrete set (`image`), else a range on its one column projected through its
    order (`project`)."""
    domains = {c: predicate.domain(c) for c in expression.columns if c in predicate.columns}
    if len(domains) == len(expression.columns):
        imaged = image(expression, domains)
        if imaged is not None:
            return imaged
    source = expression.source
    if expression.projects and source is not None and source in domains:
        return project(expression, domains[source])
    return None


def image(expression: Expression, domains: Mapping[str, Domain]) -> Domain | None:
    """The expression's values over every combination of its columns' values when each column's
    domain is a discrete set (`=` / `IN`, with or without NULL; NULL is an input like any other, so
    `coalesce(x, 0)` maps it to 0), at most `IMAGE_LIMIT` combinations: exact for any expression,
    monotonic or not. None when a domain is not discrete or there are too many combinations."""
    inputs: dict[str, list[Any]] = {}
    for name in sorted(expression.columns):
        domain = domains[name]
        if domain.is_nan_allowed() or not (domain.values.is_none() or domain.values.is_discrete()):
            return None
        values: list[Any] = list(domain.values.discrete_values()) if not domain.values.is_none() else []
        inputs[name] = [*values, None] if domain.is_null_allowed() else values
    if math.prod(len(v) for v in inputs.values()) > IMAGE_LIMIT:
        return None
    rows = list(itertools.product(*inputs.values()))
    types = expression.column_types()
    arrays = {
        name: pa.array([row[i] for row in rows], types[name].to_arrow()) for i, name in enumerate(inputs)
    }
    results = expression.arrow(arrays) if rows else pa.array([], expression.type.to_arrow())
    found = [v for v in results.to_pylist() if v is not None]
    numbers = [v for v in found if not is_nan(v)]
    return Domain(
        SortedRangeSet.of_values(*numbers),
        null_allowed=results.null_count > 0,
        nan_allowed=len(numbers) < len(found),
    )


def project(expression: Expression, domain: Domain) -> Domain:
    """A domain on f(col) holding f(v) for every v in `domain` (on col); widening. Only for an
    expression over one column that never decreases (a range [a, b] maps to [f(a), f(b)]) or never
    increases ([f(b), f(a)]) with it. NULL is always allowed, since f gives NULL for some non-null
    inputs (out of range, overflow), and an end where f gives NULL is open; a domain that allows NaN
    projects to every value (what f makes of NaN is not known here)."""
    source = expression.source
    if source is None or not expression.projects:
        raise ValueError(f"{expression.sql()} is not monotonic in one column: a range says nothing")
    if domain.is_nan_allowed():
        return Domain.all()
    if domain.values.is_all() or domain.values.is_none():
        return Domain.of(domain.values, True)
    decreasing = expression.order is Monotonicity.DECREASING
    ranges = []
    for r in domain.values.ranges:
        low = expression.value(**{source: r.low}) if r.low is not None else None
        high = expression.value(**{source: r.high}) if r.high is not None else None
        if decreasing:
            low, high = high, low
        ranges.append(Range(low, low is not None, high, high is not None))
    return Domain.of(SortedRangeSet.of_ranges(*ranges), True)


def sql_context(
    schema: TableSchema, definitions: Iterable[IndexDefinition]
) -> tuple[TableSchema, dict[str, str]]:
    """What `translate` needs to read functional predicates: the schema with the virtual columns,
    and the indexed calls mapped to them."""
    virtual = virtual_columns(schema, definitions)
    return with_virtual(schema, virtual), {v.expression.key(): v.name for v in virtual}
