"""The `secondary_index` kind (RFC-77): `(value, record key)` pairs of one column in partition
`secondary_index_<name>` (`pruner.index.secondary`). It has no per-file rows: the write tasks diff
each file group's pairs against its old image, so a removed file leaves nothing for the driver."""

from __future__ import annotations

import pyarrow as pa

from pruner.format.config import TableProperties
from pruner.index import secondary
from pruner.index.definitions import IndexDefinition, IndexType
from pruner.index.kinds.base import Leftover
from pruner.metadata.spec import IndexPartitionSpec
from pruner.types import TableSchema


class SecondaryIndex:
    index_type = IndexType.SECONDARY_INDEX
    requires: tuple[IndexType, ...] = ()

    def partition_name(self, definition: IndexDefinition) -> str:
        return f"secondary_index_{definition.name}"

    def spec(
        self, definition: IndexDefinition, properties: TableProperties, schema: TableSchema
    ) -> IndexPartitionSpec:
        column = schema.column(definition.columns[0]).type
        return secondary.spec(definition.name, column, properties.index_secondary_index_buckets)

    def file_rows(
        self, rows: pa.Table, schema: TableSchema, definition: IndexDefinition, partition: str, file_name: str
    ) -> pa.Table | None:
        return None

    def leftover(self, definition: IndexDefinition) -> Leftover:
        return Leftover.NOTHING


KIND = SecondaryIndex()
