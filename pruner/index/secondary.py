"""Secondary indexes on non-unique columns (RFC-77): partition `secondary_index_<name>` holds one
entry per live row, the pair `(secondary_key, key)` of the column's value and the encoded record
key. The pair is the merge key (so many record keys per value coexist, and a tombstone removes one
pair only); the bucket is chosen by the secondary key alone, so a lookup by value reads one bucket.

One column: its value is the secondary key, and NULLs are not indexed: a row whose column is NULL
has no entry, and the planner never uses the index for a domain that admits NULL (`IS NULL`,
`x = 1 OR x IS NULL`).

An expression (`USING secondary_index (lower(email))`, RFC-63's any index type over an
expression): its value, computed by the registry's Arrow implementation, is the secondary key; rows
where it is NULL are not indexed, as for one column.

Several columns (a composite index, RFC-77's roadmap): the secondary key is the string the values
make as a composite record key would (`pruner.format.keys.encode_record_keys`: each value's
canonical text, escaped, joined by U+001F), a NULL value written as `NULL_COMPONENT`, which no
escaped text equals. Every row is indexed, so a lookup of the first columns' values alone (a
leading prefix) is a scan of the keys starting with their encoding and a separator
(`prefix_range`), and finds every row holding them.

Maintenance (`file_group_changes`) compares, per rewritten file group, the pairs of the old image
that copy-on-write reads with the pairs of the new file: pairs that disappeared get a tombstone,
pairs that appeared get an upsert. While the index is still building, every pair of a new file is
upserted (not only the changed ones), because the build drops the rows it computed from files that
a concurrent write replaced."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pruner.format.keys import KEY_SEPARATOR, canonical_text, encode_record_keys, escape_component
from pruner.index.definitions import IndexDefinition
from pruner.index.functional import index_expression
from pruner.metadata.merge import with_op
from pruner.metadata.spec import OP_DELETE, OP_FIELD, OP_UPSERT, IndexPartitionSpec
from pruner.types import ColumnType, TableSchema, TypeKind

PREFIX = "secondary_index_"
VALUE = "secondary_key"
KEY = "key"
# A NULL value in a composite key: a backslash and N, which no escaped text is
# (`pruner.format.keys.escape_component`: each of its backslashes is followed by another or by u).
NULL_COMPONENT = "\\N"


def partition_name(index_name: str) -> str:
    return f"{PREFIX}{index_name}"


def schema(column_type: pa.DataType) -> pa.Schema:
    return pa.schema(
        [pa.field(VALUE, column_type, nullable=False), pa.field(KEY, pa.string(), nullable=False)]
    )


def key_type(definition: IndexDefinition, table_schema: TableSchema) -> ColumnType:
    """The secondary key's type: the expression's, the column's, or a string for several columns."""
    if definition.expression is not None:
        return index_expression(definition, table_schema).type
    columns = definition.columns
    return table_schema.column(columns[0]).type if len(columns) == 1 else ColumnType(TypeKind.STRING)


def spec(index_name: str, column_type: ColumnType, num_buckets: int) -> IndexPartitionSpec:
    return IndexPartitionSpec(
        partition_name(index_name), (VALUE, KEY), VALUE, schema(column_type.to_arrow()), num_buckets
    )


def secondary_keys(rows: pa.Table, columns: tuple[str, ...]) -> pa.Array:
    """Each row's secondary key: the column's value, or for several columns their composite
    encoding (never NULL: a NULL value is `NULL_COMPONENT`)."""
    if len(columns) == 1:
        return rows.column(columns[0]).combine_chunks()
    return _composite(rows, columns)


def index_keys(rows: pa.Table, definition: IndexDefinition) -> pa.Array:
    """Each row's secondary key under `definition`: its expression's value (NULL where the
    expression is), else `secondary_keys` of its columns."""
    if definition.expression is None:
        return secondary_keys(rows, definition.columns)
    sources = list(definition.columns)
    tree = index_expression(definition, TableSchema.from_arrow(rows.select(sources).schema))
    return tree.compute({c: rows.column(c).combine_chunks() for c in sources}, rows.num_rows)


def _composite(rows: pa.Table, columns: tuple[str, ...]) -> pa.Array:
    parts = [pc.fill_null(escape_component(canonical_text(rows.column(c))), NULL_COMPONENT) for c in columns]
    return pc.cast(
        pc.binary_join_element_wise(*parts, KEY_SEPARATOR) if len(parts) > 1 else parts[0], pa.string()
    )


def prefix_range(values: pa.Table) -> tuple[pa.Array, pa.Array]:
    """For rows of a composite index's leading columns' values, the range `[low, high)` of the keys
    that start with each row's: its encoding and a separator, up to that encoding and the next
    character (the keys between are exactly those continuing it)."""
    encoded = _composite(values, tuple(values.column_names))
    low = pc.binary_join_element_wise(encoded, pa.scalar(""), KEY_SEPARATOR)
    high = pc.binary_join_element_wise(encoded, pa.scalar(""), chr(ord(KEY_SEPARATOR) + 1))
    return pc.cast(low, pa.string()), pc.cast(high, pa.string())


def pairs(
    rows: pa.Table, definition: IndexDefinition, record_key: tuple[str, ...], target: IndexPartitionSpec
) -> pa.Table:
    """The `(secondary_key, key)` pairs of some data rows; of a one-column index or one over an
    expression, rows whose key is NULL left out."""
    keys = encode_record_keys(rows, record_key)
    table = pa.table({VALUE: index_keys(rows, definition), KEY: keys})
    table = table.filter(pc.is_valid(table.column(VALUE)))
    return table.cast(target.schema)


def _minus(left: pa.Table, right: pa.Table) -> pa.Table:
    """Rows of `left` whose pair is not in `right` (an anti join on both key fields)."""
    if left.num_rows == 0 or right.num_rows == 0:
        return left
    return left.join(right, keys=[VALUE, KEY], join_type="left anti").select([VALUE, KEY])


def file_group_changes(
    old: pa.Table | None,
    new: pa.Table,
    definition: IndexDefinition,
    record_key: tuple[str, ...],
    target: IndexPartitionSpec,
    full: bool,
) -> pa.Table:
    """Log rows (with op) for one file group rewritten from `old` (None: a new group) to `new`.
    With `full`, every pair of `new` is upserted, not only the pairs that changed."""
    new_pairs = pairs(new, definition, record_key, target)
    if old is None or old.num_rows == 0:
        return with_op(new_pairs, OP_UPSERT)
    old_pairs = pairs(old, definition, record_key, target)
    gone = _minus(old_pairs, new_pairs).cast(target.schema)
    added = (new_pairs if full else _minus(new_pairs, old_pairs)).cast(target.schema)
    return pa.concat_tables([with_op(gone, OP_DELETE), with_op(added, OP_UPSERT)])


def order_for_commit(changes: pa.Table) -> pa.Table:
    """Tombstones before upserts: a record that moved to another file group with the same value
    gets a tombstone from its old group and an upsert from its new one; the upsert must win."""
    op = changes.column(OP_FIELD).to_numpy().astype(np.int16)
    return changes.take(pa.array(np.argsort(-op, kind="stable")))
