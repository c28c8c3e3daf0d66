"""The `partition_stats` kind: the column stats of a partition's live files aggregated to one row
per (column, partition). It has no per-file rows: a commit re-aggregates each partition it touched
from the `column_stats` rows, which must therefore be defined and ready first."""

from __future__ import annotations

import pyarrow as pa

from pruner.errors import InvalidInputError
from pruner.format.config import TableConfig, TableProperties
from pruner.index.definitions import IndexDefinition, IndexType
from pruner.index.kinds.base import Leftover, PerFileDefaults
from pruner.index.stats import partition_stats_spec
from pruner.metadata.spec import IndexPartitionSpec
from pruner.types import TableSchema


class PartitionStats(PerFileDefaults):
    index_type = IndexType.PARTITION_STATS
    requires: tuple[IndexType, ...] = (IndexType.COLUMN_STATS,)

    def check_columns(self, config: TableConfig, columns: list[str], expression: str | None = None) -> None:
        if not config.all_partition_fields:
            raise InvalidInputError(
                f"table {config.name} is not partitioned; partition_stats needs partitions"
            )

    def partition_name(self, definition: IndexDefinition) -> str:
        return str(self.index_type)

    def spec(
        self, definition: IndexDefinition, properties: TableProperties, schema: TableSchema
    ) -> IndexPartitionSpec:
        return partition_stats_spec(properties.index_partition_stats_buckets)

    def file_rows(
        self, rows: pa.Table, schema: TableSchema, definition: IndexDefinition, partition: str, file_name: str
    ) -> pa.Table | None:
        return None

    def leftover(self, definition: IndexDefinition) -> Leftover:
        return Leftover.REAGGREGATE


KIND = PartitionStats()
