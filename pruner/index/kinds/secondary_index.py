"""The `secondary_index` kind (RFC-77): `(value, record key)` pairs of one column, of the
composite value of up to `MAX_COLUMNS` columns, or of an expression over columns (RFC-63, with a
virtual column named after the index, as a functional index has), in partition `secondary_index_<name>`
(`pruner.index.secondary`). It has no per-file rows: the write tasks diff each file group's pairs
against its old image, so a removed file leaves nothing for the driver."""

from __future__ import annotations

import pyarrow as pa

from pruner.errors import InvalidInputError
from pruner.format.config import TableConfig, TableProperties
from pruner.functions import parse_expression
from pruner.index import secondary
from pruner.index.definitions import IndexDefinition, IndexType
from pruner.index.functional import expression_prunes_by
from pruner.index.kinds.base import Leftover, PerFileDefaults
from pruner.metadata.spec import IndexPartitionSpec
from pruner.types import Role, TableSchema

# Columns of a composite secondary index: a lookup of all of them takes the product of their
# IN lists, which `limits.max_key_lookups` bounds anyway; more columns than this is a mistake.
MAX_COLUMNS = 4


class SecondaryIndex(PerFileDefaults):
    index_type = IndexType.SECONDARY_INDEX
    many_per_table = True

    def bind_expression(self, config: TableConfig, expression: str) -> tuple[list[str], str]:
        tree = parse_expression(expression, {c.name: c.type for c in config.schema.columns})
        if not tree.type.kind.allows(Role.SECONDARY_INDEX):
            raise InvalidInputError(
                f"a secondary index cannot cover {tree.type} values ({tree.sql()}) "
                f"(types: {', '.join(Role.SECONDARY_INDEX.kinds())})"
            )
        return sorted(tree.columns), tree.sql()

    def check_columns(self, config: TableConfig, columns: list[str], expression: str | None = None) -> None:
        if expression is not None:
            return  # its inputs: `bind_expression` checked the type of its values
        if not 1 <= len(columns) <= MAX_COLUMNS:
            raise InvalidInputError(
                f"a secondary index covers 1 to {MAX_COLUMNS} columns: USING secondary_index (col) "
                "or USING secondary_index (col1, col2)"
            )
        if config.record_key == tuple(columns):
            names = ", ".join(repr(c) for c in columns)
            raise InvalidInputError(f"{names} is the record key; the record index already indexes it")
        for column in columns:
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
        key_type = secondary.key_type(definition, schema)
        return secondary.spec(definition.name, key_type, properties.index_secondary_index_buckets)

    def file_rows(
        self, rows: pa.Table, schema: TableSchema, definition: IndexDefinition, partition: str, file_name: str
    ) -> pa.Table | None:
        return None

    def leftover(self, definition: IndexDefinition) -> Leftover:
        return Leftover.NOTHING

    def reads(self, definition: IndexDefinition, record_key: tuple[str, ...]) -> tuple[str, ...]:
        return (*definition.columns, *record_key)

    def prunes_by(
        self, definition: IndexDefinition, schema: TableSchema, instant: str | None
    ) -> tuple[str, ...]:
        # keyed by value, it cannot tell an unindexed file from one without the value
        if not definition.covers(instant):
            return ()
        if definition.expression is None:
            return definition.columns
        return expression_prunes_by(definition, schema)

    def column_keys(self, definition: IndexDefinition) -> tuple[str, ...]:
        return ()  # keyed by value and record key, never tombstoned by file

    def file_group_changes(
        self,
        old: pa.Table | None,
        new: pa.Table,
        definition: IndexDefinition,
        record_key: tuple[str, ...],
        spec: IndexPartitionSpec,
        full: bool,
    ) -> pa.Table | None:
        return secondary.file_group_changes(old, new, definition, record_key, spec, full)


KIND = SecondaryIndex()
