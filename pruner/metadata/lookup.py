"""Keyed lookups in a merged index bucket by hash search. `IndexedRows` is one bucket together with
a lookup structure for one field (the partition's hash field), built once when the bucket is
loaded into the sidecar's cache: the field's values in ascending order (the rows themselves when
they are already ordered by it, as in the secondary and record index partitions, otherwise a
sorted copy and the permutation back), cut into runs of equal values, and the runs' hashes in
ascending order. A lookup hashes its keys with the same function that chose their bucket
(`pruner.format.keys.value_hashes`, computed once by the caller and passed in), finds candidate runs
with a numpy binary search on those 64-bit hashes, confirms each candidate by comparing its value
with the key (so a hash collision can never return a wrong row), and returns the runs' rows. One key
therefore costs two `searchsorted` calls on integers, a scalar comparison and a slice; thousands of
keys cost the same calls vectorised. The structure adds 12 bytes per distinct value (16 when
values repeat) to the bucket's rows. `search_key` and `admitted` serve the cold path: choosing row
groups by footer min / max for all keys in two vectorised calls (decimals compared as
order-preserving bytes, since Arrow cannot search decimals)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pruner.format.keys import value_hashes

# Up to this many keys are searched one by one on scalars, more with vectorised searches and one
# vectorised comparison; both answer the same (property-tested).
_FEW_KEYS = 16
# Up to this many matched runs of rows in key order are returned as slices, above it with one take.
_SLICED_RUNS_LIMIT = 8


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


def lookup_keys(keys: pa.Array | pa.ChunkedArray, value_type: pa.DataType) -> pa.Array:
    """The non-null keys (duplicates kept), cast to the searched field's type."""
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    if keys.type != value_type:
        keys = pc.cast(keys, value_type)
    if keys.null_count:
        keys = keys.drop_null()
    return keys


def _is_sorted(values: pa.Array) -> bool:
    if values.null_count:
        return False
    if len(values) < 2:
        return True
    return not pc.any(pc.less(values.slice(1), values.slice(0, len(values) - 1))).as_py()


