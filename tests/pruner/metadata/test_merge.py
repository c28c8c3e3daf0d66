"""pruner.metadata.merge against an oracle that replays the layers into a dict."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.metadata import record_index
from pruner.metadata.merge import UnsortedRunError, merge, merge_runs, with_op
from pruner.metadata.spec import OP_DELETE, OP_FIELD, OP_UPSERT, IndexPartitionSpec

SPEC = IndexPartitionSpec(
    "test",
    ("k1", "k2"),
    "k1",
    pa.schema([pa.field("k1", pa.string()), pa.field("k2", pa.int64()), pa.field("v", pa.int64())]),
    num_buckets=4,
)

Key = tuple[str | None, int | None]
# key -> (op, payload); a dict keeps the keys of one layer unique, as merge requires.
Layer = dict[Key, tuple[int, int]]

keys = st.tuples(
    st.one_of(st.none(), st.sampled_from(["", "a", "b", "ab", "é", "z"])),
    st.one_of(st.none(), st.integers(-2, 2)),
)
layers_strategy = st.lists(
    st.dictionaries(
        keys, st.tuples(st.sampled_from([OP_UPSERT, OP_DELETE]), st.integers(0, 99)), max_size=12
    ),
    max_size=6,
)


def _table(layer: Layer, with_ops: bool) -> pa.Table:
    items = list(layer.items())
    rows = pa.table(
        {
            "k1": pa.array([k[0] for k, _ in items], pa.string()),
            "k2": pa.array([k[1] for k, _ in items], pa.int64()),
            "v": pa.array([p for _, (_, p) in items], pa.int64()),
        }
    )
    if not with_ops:
        return rows
    return rows.append_column(OP_FIELD, pa.array([op for _, (op, _) in items], pa.int8()))


def _sort_key(key: Key) -> tuple[bool, str, bool, int]:
    # Arrow's order: ascending, nulls last; UTF-8 byte order equals code point order.
    return (key[0] is None, key[0] or "", key[1] is None, key[1] or 0)


def _oracle(layers: list[Layer]) -> list[dict[str, object]]:
    live: dict[Key, int] = {}
    for layer in layers:
        for key, (op, payload) in layer.items():
            if op == OP_UPSERT:
                live[key] = payload
            else:
                live.pop(key, None)
    return [{"k1": k[0], "k2": k[1], "v": live[k]} for k in sorted(live, key=_sort_key)]


@settings(deadline=None)
@given(layers_strategy, st.booleans())
def test_merge_equals_replay(layers: list[Layer], first_is_base: bool) -> None:
    # A base layer has no op column: all its rows are upserts.
    if first_is_base and layers:
        layers[0] = {k: (OP_UPSERT, p) for k, (_, p) in layers[0].items()}
    tables = [_table(layer, with_ops=not (first_is_base and i == 0)) for i, layer in enumerate(layers)]
    merged = merge(SPEC, tables)
    assert merged.schema == SPEC.schema
    assert merged.to_pylist() == _oracle(layers)


@settings(deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=4), st.integers(0, 9), max_size=10), max_size=4))
def test_merge_single_key_spec(layers: list[dict[str, int]]) -> None:
    spec = record_index.spec(4)
    tables = [
        pa.table(
            {"key": list(layer), "partition": [str(v) for v in layer.values()], "file_group": list(layer)}
        )
        for layer in layers
    ]
    expected: dict[str, int] = {}
    for layer in layers:
        expected.update(layer)
    merged = merge(spec, [with_op(t, OP_UPSERT) for t in tables])
    assert merged.to_pylist() == [
        {"key": k, "partition": str(expected[k]), "file_group": k} for k in sorted(expected)
    ]


def test_merge_of_nothing_is_empty() -> None:
    assert merge(SPEC, []).equals(SPEC.schema.empty_table())
    assert merge(SPEC, [_table({}, with_ops=True), _table({}, with_ops=False)]).num_rows == 0


def test_null_key_components_are_one_value() -> None:
    layers: list[Layer] = [
        {("a", None): (OP_UPSERT, 1), (None, None): (OP_UPSERT, 2), (None, 1): (OP_UPSERT, 3)},
        {("a", None): (OP_UPSERT, 10), (None, None): (OP_DELETE, 0), ("a", 1): (OP_UPSERT, 4)},
    ]
    merged = merge(SPEC, [_table(layer, with_ops=True) for layer in layers])
    assert merged.to_pylist() == [
        {"k1": "a", "k2": 1, "v": 4},
        {"k1": "a", "k2": None, "v": 10},
        {"k1": None, "k2": 1, "v": 3},
    ]


def _sorted_chunks(layer: Layer, with_ops: bool, cuts: list[int]) -> list[pa.Table]:
    """A layer as a sorted run, cut into chunks at the given positions, after an empty chunk."""
    ordered = dict(sorted(layer.items(), key=lambda item: _sort_key(item[0])))
    table = _table(ordered, with_ops)
    bounds = sorted({0, table.num_rows, *(c % (table.num_rows + 1) for c in cuts)})
    return [table.slice(0, 0), *(table.slice(a, b - a) for a, b in itertools.pairwise(bounds))]


@settings(deadline=None)
@given(layers_strategy, st.booleans(), st.lists(st.integers(0, 12), max_size=4))
def test_merge_runs_equals_replay(layers: list[Layer], first_is_base: bool, cuts: list[int]) -> None:
    if first_is_base and layers:
        layers[0] = {k: (OP_UPSERT, p) for k, (_, p) in layers[0].items()}
    runs = [_sorted_chunks(layer, not (first_is_base and i == 0), cuts) for i, layer in enumerate(layers)]
    chunks = list(merge_runs(SPEC, runs))
    assert all(chunk.schema == SPEC.schema for chunk in chunks)
    merged = pa.concat_tables(chunks) if chunks else SPEC.schema.empty_table()
    assert merged.to_pylist() == _oracle(layers)


def test_merge_runs_reads_runs_lazily() -> None:
    """Memory stays bounded: when the first merged chunk is emitted, each run has been read at
    most two chunks deep (the current one and the one ahead), not to its end."""
    pulled = [0, 0, 0]

    def run(seq: int) -> Iterator[pa.Table]:
        for chunk in range(50):
            pulled[seq] += 1
            keys = [f"{chunk:03d}-{i:02d}" for i in range(10)]
            layer: Layer = {(k, seq): (OP_UPSERT, chunk) for k in keys}
            yield _table(layer, with_ops=True)

    merged = merge_runs(SPEC, [run(0), run(1), run(2)])
    first = next(merged)
    assert first.num_rows > 0
    assert max(pulled) <= 2
    rest = list(merged)
    assert sum(t.num_rows for t in [first, *rest]) == 3 * 50 * 10
    assert pulled == [50, 50, 50]


@pytest.mark.parametrize(
    "chunks",
    [
        [{("b", 1): (OP_UPSERT, 0), ("a", 1): (OP_UPSERT, 0)}],  # out of order in a chunk
        [{("b", 1): (OP_UPSERT, 0)}, {("a", 1): (OP_UPSERT, 0)}],  # out of order across chunks
        [{("a", 1): (OP_UPSERT, 0)}, {("a", 1): (OP_DELETE, 0)}],  # a key twice in one run
    ],
)
def test_merge_runs_refuses_an_unsorted_run(chunks: list[Layer]) -> None:
    run = [_table(chunk, with_ops=True) for chunk in chunks]
    with pytest.raises(UnsortedRunError):
        list(merge_runs(SPEC, [run]))
