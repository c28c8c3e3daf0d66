"""Secondary indexes on non-unique columns (RFC-77): partition `secondary_index_<name>` holds one
entry per live row, the pair `(secondary_key, key)` of the column's value and the encoded record
key. The pair is the merge key (so many record keys per value coexist, and a tombstone removes one
pair only); the bucket is chosen by the secondary key alone, so a lookup by value reads one bucket.

NULLs are not indexed: a row whose column is NULL has no entry, and the planner never uses a
secondary index for a domain that admits NULL (`IS NULL`, `x = 1 OR x IS NULL`).

Maintenance (`file_group_changes`) compares, per rewritten file group, the pairs of the old image
that copy-on-write reads with the pairs of the new file: pairs that disappeared get a tombstone,
pairs that appeared get an upsert. While the index is still building, every pair of a new file is
upserted (not only the changed ones), because the build drops the rows it computed from files that
a concurrent write replaced."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pruner.format.keys import encode_record_keys
from pruner.metadata.merge import with_op
from pruner.metadata.spec import OP_DELETE, OP_FIELD, OP_UPSERT, IndexPartitionSpec
from pruner.types import ColumnType

PREFIX = "secondary_index_"
VALUE = "secondary_key"
KEY = "key"


def partition_name(index_name: str) -> str:
    return f"{PREFIX}{index_name}"


def schema(column_type: pa.DataType) -> pa.Schema:
    return pa.schema(
        [pa.field(VALUE, column_type, nullable=False), pa.field(KEY, pa.string(), nullable=False)]
    )


def spec(index_name: str, column_type: ColumnType, num_buckets: int) -> IndexPartitionSpec:
    return IndexPartitionSpec(
        partition_name(index_name), (VALUE, KEY), VALUE, schema(column_type.to_arrow()), num_buckets
    )


def pairs(rows: pa.Table, column: str, record_key: tuple[str, ...], target: IndexPartitionSpec) -> pa.Table:
    """The `(secondary_key, key)` pairs of some data rows, rows whose column is NULL left out."""
    keys = encode_record_keys(rows, record_key)
    table = pa.table({VALUE: rows.column(column), KEY: keys})
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
    column: str,
    record_key: tuple[str, ...],
    target: IndexPartitionSpec,
    full: bool,
) -> pa.Table:
    """Log rows (with op) for one file group rewritten from `old` (None: a new group) to `new`.
    With `full`, every pair of `new` is upserted, not only the pairs that changed."""
    new_pairs = pairs(new, column, record_key, target)
    if old is None or old.num_rows == 0:
        return with_op(new_pairs, OP_UPSERT)
    old_pairs = pairs(old, column, record_key, target)
    gone = _minus(old_pairs, new_pairs).cast(target.schema)
    added = (new_pairs if full else _minus(new_pairs, old_pairs)).cast(target.schema)
    return pa.concat_tables([with_op(gone, OP_DELETE), with_op(added, OP_UPSERT)])


def order_for_commit(changes: pa.Table) -> pa.Table:
    """Tombstones before upserts: a record that moved to another file group with the same value
    gets a tombstone from its old group and an upsert from its new one; the upsert must win."""
    op = changes.column(OP_FIELD).to_numpy().astype(np.int16)
    return changes.take(pa.array(np.argsort(-op, kind="stable")))
