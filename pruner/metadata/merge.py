"""Merge-on-read for index rows: given base rows and log rows in commit order, keep the last op per
key and drop keys whose last op is a delete (tombstone). Vectorised: one stable sort, then a
comparison of each row's key with the next row's key."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pruner.metadata.spec import OP_DELETE, OP_FIELD, OP_UPSERT, PartitionSpec

_SEQ = "_seq"


def with_op(rows: pa.Table, op: int) -> pa.Table:
    return rows.append_column(OP_FIELD, pa.array(np.full(rows.num_rows, op, dtype=np.int8)))


def merge(spec: PartitionSpec, layers: list[pa.Table]) -> pa.Table:
    """Merge layers (oldest first; each with or without an op column) into live rows, sorted by key.

    Within one layer a key must appear at most once; across layers the later layer wins."""
    prepared = []
    for seq, layer in enumerate(layers):
        rows = layer if OP_FIELD in layer.schema.names else with_op(layer, OP_UPSERT)
        rows = rows.select(spec.log_schema.names).cast(spec.log_schema)
        prepared.append(rows.append_column(_SEQ, pa.array(np.full(rows.num_rows, seq, np.int32))))
    if not prepared:
        return spec.schema.empty_table()
    combined = pa.concat_tables(prepared)
    if len(prepared) == 1:
        combined = combined.sort_by(spec.sort_keys())
    else:
        combined = combined.sort_by([*spec.sort_keys(), (_SEQ, "ascending")])
        combined = combined.filter(last_of_each_key(combined, spec.key_fields))
    live = pc.equal(combined.column(OP_FIELD), OP_UPSERT)
    return combined.filter(live).select(spec.schema.names)


def last_of_each_key(rows: pa.Table, key_fields: tuple[str, ...]) -> pa.Array:
    """True for each row whose key differs from the next row's (rows sorted by key)."""
    n = rows.num_rows
    if n == 0:
        return pa.array([], pa.bool_())
    differs = np.zeros(n - 1, dtype=bool)
    for name in key_fields:
        column = rows.column(name).combine_chunks()
        current, following = column.slice(0, n - 1), column.slice(1)
        not_equal = pc.fill_null(pc.not_equal(current, following), True)
        both_null = pc.and_(current.is_null(), following.is_null())
        differs |= pc.and_(not_equal, pc.invert(both_null)).to_numpy(zero_copy_only=False)
    return pa.array(np.append(differs, True))


def is_delete(rows: pa.Table) -> pa.Array:
    return pc.equal(rows.column(OP_FIELD), OP_DELETE)
