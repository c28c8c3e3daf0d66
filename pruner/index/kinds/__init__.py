"""One module per index kind, and the registry that maps an `IndexType` to its kind (issue 36).

Each index type's behaviour lives in one kind, the way Hudi's `MetadataPartitionType` constants
carry their partition path and initialisation, and a pyiceberg `Transform` carries both its
write-time function and its query-time projection. A kind (`base.IndexKind`) implements:

- `index_type`: the `IndexType` it implements;
- `requires`: the types that must be defined and ready before it is built (`partition_stats`
  aggregates `column_stats`);
- `partition_name(definition)`: its metadata partition (`column_stats`, `secondary_index_<name>`...);
- `spec(definition, properties, schema)`: that partition's key, hash field, schema and buckets;
- `file_rows(rows, schema, definition, partition, file_name)`: the rows one data file contributes,
  or None for a kind without per-file rows (`partition_stats`, `secondary_index`);
- `leftover(definition)`: what a removed or rewritten file leaves behind (`Leftover`: tombstones of
  its keys, deletes of its previous rows by value, nothing, or a re-aggregation of its partition).
- `many_per_table`, `options`, `check_options(options)`, `check_columns(config, columns, expression)`,
  `bind_expression(config, expression)`: what `CREATE INDEX` accepts (`pruner.index.defining`).

Kinds take definitions, data rows, properties and schemas, never a table or snapshot object: they
import nothing of `pruner.table`, which imports them (through `pruner.index.specs`). The planner's
steps (`pruner.planner.steps`) stay where they are and take their kind from `kind_of`.

Adding a kind is one module here implementing those members, one case in `kind_of` (mypy's
exhaustiveness check on the `match` fails until it exists), one step module in
`pruner.planner.steps`, and their tests."""

from __future__ import annotations

from collections.abc import Iterable
from typing import assert_never

from pruner.index.definitions import IndexDefinition, IndexType
from pruner.index.kinds import bloom_filters, column_stats, functional, partition_stats, secondary_index, text
from pruner.index.kinds.base import IndexKind, Leftover

__all__ = ["IndexKind", "Leftover", "kind_of", "partition_of", "required_by"]


def kind_of(index_type: IndexType) -> IndexKind:
    """The kind implementing `index_type`: the one place a type is mapped to its behaviour."""
    match index_type:
        case IndexType.COLUMN_STATS:
            return column_stats.KIND
        case IndexType.PARTITION_STATS:
            return partition_stats.KIND
        case IndexType.BLOOM_FILTERS:
            return bloom_filters.KIND
        case IndexType.SECONDARY_INDEX:
            return secondary_index.KIND
        case IndexType.FUNCTIONAL:
            return functional.KIND
        case IndexType.TEXT:
            return text.KIND
        case _:
            assert_never(index_type)


def partition_of(definition: IndexDefinition) -> str:
    """The metadata partition holding the index of `definition` (as its kind names it)."""
    return kind_of(definition.index_type).partition_name(definition)


def required_by(
    definition: IndexDefinition, definitions: Iterable[IndexDefinition]
) -> dict[IndexType, IndexDefinition | None]:
    """For each type `definition`'s kind requires (`IndexKind.requires`), the table's index of that
    type among `definitions` (None: not defined)."""
    definitions = tuple(definitions)
    return {
        required: next((d for d in definitions if d.index_type == required), None)
        for required in kind_of(definition.index_type).requires
    }
