"""The `column_stats` kind: one row of typed min / max, counts and sketches per (column, partition,
file) of the indexed columns (`pruner.index.stats`); a removed file's keys are tombstoned."""

from __future__ import annotations

import pyarrow as pa

from pruner.format.config import TableProperties
from pruner.index.definitions import IndexDefinition, IndexType
from pruner.index.kinds.base import Leftover, PerFileDefaults
from pruner.index.stats import column_stats_spec, file_stats
from pruner.metadata.spec import IndexPartitionSpec
from pruner.types import TableSchema


class ColumnStats(PerFileDefaults):
    index_type = IndexType.COLUMN_STATS

    def partition_name(self, definition: IndexDefinition) -> str:
        return str(self.index_type)

    def spec(
        self, definition: IndexDefinition, properties: TableProperties, schema: TableSchema
    ) -> IndexPartitionSpec:
        return column_stats_spec(properties.index_column_stats_buckets)

    def file_rows(
        self, rows: pa.Table, schema: TableSchema, definition: IndexDefinition, partition: str, file_name: str
    ) -> pa.Table | None:
        return file_stats(rows, schema, definition.columns, partition, file_name)

    def leftover(self, definition: IndexDefinition) -> Leftover:
        return Leftover.TOMBSTONES


KIND = ColumnStats()
