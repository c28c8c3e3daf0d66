"""pruner.metadata.lookup: hash lookups in merged buckets (absent, duplicate and NULL keys, every
secondary key type, multi-field keys, a hash field that is not the leading sort key, empty buckets,
size accounting), order-preserving search keys for decimals, footer range admission, and the
property that a lookup equals a plain filter of the bucket — on the scalar and the vectorised path,
and with a hash so poor that most values collide."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any
from unittest import mock

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.format.keys import value_hashes
from pruner.index import secondary
from pruner.metadata import lookup
from pruner.metadata.lookup import IndexedRows, admitted, search_key
from pruner.types import parse_type

VALUE, KEY = secondary.VALUE, secondary.KEY


def pairs(values: list[Any], value_type: pa.DataType) -> pa.Table:
    """Secondary-index rows, sorted by (value, key) as a merged bucket is; record keys `r<i>`."""
    table = pa.table(
        {VALUE: pa.array(values, value_type), KEY: [f"r{i:03d}" for i in range(len(values))]},
        schema=secondary.schema(value_type),
    )
    return table.sort_by([(VALUE, "ascending"), (KEY, "ascending")])


def plain_filter(rows: pa.Table, field: str, keys: pa.Array) -> pa.Table:
    return rows.filter(pc.is_in(rows.column(field), value_set=keys.cast(rows.schema.field(field).type)))


def found_keys(indexed: IndexedRows, keys: list[Any], key_type: pa.DataType) -> list[str]:
    return list(indexed.find(pa.array(keys, key_type)).column(KEY).to_pylist())


STRINGS = pairs(["b", "a", "c", "b", "a", "b"], pa.string())


def test_each_key_finds_its_whole_run_in_bucket_order() -> None:
    indexed = IndexedRows.build(STRINGS, VALUE)
    assert indexed.order is None  # the hash field leads the sort keys: no permutation needed
    assert found_keys(indexed, ["b"], pa.string()) == ["r000", "r003", "r005"]
    assert found_keys(indexed, ["c", "a"], pa.string()) == ["r001", "r004", "r002"]
    assert indexed.find(pa.array(["a", "b", "c"])).equals(STRINGS.combine_chunks())


def test_absent_keys_find_nothing() -> None:
    indexed = IndexedRows.build(STRINGS, VALUE)
    assert found_keys(indexed, ["0", "aa", "bb", "zzz"], pa.string()) == []
    assert found_keys(indexed, ["0", "c", "zzz"], pa.string()) == ["r002"]
    assert indexed.find(pa.array([], pa.string())).schema == STRINGS.schema


def test_duplicate_keys_count_once() -> None:
    indexed = IndexedRows.build(STRINGS, VALUE)
    assert found_keys(indexed, ["a", "a", "c", "a"], pa.string()) == ["r001", "r004", "r002"]


def test_null_keys_match_nothing() -> None:
    indexed = IndexedRows.build(STRINGS, VALUE)
    assert found_keys(indexed, [None], pa.string()) == []
    assert found_keys(indexed, [None, "c", None], pa.string()) == ["r002"]


def test_keys_of_another_type_are_cast_and_chunked_keys_accepted() -> None:
    indexed = IndexedRows.build(pairs([3, 1, 2, 3], pa.int64()), VALUE)
    assert found_keys(indexed, [3], pa.int32()) == ["r000", "r003"]
    assert indexed.find(pa.chunked_array([[1], [2]], pa.int64())).column(KEY).to_pylist() == ["r001", "r002"]


def test_an_empty_bucket() -> None:
    indexed = IndexedRows.build(secondary.schema(pa.string()).empty_table(), VALUE)
    assert indexed.find(pa.array(["a"])).num_rows == 0
    assert indexed.nbytes == indexed.rows.nbytes


TYPED = [
    ("tinyint", [3, -1, 3, 0], [3, 7], ["r000", "r002"]),
    ("bigint", [2**40, -(2**40), 5], [-(2**40)], ["r001"]),
    (
        "date",
        [dt.date(2024, 3, 1), dt.date(2023, 1, 1), dt.date(2024, 3, 1)],
        [dt.date(2024, 3, 1)],
        ["r000", "r002"],
    ),
    (
        "timestamp",
        [dt.datetime(2024, 1, 1, 12, 0, 0, 1), dt.datetime(2024, 1, 1, 12), dt.datetime(1969, 12, 31)],
        [dt.datetime(2024, 1, 1, 12), dt.datetime(1969, 12, 31)],
        ["r002", "r001"],
    ),
    ("boolean", [True, False, True, False, False], [False], ["r001", "r003", "r004"]),
    (
        "decimal(10,2)",
        [Decimal("1.50"), Decimal("-2.25"), Decimal("0.00"), Decimal("-0.01"), Decimal("1.50")],
        [Decimal("1.50"), Decimal("-0.01"), Decimal("9.99")],
        ["r003", "r000", "r004"],
    ),
    (
        "decimal(38,4)",
        [
            Decimal("12345678901234567890123456789012.3456"),
            Decimal("-1.0000"),
            Decimal("-98765432109876543210.1234"),
        ],
        [Decimal("-98765432109876543210.1234"), Decimal("12345678901234567890123456789012.3456")],
        ["r002", "r000"],
    ),
]


@pytest.mark.parametrize(("type_name", "values", "keys", "expected"), TYPED, ids=[t[0] for t in TYPED])
def test_secondary_key_types(type_name: str, values: list[Any], keys: list[Any], expected: list[str]) -> None:
    arrow_type = parse_type(type_name).to_arrow()
    rows = pairs(values, arrow_type)
    indexed = IndexedRows.build(rows, VALUE)
    # Arrow orders every indexable type, so a bucket sorted by value needs no permutation.
    assert indexed.order is None
    assert found_keys(indexed, keys, arrow_type) == expected
    assert indexed.find(pa.array(keys, arrow_type)).equals(
        plain_filter(rows, VALUE, pa.array(keys, arrow_type))
    )


def test_a_hash_field_that_is_not_the_leading_sort_key() -> None:
    # Like column_stats: sorted by (column, partition), hashed by partition.
    rows = pa.table({"column": ["a", "a", "b", "b", "c"], "partition": ["p2", "p1", "p2", "p0", "p1"]})
    indexed = IndexedRows.build(rows, "partition")
    assert indexed.order is not None
    assert indexed.find(pa.array(["p1", "p2"])).equals(rows.take([0, 1, 2, 4]))
    assert indexed.run_starts is not None
    parts = [indexed.values, indexed.order, indexed.run_starts, indexed.run_hashes, indexed.hash_runs]
    assert indexed.nbytes == rows.nbytes + sum(part.nbytes for part in parts)


def test_size_counts_the_sorted_copy_only_when_it_is_not_the_rows_column() -> None:
    strings = IndexedRows.build(STRINGS, VALUE)  # three runs of equal values
    assert strings.run_starts is not None and len(strings.run_hashes) == 3
    assert strings.nbytes == STRINGS.nbytes + 3 * (8 + 4) + 4 * 4
    unique = IndexedRows.build(pairs(["a", "b", "c", "d"], pa.string()), VALUE)
    assert unique.run_starts is None  # every run is one row: no run offsets kept
    assert unique.nbytes == unique.rows.nbytes + 4 * (8 + 4)


def test_a_hash_collision_never_returns_another_values_rows() -> None:
    # Every value hashes alike: each lookup meets every run and must compare values to tell them apart.
    def collide(values: pa.Array) -> np.ndarray:
        return np.zeros(len(values), dtype=np.uint64)

    with mock.patch.object(lookup, "value_hashes", collide):
        indexed = IndexedRows.build(STRINGS, VALUE)
        assert found_keys(indexed, ["b"], pa.string()) == ["r000", "r003", "r005"]
        assert found_keys(indexed, ["z"], pa.string()) == []
        many = pa.array(["c", "zz"] * 20)  # over the scalar path's key count: the vectorised path
        assert indexed.find(many).column(KEY).to_pylist() == ["r002"]


@settings(deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-(10**20), 10**20)), max_size=40), st.integers(0, 5))
def test_decimal_search_key_keeps_order_and_equality(unscaled: list[int | None], start: int) -> None:
    values = pa.array([None if u is None else Decimal(u).scaleb(-3) for u in unscaled], pa.decimal128(30, 3))
    values = values.slice(min(start, len(values)))  # an offset into the buffers
    keys = search_key(values)
    assert keys.is_null().equals(values.is_null())
    assert pc.sort_indices(keys).equals(pc.sort_indices(values))
    for i in range(len(values)):
        for j in range(len(values)):
            if values[i].is_valid and values[j].is_valid:
                assert (keys[i].as_py() < keys[j].as_py()) == (values[i].as_py() < values[j].as_py())


def test_admitted_ranges() -> None:
    minimums = pa.array(["a", "f", None, "m", "q"])
    maximums = pa.array(["c", "k", None, "p", "z"])
    assert admitted(minimums, maximums, pa.array(["b", "n", "n"])).tolist() == [
        True,
        False,
        True,
        True,
        False,
    ]
    assert admitted(minimums, maximums, pa.array(["c", "f"])).tolist() == [True, True, True, False, False]
    assert admitted(minimums, maximums, pa.array([None], pa.string())).tolist() == [False] * 5
    decimals = pa.array([Decimal("-5.00"), Decimal("1.00")], pa.decimal128(10, 2))
    assert admitted(decimals, decimals, pa.array([Decimal("-5.00")], pa.decimal128(10, 2))).tolist() == [
        True,
        False,
    ]


# The property: for any bucket and any keys, the lookup returns exactly the rows a filter would.

TYPES: dict[str, tuple[pa.DataType, st.SearchStrategy[Any]]] = {
    "string": (pa.string(), st.text(alphabet="ab\u00e9\U0001f600", max_size=3)),
    "bigint": (pa.int64(), st.integers(-5, 5)),
    "date": (pa.date32(), st.dates(dt.date(2024, 1, 1), dt.date(2024, 1, 8))),
    "decimal": (
        pa.decimal128(12, 2),
        st.decimals(Decimal("-3.00"), Decimal("3.00"), places=2, allow_nan=False, allow_infinity=False),
    ),
    "boolean": (pa.bool_(), st.booleans()),
}


@st.composite
def buckets_and_keys(draw: st.DrawFn) -> tuple[pa.Table, str, pa.Array]:
    arrow_type, values = TYPES[draw(st.sampled_from(sorted(TYPES)))]
    column = draw(st.lists(values, max_size=60))
    rows = pairs(column, arrow_type)
    field = VALUE
    if draw(st.booleans()):  # a hash field behind another key field, or rows in no order at all
        rows = rows.append_column("tag", pa.array(draw(st.permutations(range(rows.num_rows))), pa.int64()))
        rows = rows.sort_by([("tag", "ascending")]) if draw(st.booleans()) else rows
    keys = draw(st.lists(st.one_of(st.none(), values, st.sampled_from(column or [None])), max_size=12))
    return rows, field, pa.array(keys, arrow_type)


def _colliding_hashes(values: pa.Array) -> np.ndarray:
    return value_hashes(values) % np.uint64(3)


@pytest.mark.parametrize("few_keys", [0, 1000], ids=["vectorised", "scalar"])
@pytest.mark.parametrize("hashing", ["fnv", "colliding"])
@settings(deadline=None, max_examples=150)
@given(case=buckets_and_keys())
def test_lookup_equals_a_plain_filter(
    few_keys: int, hashing: str, case: tuple[pa.Table, str, pa.Array]
) -> None:
    rows, field, keys = case
    hashes = _colliding_hashes if hashing == "colliding" else value_hashes
    with mock.patch.object(lookup, "_FEW_KEYS", few_keys), mock.patch.object(lookup, "value_hashes", hashes):
        indexed = IndexedRows.build(rows, field)
        assert indexed.find(keys).equals(plain_filter(rows, field, keys.drop_null()).combine_chunks())
        positions = indexed.positions(keys)
    assert np.all(np.diff(positions) > 0)
