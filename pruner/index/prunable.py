"""Which columns a predicate can prune a snapshot by: those that some planner step reads an index
(or the partition paths) for when the predicate constrains that column alone. Engines ask this
before waiting for a join's dynamic filter (GetTableResponse.prunable_columns): a filter on any
other column cannot remove a file, so waiting for it only delays the scan. The answer follows the
steps of `pruner.planner.steps` — partition values, partition stats, the record index, secondary
indexes, functional indexes, column stats, bloom filters — and counts an index only where that
step would use it (`IndexKind.prunes_by`): ready, and for a secondary index complete up to the
snapshot."""

from __future__ import annotations

from collections.abc import Iterable

from pruner.format.config import TableConfig
from pruner.index.definitions import IndexDefinition, IndexState
from pruner.index.kinds import kind_of


def prunable_columns(
    config: TableConfig, definitions: Iterable[IndexDefinition], instant: str | None
) -> tuple[str, ...]:
    """The columns (and functional indexes' virtual columns) a predicate on that column alone can
    prune snapshot `instant` by, in schema order, then virtual columns in name order. A composite
    record key is left out: the record index needs every key column constrained at once."""
    columns: set[str] = set(config.all_partition_fields)
    if len(config.record_key) == 1:
        columns.update(config.record_key)
    for definition in definitions:
        if definition.state == IndexState.READY and definition.usable:
            columns.update(kind_of(definition.index_type).prunes_by(definition, config.schema, instant))
    virtual = sorted(columns - set(config.schema.names))
    return (*(name for name in config.schema.names if name in columns), *virtual)
