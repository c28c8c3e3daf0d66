"""The `bloom_filters` kind: one Parquet split-block bloom filter per (column, partition, file) of
the indexed columns, sized for the definition's false-positive probability (`pruner.index.bloom`);
a removed file's keys are tombstoned."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pyarrow as pa

from pruner.errors import InvalidInputError
from pruner.format.config import TableConfig, TableProperties
from pruner.index import bloom
from pruner.index.definitions import IndexDefinition, IndexType
from pruner.index.kinds.base import Leftover, PerFileDefaults, fpp_option
from pruner.metadata.spec import IndexPartitionSpec
from pruner.types import Role, TableSchema

BLOOM_SCHEMA = bloom.FILTER_ROWS_SCHEMA


def bloom_filters_spec(num_buckets: int) -> IndexPartitionSpec:
    return IndexPartitionSpec(
        "bloom_filters", ("column", "partition", "file_name"), "partition", BLOOM_SCHEMA, num_buckets
    )


class BloomFilters(PerFileDefaults):
    index_type = IndexType.BLOOM_FILTERS
    options: Mapping[str, Callable[[str], str]] = {"fpp": fpp_option}

    def check_columns(self, config: TableConfig, columns: list[str], expression: str | None = None) -> None:
        if not columns:
            raise InvalidInputError("bloom_filters needs its column(s): USING bloom_filters (col, ...)")
        for column in columns:
            column_kind = config.schema.column(column).type.kind
            if not column_kind.allows(Role.BLOOM_FILTER):
                raise InvalidInputError(f"a bloom filter on {column_kind} column {column!r} cannot prune")

    def partition_name(self, definition: IndexDefinition) -> str:
        return str(self.index_type)

    def spec(
        self, definition: IndexDefinition, properties: TableProperties, schema: TableSchema
    ) -> IndexPartitionSpec:
        return bloom_filters_spec(properties.index_bloom_filters_buckets)

    def file_rows(
        self, rows: pa.Table, schema: TableSchema, definition: IndexDefinition, partition: str, file_name: str
    ) -> pa.Table | None:
        records = []
        for column in definition.columns:
            data = bloom.filter_for(rows.column(column), definition.fpp)
            records.append({"column": column, "partition": partition, "file_name": file_name, "filter": data})
        return pa.Table.from_pylist(records, schema=BLOOM_SCHEMA)

    def leftover(self, definition: IndexDefinition) -> Leftover:
        return Leftover.TOMBSTONES


KIND = BloomFilters()
