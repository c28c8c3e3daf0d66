"""The `functional` kind (RFC-63): the stats (or value list) of f(col) per file in partition
`func_index_<name>` (`pruner.index.functional`). A removed file's keys are tombstoned; a value-list
index, keyed by value, has the bucket tasks delete the rows the file had instead."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pyarrow as pa

from pruner.format.config import TableConfig, TableProperties
from pruner.index.definitions import FunctionalKind, IndexDefinition, IndexType
from pruner.index.functional import functional_rows, functional_spec
from pruner.index.kinds.base import Leftover
from pruner.metadata.spec import IndexPartitionSpec
from pruner.types import TableSchema


class Functional:
    index_type = IndexType.FUNCTIONAL
    requires: tuple[IndexType, ...] = ()
    many_per_table = False
    options: Mapping[str, Callable[[str], str]] = {}

    def check_columns(self, config: TableConfig, columns: list[str]) -> None:
        pass

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


KIND = Functional()
