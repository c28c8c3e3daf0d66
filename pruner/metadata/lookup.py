"""Keyed lookups in sorted index rows by binary search. `IndexedRows` is one merged bucket together
with a search column for one field (the partition's hash field), built once when the bucket is
loaded: the field's values in ascending order, plus the permutation that sorts them when the rows
are not already ordered by that field (a hash field that is not the leading sort key, as in the
stats partitions). `find` then answers any number of keys with two vectorised binary searches
(`pyarrow.compute.search_sorted`) and one `take`, never a pass over the whole bucket. `search_key`
gives the form the searches run on (decimals as order-preserving bytes, since Arrow cannot search
decimals), and `admitted` applies the same searches to footer min / max ranges, so that cold reads
compare all row groups with all keys in two vectorised calls."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc


def search_key(values: pa.Array) -> pa.Array:
    """`values` in a form `search_sorted` can search, with the same equality and the same order.
    Decimals become their unscaled integer as big-endian bytes with the sign bit flipped, whose
    byte-wise order is the numeric order; other types are returned as they are."""
    if not pa.types.is_decimal(values.type):
        return values
    width = values.type.byte_width
    end = (values.offset + len(values)) * width
    # Arrow stores decimals as little-endian two's complement integers (of every row up to the end,
    # so that the validity bitmap keeps its offset).
    raw = np.frombuffer(values.buffers()[1], dtype=np.uint8, count=end).reshape(-1, width)
    ordered = raw[:, ::-1].copy()
    ordered[:, 0] ^= 0x80
    fixed = pa.Array.from_buffers(
        pa.binary(width), len(values), [values.buffers()[0], pa.py_buffer(ordered)], offset=values.offset
    )
    return pc.cast(fixed, pa.binary())


def _is_sorted(values: pa.Array) -> bool:
    if values.null_count:
        return False
    if len(values) < 2:
        return True
    return not pc.any(pc.less(values.slice(1), values.slice(0, len(values) - 1))).as_py()


def _needles(keys: pa.Array | pa.ChunkedArray, value_type: pa.DataType) -> pa.Array:
    """The non-null keys (duplicates kept), cast to the searched field's type, in search form."""
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    if keys.type != value_type:
        keys = pc.cast(keys, value_type)
    if keys.null_count:
        keys = keys.drop_null()
    return search_key(keys)


@dataclass(frozen=True)
class IndexedRows:
    """`rows` (one chunk per column) and a binary-search index on `field`: `sorted_values` is the
    search form of the field in ascending order; `order[i]` is the row holding `sorted_values[i]`,
    or `order` is None when the rows are already in that order. `nbytes` counts the rows and every
    array built for the search (a search form that shares the rows' buffers is not counted twice)."""

    rows: pa.Table
    field: str
    sorted_values: pa.Array
    order: npt.NDArray[np.int64] | None
    nbytes: int

    @classmethod
    def build(cls, rows: pa.Table, field: str) -> IndexedRows:
        rows = rows.combine_chunks()
        column = rows.column(field)
        values = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
        searched = search_key(values)
        extra = 0 if searched is values else searched.nbytes
        order = None
        if not _is_sorted(searched):
            order = pc.sort_indices(searched).to_numpy().astype(np.int64)  # NULLs last
            searched = searched.take(pa.array(order))
            extra = searched.nbytes + order.nbytes
        return cls(rows, field, searched, order, rows.nbytes + extra)

    def find(self, keys: pa.Array | pa.ChunkedArray) -> pa.Table:
        """The rows whose `field` equals one of `keys`, in the order of `rows`. Duplicate keys count
        once; a NULL key matches nothing (as in SQL equality)."""
        return self.rows.take(self.positions(keys))

    def positions(self, keys: pa.Array | pa.ChunkedArray) -> npt.NDArray[np.int64]:
        """The (ascending) positions in `rows` of the rows `find` returns."""
        needles = _needles(keys, self.rows.schema.field(self.field).type)
        if len(needles) == 0 or len(self.sorted_values) == 0:
            return np.zeros(0, dtype=np.int64)
        starts = pc.search_sorted(self.sorted_values, needles, side="left").to_numpy()
        ends = pc.search_sorted(self.sorted_values, needles, side="right").to_numpy()
        found = ends > starts
        # Equal keys find the same run: keep each run once, in ascending order.
        starts, first = np.unique(starts[found].astype(np.int64), return_index=True)
        lengths = ends[found][first].astype(np.int64) - starts
        # The runs [start, end) concatenated: each run's start plus a counter that restarts per run.
        offsets = np.cumsum(lengths) - lengths
        positions = np.repeat(starts - offsets, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)
        if self.order is not None:
            positions = np.sort(self.order[positions])
        return positions


def admitted(
    minimums: pa.Array, maximums: pa.Array, keys: pa.Array | pa.ChunkedArray
) -> npt.NDArray[np.bool_]:
    """For each range [minimums[i], maximums[i]], whether at least one of `keys` lies in it. A range
    with a NULL bound (statistics missing) admits any key; nothing admits an empty set of keys."""
    wanted = _needles(keys, minimums.type)
    if len(wanted) == 0:
        return np.zeros(len(minimums), dtype=np.bool_)
    wanted = wanted.take(pc.sort_indices(wanted))
    low = pc.search_sorted(wanted, search_key(minimums), side="left")
    high = pc.search_sorted(wanted, search_key(maximums), side="right")
    unknown = pc.or_(pc.is_null(low), pc.is_null(high)).to_numpy(zero_copy_only=False)
    inside = pc.fill_null(pc.greater(high, low), False).to_numpy(zero_copy_only=False)
    return np.asarray(unknown | inside, dtype=np.bool_)