def _concatenated_ranges(
    starts: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """The ranges [start, start + length) one after another, as one array."""
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(starts - offsets, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)


@dataclass(frozen=True)
class IndexedRows:
    """`rows` (one chunk per column) and a hash lookup on `field`. `values` holds the field's non-NULL
    values in ascending order; `order[i]` is the row holding `values[i]`, or `order` is None when
    the rows are already in that order (NULLs, never matched, come last and are not in `values`).
    Run r of equal values is `values[run_starts[r]:run_starts[r + 1]]`, or just `values[r]` when
    `run_starts` is None (every value distinct). `run_hashes` is ascending and `hash_runs[i]` is the
    run whose value hashes to `run_hashes[i]`. `nbytes` counts the rows and every array built for
    the lookup (a sorted copy that shares the rows' buffers is not counted twice)."""

    rows: pa.Table
    field: str
    values: pa.Array
    order: npt.NDArray[np.int64] | None
    run_starts: npt.NDArray[np.int32] | None
    run_hashes: npt.NDArray[np.uint64]
    hash_runs: npt.NDArray[np.int32]
    nbytes: int

    @classmethod
    def build(cls, rows: pa.Table, field: str) -> IndexedRows:
        rows = rows.combine_chunks()
        column = rows.column(field)
        values = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
        order = None
        extra = 0
        if not _is_sorted(values):
            order = pc.sort_indices(values).to_numpy().astype(np.int64)
            values = values.take(pa.array(order))
            extra = values.nbytes + order.nbytes
        values = values.slice(0, len(values) - values.null_count)
        run_starts = None
        representatives = values
        if len(values) > 1:
            changes = pc.not_equal(values.slice(1), values.slice(0, len(values) - 1))
            boundaries = np.flatnonzero(changes.to_numpy(zero_copy_only=False)) + 1
            if len(boundaries) < len(values) - 1:
                run_starts = np.concatenate([[0], boundaries, [len(values)]]).astype(np.int32)
                representatives = values.take(pa.array(run_starts[:-1]))
        hashes = value_hashes(representatives)
        hash_runs = np.argsort(hashes, kind="stable").astype(np.int32)
        run_hashes = hashes[hash_runs]
        extra += run_hashes.nbytes + hash_runs.nbytes + (0 if run_starts is None else run_starts.nbytes)
        return cls(rows, field, values, order, run_starts, run_hashes, hash_runs, rows.nbytes + extra)

    def find(
        self, keys: pa.Array | pa.ChunkedArray, hashes: npt.NDArray[np.uint64] | None = None
    ) -> pa.Table:
        """The rows whose `field` equals one of `keys`, in the order of `rows`. Duplicate keys count
        once; a NULL key matches nothing (as in SQL equality). `hashes`, when given, are
        `value_hashes` of the keys after `lookup_keys` (callers that chose the bucket by them)."""
        runs = self._matched_runs(keys, hashes)
        if self.order is None and len(runs) <= _SLICED_RUNS_LIMIT:
            slices = [self.rows.slice(*self._run_range(int(run))) for run in runs]
            if len(slices) == 1:
                return slices[0]
            return pa.concat_tables(slices) if slices else self.rows.schema.empty_table()
        return self.rows.take(self._positions(runs))

    def positions(
        self, keys: pa.Array | pa.ChunkedArray, hashes: npt.NDArray[np.uint64] | None = None
    ) -> npt.NDArray[np.int64]:
        """The (ascending) positions in `rows` of the rows `find` returns."""
        return self._positions(self._matched_runs(keys, hashes))

    def _run_range(self, run: int) -> tuple[int, int]:
        """Start (in `values`) and length of one run."""
        if self.run_starts is None:
            return run, 1
        start = int(self.run_starts[run])
        return start, int(self.run_starts[run + 1]) - start

    def _positions(self, runs: list[int] | npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        runs = np.asarray(runs, dtype=np.int64)
        if self.run_starts is None:
            positions = runs
        else:
            starts = self.run_starts[runs].astype(np.int64)
            positions = _concatenated_ranges(starts, self.run_starts[runs + 1].astype(np.int64) - starts)
        return positions if self.order is None else np.sort(self.order[positions])

    def _matched_runs(
        self, keys: pa.Array | pa.ChunkedArray, hashes: npt.NDArray[np.uint64] | None
    ) -> list[int] | npt.NDArray[np.int64]:
        """The runs whose value is one of `keys`, ascending."""
        keys = lookup_keys(keys, self.values.type)
        if len(keys) == 0 or len(self.run_hashes) == 0:
            return []
        if hashes is None:
            hashes = value_hashes(keys)
        if len(keys) <= _FEW_KEYS:
            return self._runs_of_few(keys, hashes)
        return self._runs_of_many(keys, hashes)

    def _runs_of_few(self, keys: pa.Array, hashes: npt.NDArray[np.uint64]) -> list[int]:
        """Key by key on scalars (no per-call array set-up)."""
        runs = set()
        for key in range(len(hashes)):
            wanted = hashes[key]  # a numpy uint64: a Python int above 2**63 would search as an object
            low = int(self.run_hashes.searchsorted(wanted, side="left"))
            high = int(self.run_hashes.searchsorted(wanted, side="right"))
            for slot in range(low, high):
                run = int(self.hash_runs[slot])
                if self.values[self._run_range(run)[0]].equals(keys[key]):
                    runs.add(run)
        return sorted(runs)

    def _runs_of_many(self, keys: pa.Array, hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]:
        """With the searches and the comparison vectorised."""
        low = self.run_hashes.searchsorted(hashes, side="left").astype(np.int64)
        counts = self.run_hashes.searchsorted(hashes, side="right").astype(np.int64) - low
        key_of = np.repeat(np.arange(len(keys), dtype=np.int64), counts)
        runs = self.hash_runs[_concatenated_ranges(low, counts)].astype(np.int64)
        starts = runs if self.run_starts is None else self.run_starts[runs].astype(np.int64)
        same = pc.equal(self.values.take(pa.array(starts)), keys.take(pa.array(key_of)))
        return np.unique(runs[np.asarray(same.to_numpy(zero_copy_only=False), dtype=np.bool_)])


def admitted(
    minimums: pa.Array, maximums: pa.Array, keys: pa.Array | pa.ChunkedArray
) -> npt.NDArray[np.bool_]:
    """For each range [minimums[i], maximums[i]], whether at least one of `keys` lies in it. A range
    with a NULL bound (statistics missing) admits any key; nothing admits an empty set of keys."""
    wanted = search_key(lookup_keys(keys, minimums.type))
    if len(wanted) == 0:
        return np.zeros(len(minimums), dtype=np.bool_)
    wanted = wanted.take(pc.sort_indices(wanted))
    low = pc.search_sorted(wanted, search_key(minimums), side="left")
    high = pc.search_sorted(wanted, search_key(maximums), side="right")
    unknown = pc.or_(pc.is_null(low), pc.is_null(high)).to_numpy(zero_copy_only=False)
    inside = pc.fill_null(pc.greater(high, low), False).to_numpy(zero_copy_only=False)
    return np.asarray(unknown | inside, dtype=np.bool_)
