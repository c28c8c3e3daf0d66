"""Merge-on-read for index rows: given base rows and log rows in commit order, keep the last op per
key and drop keys whose last op is a delete (tombstone). `merge` does it in memory for a few
tables: one stable sort, then a comparison of each row's key with the next row's key.
`merge_runs` does the same for index files too large to hold at once: every file is a run sorted
by key (writers sort what they write), read chunk by chunk, and merged chunks are emitted as soon
as no unread row can still change them, so memory stays at about one chunk per run. A file
written before a payload field was added reads with that field null (`with_missing_fields`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pruner.metadata.spec import OP_DELETE, OP_FIELD, OP_UPSERT, IndexPartitionSpec

_SEQ = "_seq"
# Marks the last row loaded from a run that has more rows: no row after it can sort before it.
_LAST = "_last"


class UnsortedRunError(ValueError):
    """A run given to `merge_runs` is not strictly increasing by key."""


def with_op(rows: pa.Table, op: int) -> pa.Table:
    return rows.append_column(OP_FIELD, pa.array(np.full(rows.num_rows, op, dtype=np.int8)))


def with_missing_fields(rows: pa.Table, schema: pa.Schema) -> pa.Table:
    """`rows` with each nullable field of `schema` they lack added as nulls: an index file written
    before a payload field existed reads as not knowing it."""
    for field in schema:
        if field.name not in rows.schema.names and field.nullable:
            rows = rows.append_column(field, pa.nulls(rows.num_rows, field.type))
    return rows


def merge(spec: IndexPartitionSpec, layers: list[pa.Table]) -> pa.Table:
    """Merge layers (oldest first; each with or without an op column) into live rows, sorted by key.

    Within one layer a key must appear at most once; across layers the later layer wins."""
    prepared = [_prepare(spec, layer, seq) for seq, layer in enumerate(layers)]
    if not prepared:
        return spec.schema.empty_table()
    combined = pa.concat_tables(prepared)
    if len(prepared) == 1:
        combined = combined.sort_by(spec.sort_keys())
    else:
        combined = combined.sort_by([*spec.sort_keys(), (_SEQ, "ascending")])
        combined = combined.filter(last_of_each_key(combined, spec.key_fields))
    return _live(spec, combined)


def merge_runs(spec: IndexPartitionSpec, runs: Sequence[Iterable[pa.Table]]) -> Iterator[pa.Table]:
    """Merge runs (oldest first), each an iterable of chunks whose rows are strictly increasing by
    key across the whole run, into live rows in key order, chunk by chunk. Raises
    `UnsortedRunError` (possibly after some chunks were yielded) when a run is out of order.

    Each step sorts what is buffered (at most one chunk per run), finds the smallest key among
    the last loaded rows of the runs that have more to read, and emits every buffered row up to
    and including that key: any row still unread is larger. The rest stays buffered, and the runs
    whose buffered rows were all emitted load their next chunk."""
    sources = [_Run(spec, seq, chunks) for seq, chunks in enumerate(runs)]
    ordering = [*spec.sort_keys(), (_SEQ, "ascending")]
    carried: list[pa.Table] = []
    needing = sources
    while True:
        loaded = [chunk for run in needing if (chunk := run.next_chunk()) is not None]
        buffered = carried + loaded
        if not buffered:
            return
        combined = pa.concat_tables(buffered).sort_by(ordering)
        ends = last_of_each_key(combined, spec.key_fields).to_numpy(zero_copy_only=False)
        markers = combined.column(_LAST).to_numpy(zero_copy_only=False)
        if not markers.any():
            yield _live(spec, combined.filter(pa.array(ends)))
            return
        first = int(np.argmax(markers))
        cut = first + int(np.argmax(ends[first:])) + 1  # through the end of that key's rows
        ready = combined.slice(0, cut)
        yield _live(spec, ready.filter(pa.array(ends[:cut])))
        drained = set(ready.filter(ready.column(_LAST)).column(_SEQ).to_pylist())
        needing = [sources[seq] for seq in sorted(drained)]
        carried = [combined.slice(cut)]


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


def _prepare(spec: IndexPartitionSpec, layer: pa.Table, seq: int) -> pa.Table:
    """A layer in the log schema (op column added as upserts for a base) with its sequence number."""
    rows = layer if OP_FIELD in layer.schema.names else with_op(layer, OP_UPSERT)
    rows = with_missing_fields(rows, spec.log_schema).select(spec.log_schema.names).cast(spec.log_schema)
    return rows.append_column(_SEQ, pa.array(np.full(rows.num_rows, seq, np.int32)))


def _live(spec: IndexPartitionSpec, rows: pa.Table) -> pa.Table:
    """The upserted rows of rows already reduced to one row per key, without the op column."""
    return rows.filter(pc.equal(rows.column(OP_FIELD), OP_UPSERT)).select(spec.schema.names)


class _Run:
    """One sorted run read a chunk ahead, so that the last row of a chunk can be marked when more
    rows follow; checks the run's order as it goes."""

    def __init__(self, spec: IndexPartitionSpec, seq: int, chunks: Iterable[pa.Table]) -> None:
        self._spec = spec
        self._seq = seq
        self._chunks = iter(chunks)
        self._previous_last: pa.Table | None = None
        self._ahead = self._fetch()

    def next_chunk(self) -> pa.Table | None:
        current = self._ahead
        if current is None:
            return None
        self._ahead = self._fetch()
        marker = np.zeros(current.num_rows, dtype=bool)
        marker[-1] = self._ahead is not None
        return current.append_column(_LAST, pa.array(marker))

    def _fetch(self) -> pa.Table | None:
        for chunk in self._chunks:
            if chunk.num_rows:
                prepared = _prepare(self._spec, chunk, self._seq)
                self._check_order(prepared)
                self._previous_last = prepared.slice(prepared.num_rows - 1)
                return prepared
        return None

    def _check_order(self, chunk: pa.Table) -> None:
        probe = chunk if self._previous_last is None else pa.concat_tables([self._previous_last, chunk])
        order = pc.sort_indices(probe, sort_keys=self._spec.sort_keys()).to_numpy()
        unique = last_of_each_key(probe, self._spec.key_fields).to_numpy(zero_copy_only=False)
        if not (np.array_equal(order, np.arange(probe.num_rows)) and unique.all()):
            raise UnsortedRunError(f"run {self._seq} is not strictly increasing by {self._spec.key_fields}")
