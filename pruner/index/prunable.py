"""Which columns a predicate can prune a snapshot by: those that some planner step reads an index
(or the partition paths) for when the predicate constrains that column alone. Engines ask this
before waiting for a join's dynamic filter (GetTableResponse.prunable_columns): a filter on any
other column cannot remove a file, so waiting for it only delays the scan. The answer follows the
steps of `pruner.planner.steps` — partition values, partition stats, the record index, secondary
indexes, functional indexes, column stats, bloom filters — and counts an index only where that
step would use it: ready, and for a secondary index complete up to the snapshot."""

from __future__ import annotations

from collections.abc import Iterable
from typing import assert_never

from pruner.format.config import TableConfig
from pruner.functions import Order
from pruner.index.definitions import IndexDefinition, IndexState, IndexType
from pruner.index.functional import virtual_columns


def prunable_columns(
    config: TableConfig, definitions: Iterable[IndexDefinition], instant: str | None
) -> tuple[str, ...]:
    """The columns (and functional indexes' virtual columns) a predicate on that column alone can
    prune snapshot `instant` by, in schema order, then virtual columns in name order. A composite
    record key is left out: the record index needs every key column constrained at once."""
    definitions = tuple(definitions)
    columns: set[str] = set(config.all_partition_fields)
    if len(config.record_key) == 1:
        columns.update(config.record_key)
    for definition in definitions:
        if definition.state != IndexState.READY or not definition.usable:
            continue
        match definition.index_type:
            case IndexType.COLUMN_STATS | IndexType.PARTITION_STATS | IndexType.BLOOM_FILTERS:
                columns.update(definition.columns)
            case IndexType.SECONDARY_INDEX:
                if definition.covers(instant):
                    columns.update(definition.columns)
            case IndexType.FUNCTIONAL:
                pass  # below, with the function's order
            case _:
                assert_never(definition.index_type)
    virtual = []
    for column in virtual_columns(config.schema, definitions):
        if column.definition.state != IndexState.READY:
            continue
        virtual.append(column.name)
        if column.function.order == Order.MONOTONIC:
            columns.add(column.function.column)
    return (*(name for name in config.schema.names if name in columns), *virtual)
