"""The `secondary_index` kind (RFC-77): `(value, record key)` pairs of one column in partition
`secondary_index_<name>` (`pruner.index.secondary`). It has no per-file rows: the write tasks diff
each file group's pairs against its old image, so a removed file leaves nothing for the driver."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pyarrow as pa

from pruner.errors import InvalidInputError
from pruner.format.config import TableConfig, TableProperties
from pruner.index import secondary
from pruner.index.definitions import IndexDefinition, IndexType
from pruner.index.kinds.base import Leftover
from pruner.metadata.spec import IndexPartitionSpec
from pruner.types import Role, TableSchema


class SecondaryIndex:
    index_type = IndexType.SECONDARY_INDEX
    requires: tuple[IndexType, ...] = ()
    many_per_table = True
    options: Mapping[str, Callable[[str], str]] = {}

    def check_columns(self, config: TableConfig, columns: list[str]) -> None:
        if len(columns) != 1:
            raise InvalidInputError(
                "a secondary index covers exactly one column: USING secondary_index (col)"
            )
        column = columns[0]
        if config.record_key == (column,):
            raise InvalidInputError(f"{column!r} is the record key; the record index already indexes it")
        kind = config.schema.column(column).type.kind
        if not kind.allows(Role.SECONDARY_INDEX):
            raise InvalidInputError(
                f"a secondary index cannot cover {kind} column {column!r} "
                f"(types: {', '.join(Role.SECONDARY_INDEX.kinds())})"
            )

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
