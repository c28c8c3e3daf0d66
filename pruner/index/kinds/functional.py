"""The `functional` kind (RFC-63): the stats (or value list) of f(col) per file in partition
`func_index_<name>` (`pruner.index.functional`). A removed file's keys are tombstoned; a value-list
index, keyed by value, has the bucket tasks delete the rows the file had instead."""

from __future__ import annotations

import pyarrow as pa

from pruner.format.config import TableProperties
from pruner.index.definitions import FunctionalKind, IndexDefinition, IndexType
from pruner.index.functional import expression_prunes_by, functional_rows, functional_spec
from pruner.index.kinds.base import Leftover, PerFileDefaults
from pruner.metadata.spec import IndexPartitionSpec
from pruner.types import TableSchema


class Functional(PerFileDefaults):
    index_type = IndexType.FUNCTIONAL

    def partition_name(self, definition: IndexDefinition) -> str:
        return f"func_index_{definition.name}"

    def spec(
        self, definition: IndexDefinition, properties: TableProperties, schema: TableSchema
    ) -> IndexPartitionSpec:
        return functional_spec(
            definition, self.partition_name(definition), properties.index_column_stats_buckets
        )

    def file_rows(
        self, rows: pa.Table, schema: TableSchema, definition: IndexDefinition, partition: str, file_name: str
    ) -> pa.Table | None:
        return functional_rows(rows, schema, definition, partition, file_name)

    def leftover(self, definition: IndexDefinition) -> Leftover:
        return Leftover.PREVIOUS if definition.kind == FunctionalKind.VALUE_LIST else Leftover.TOMBSTONES

    def prunes_by(
        self, definition: IndexDefinition, schema: TableSchema, instant: str | None
    ) -> tuple[str, ...]:
        return expression_prunes_by(definition, schema)

    def column_keys(self, definition: IndexDefinition) -> tuple[str, ...]:
        return (definition.name,)  # the virtual column is named after the index


KIND = Functional()
