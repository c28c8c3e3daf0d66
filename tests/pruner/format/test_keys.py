"""pruner.format.keys: FNV-1a hashing, record key encoding and Hive partition paths."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.format.keys import (
    KEY_SEPARATOR,
    NULL_PARTITION,
    _fnv1a64_scalar,
    _fnv1a64_vectorised,
    bucket_of,
    buckets_of,
    encode_record_keys,
    fnv1a64,
    parse_partition_path,
    partition_paths,
)

MASK64 = (1 << 64) - 1


def reference_fnv1a64(text: str) -> int:
    h = 0xCBF29CE484222325
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * 0x100000001B3) & MASK64
    return h


def decode_composite(key: str) -> tuple[str, ...]:
    """Inverse of the composite encoding: split on the separator, then undo the escapes."""
    parts = []
    for escaped in key.split(KEY_SEPARATOR):
        out, i = [], 0
        while i < len(escaped):
            if escaped.startswith("\\\\", i):
                out.append("\\")
                i += 2
            elif escaped.startswith("\\u001f", i):
                out.append(KEY_SEPARATOR)
                i += 6
            else:
                assert escaped[i] != "\\", f"unescaped backslash in {key!r}"
                out.append(escaped[i])
                i += 1
        parts.append("".join(out))
    return tuple(parts)


def _string_table(rows: list[tuple[str, ...]], width: int) -> pa.Table:
    return pa.table({f"k{i}": pa.array([r[i] for r in rows], pa.string()) for i in range(width)})


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", 0xCBF29CE484222325), ("a", 0xAF63DC4C8601EC8C), ("foobar", 0x85944171F73967E8)],
)
def test_fnv1a64_published_vectors(text: str, expected: int) -> None:
    assert reference_fnv1a64(text) == expected
    assert int(fnv1a64(pa.array([text]))[0]) == expected


@settings(deadline=None)
@given(
    values=st.lists(st.one_of(st.none(), st.text(max_size=40)), max_size=30),
    layout=st.sampled_from(["string", "large_string", "chunked"]),
    data=st.data(),
)
def test_fnv1a64_matches_reference(values: list[str | None], layout: str, data: st.DataObject) -> None:
    # Slice out of a longer array so the input usually has a non-zero offset.
    prefix = data.draw(st.lists(st.text(max_size=5), max_size=3), label="prefix")
    suffix = data.draw(st.lists(st.text(max_size=5), max_size=3), label="suffix")
    full = [*prefix, *values, *suffix]
    array: pa.Array | pa.ChunkedArray
    if layout == "chunked":
        cut = data.draw(st.integers(0, len(values)), label="cut")
        array = pa.chunked_array([values[:cut], values[cut:]], pa.string())
    else:
        array = pa.array(full, getattr(pa, layout)()).slice(len(prefix), len(values))
        assert array.offset == len(prefix)
    expected = [reference_fnv1a64(v or "") for v in values]
    # `fnv1a64` picks a strategy by size; both must give the published function's hashes.
    for strategy in (fnv1a64, _fnv1a64_scalar, _fnv1a64_vectorised):
        hashes = strategy(array)
        assert hashes.dtype == np.uint64
        assert [int(h) for h in hashes] == expected


@settings(deadline=None)
@given(
    values=st.lists(st.one_of(st.none(), st.text(max_size=20)), max_size=30),
    num_buckets=st.integers(1, 1000),
)
def test_buckets_of_in_range_and_consistent(values: list[str | None], num_buckets: int) -> None:
    buckets = buckets_of(pa.array(values, pa.string()), num_buckets)
    assert buckets.dtype == np.int32
    assert [int(b) for b in buckets] == [reference_fnv1a64(v or "") % num_buckets for v in values]
    for value, bucket in zip(values, buckets, strict=True):
        if value is not None:
            assert bucket_of(value, num_buckets) == bucket


# Characters that matter to the escaping, plus a few that make escaped forms look alike.
key_text = st.text(alphabet=st.sampled_from(["\\", KEY_SEPARATOR, "u", "0", "1", "f", "a", "é"]), max_size=8)


@settings(deadline=None)
@given(st.integers(2, 3).flatmap(lambda w: st.lists(st.tuples(*[key_text] * w), min_size=1, max_size=20)))
def test_composite_key_encoding_is_injective(rows: list[tuple[str, ...]]) -> None:
    width = len(rows[0])
    keys = encode_record_keys(_string_table(rows, width), tuple(f"k{i}" for i in range(width))).to_pylist()
    assert len(set(keys)) == len(set(rows))
    for row, key in zip(rows, keys, strict=True):
        assert decode_composite(key) == row


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (("a\x1fb", "c"), ("a", "b\x1fc")),
        (("a\\", "b"), ("a", "\\b")),
        (("\x1f", ""), ("\\u001f", "")),
        (("\\", "\x1f"), ("\\\x1f", "")),
        (("", ""), ("\x1f", "")),
    ],
)
def test_composite_keys_that_naive_joining_would_confuse(
    left: tuple[str, str], right: tuple[str, str]
) -> None:
    keys = encode_record_keys(_string_table([left, right], 2), ("k0", "k1")).to_pylist()
    assert keys[0] != keys[1]


def test_composite_key_with_a_null_component_is_null() -> None:
    table = pa.table({"a": pa.array([1, None, 3], pa.int64()), "b": ["x", "y", None]})
    assert encode_record_keys(table, ("a", "b")).to_pylist() == [f"1{KEY_SEPARATOR}x", None, None]


@pytest.mark.parametrize(
    ("array", "expected"),
    [
        (pa.array([1, -2, None, 2**63 - 1], pa.int64()), ["1", "-2", None, str(2**63 - 1)]),
        (pa.array([7, -128], pa.int8()), ["7", "-128"]),
        (pa.array([date(2024, 2, 29), date(1, 1, 1)], pa.date32()), ["2024-02-29", "0001-01-01"]),
        (
            pa.array([Decimal("1.50"), Decimal("-0.05"), Decimal("12")], pa.decimal128(10, 2)),
            ["1.50", "-0.05", "12.00"],
        ),
        (
            pa.array(
                [datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC), datetime(1999, 12, 31, tzinfo=UTC)],
                pa.timestamp("us", tz="UTC"),
            ),
            ["2024-01-02T03:04:05.123456Z", "1999-12-31T00:00:00.000000Z"],
        ),
        (pa.array(["a\x1fb", "", None]), ["a\x1fb", "", None]),
    ],
    ids=["bigint", "tinyint", "date", "decimal", "timestamp", "string"],
)
def test_single_column_keys_are_the_value_as_string(array: pa.Array, expected: list[str | None]) -> None:
    keys = encode_record_keys(pa.table({"k": array}), ("k",))
    assert keys.type == pa.string()
    assert keys.to_pylist() == expected


def test_keys_of_chunked_columns() -> None:
    table = pa.table({"k": pa.chunked_array([[1, 2], [3]], pa.int32())})
    assert encode_record_keys(table, ("k",)).to_pylist() == ["1", "2", "3"]


partition_values = st.one_of(st.none(), st.text(max_size=20)).filter(lambda v: v != NULL_PARTITION)


@settings(deadline=None)
@given(st.lists(st.tuples(partition_values, partition_values), min_size=1, max_size=20))
def test_partition_paths_round_trip(rows: list[tuple[str | None, str | None]]) -> None:
    table = pa.table(
        {
            "region": pa.array([r[0] for r in rows], pa.string()),
            "city": pa.array([r[1] for r in rows], pa.string()),
        }
    )
    paths = partition_paths(table, ("region", "city")).to_pylist()
    for (region, city), path in zip(rows, paths, strict=True):
        assert path.count("/") == 1
        assert path.startswith("region=")
        assert parse_partition_path(path) == {"region": region, "city": city}


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ("a/b=c%d e", "p=a%2Fb%3Dc%25d%20e"),
        ("50%25", "p=50%2525"),
        ("köln", "p=köln"),
        ("", "p="),
        (None, f"p={NULL_PARTITION}"),
    ],
)
def test_partition_path_escaping(value: str | None, path: str) -> None:
    table = pa.table({"p": pa.array([value], pa.string())})
    assert partition_paths(table, ("p",)).to_pylist() == [path]
    assert parse_partition_path(path) == {"p": value}


def test_partition_paths_of_typed_columns() -> None:
    table = pa.table(
        {
            "n": pa.array([5, None], pa.int16()),
            "flag": pa.array([True, False]),
            "day": pa.array([date(2024, 1, 31), date(2024, 2, 1)]),
        }
    )
    assert partition_paths(table, ("n", "flag", "day")).to_pylist() == [
        "n=5/flag=true/day=2024-01-31",
        f"n={NULL_PARTITION}/flag=false/day=2024-02-01",
    ]


def test_unpartitioned_path_is_empty() -> None:
    table = pa.table({"a": [1, 2, 3]})
    assert partition_paths(table, ()).to_pylist() == ["", "", ""]
    assert parse_partition_path("") == {}
