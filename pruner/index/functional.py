"""Functional index partitions (RFC-63), `func_index_<name>`: rows of f(col) per data file, where f
is a registry function (`pruner.functions`), computed with its Arrow implementation both when a
writer indexes the file it wrote and when the sidecar computes virtual column values.

- `column_stats` kind: one column stats row per file (`stats.py` schema; `column` = index name),
  so the planner evaluates a domain on f(col) exactly as on a real column.
- `value_list` kind: one row per distinct f(col) value per file (min = max = the value; NULL as a
  row with a null count), keyed by (index name, partition, file, value text): value -> files for
  low-cardinality expressions. A file is pruned when none of its values can match.

Both hash on the partition path, like the other per-file indexes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pruner.functions import BoundFunction, Order, parse_expression
from pruner.index.definitions import FunctionalKind, IndexDefinition, IndexType
from pruner.index.stats import FILE_STATS_SCHEMA, family, file_stats
from pruner.metadata.spec import IndexPartitionSpec
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.types import Column, ColumnType, TableSchema

VALUE_LIST_SCHEMA = pa.schema(
    [
        *list(FILE_STATS_SCHEMA)[:3],
        pa.field("value", pa.string(), nullable=False),
        *list(FILE_STATS_SCHEMA)[3:],
    ]
)
NULL_KEY = ""


def bound_function(definition: IndexDefinition, schema: TableSchema) -> BoundFunction:
    assert definition.expression is not None
    return parse_expression(definition.expression, {c.name: c.type for c in schema.columns})


def functional_spec(definition: IndexDefinition, partition: str, num_buckets: int) -> IndexPartitionSpec:
    if definition.kind == FunctionalKind.VALUE_LIST:
        keys: tuple[str, ...] = ("column", "partition", "file_name", "value")
        return IndexPartitionSpec(partition, keys, "partition", VALUE_LIST_SCHEMA, num_buckets)
    keys = ("column", "partition", "file_name")
    return IndexPartitionSpec(partition, keys, "partition", FILE_STATS_SCHEMA, num_buckets)


def functional_rows(
    rows: pa.Table, schema: TableSchema, definition: IndexDefinition, partition: str, file_name: str
) -> pa.Table:
    """The index rows of one data file."""
    function = bound_function(definition, schema)
    values = function.arrow(rows.column(function.column))
    virtual = TableSchema((Column(definition.name, function.result_type),))
    if definition.kind != FunctionalKind.VALUE_LIST:  # column stats, also when unset
        return file_stats(
            pa.table({definition.name: values}), virtual, (definition.name,), partition, file_name
        )
    fam = family(function.result_type)
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
    function: BoundFunction
    definition: IndexDefinition

    @property
    def type(self) -> ColumnType:
        return self.function.result_type


def virtual_columns(schema: TableSchema, definitions: Iterable[IndexDefinition]) -> list[VirtualColumn]:
    """The hidden virtual columns of a table's functional indexes, in name order. An index that
    cannot be used (`IndexDefinition.check_usable`: stored under a name the naming rule refuses)
    has none, so that reading the table's metadata or a predicate does not fail on it."""
    out = []
    for d in sorted(definitions, key=lambda d: d.name):
        if d.index_type == IndexType.FUNCTIONAL and d.usable:
            out.append(VirtualColumn(d.name, bound_function(d, schema), d))
    return out


def with_virtual(schema: TableSchema, virtual: Iterable[VirtualColumn]) -> TableSchema:
    extra = tuple(Column(v.name, v.type) for v in virtual if not schema.has(v.name))
    return TableSchema(schema.columns + extra)


def project(function: BoundFunction, domain: Domain) -> Domain:
    """A domain on f(col) holding f(v) for every v in `domain` (on col); widening. Only for
    monotonic (non-decreasing) functions: a range [a, b] maps to [f(a), f(b)]. NULL is always
    allowed, since f gives NULL for some non-null inputs (out of range); a domain that allows NaN
    projects to every value (what f makes of NaN is not known here)."""
    if function.order != Order.MONOTONIC:
        raise ValueError(f"{function.sql()} is not monotonic: a range on {function.column} says nothing")
    if domain.is_nan_allowed():
        return Domain.all()
    if domain.values.is_all() or domain.values.is_none():
        return Domain.of(domain.values, True)
    ranges = []
    for r in domain.values.ranges:
        low = function.value(r.low) if r.low is not None else None
        high = function.value(r.high) if r.high is not None else None
        ranges.append(Range(low, low is not None, high, high is not None))
    return Domain.of(SortedRangeSet.of_ranges(*ranges), True)


def sql_context(
    schema: TableSchema, definitions: Iterable[IndexDefinition]
) -> tuple[TableSchema, dict[Any, str]]:
    """What `translate` needs to read functional predicates: the schema with the virtual columns,
    and the indexed calls mapped to them."""
    virtual = virtual_columns(schema, definitions)
    return with_virtual(schema, virtual), {v.function.key(): v.name for v in virtual}
