"""Distinct-value sketches and data sizes (`pruner.index.sketches`): the union of files' sketches
estimates the distinct count of their values within the sketch's error bound however the values
are split into files, a value's sketch does not depend on the Arrow width a writer used, NULLs are
not values, and data sizes count the bytes of variable-width values."""

from __future__ import annotations

import itertools
import random
from datetime import date, datetime, timedelta
from decimal import Decimal

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.index import sketches
from pruner.types import ColumnType, parse_type

BIGINT = ColumnType("bigint")


@settings(max_examples=40, deadline=None)
@given(
    distinct=st.integers(0, 30_000),
    repeats=st.integers(1, 3),
    cuts=st.lists(st.floats(0, 1), max_size=6),
    seed=st.integers(0, 2**32),
)
def test_merged_files_estimate_the_distinct_count(
    distinct: int, repeats: int, cuts: list[float], seed: int
) -> None:
    values = list(range(-(distinct // 2), distinct - distinct // 2)) * repeats  # files share values
    random.Random(seed).shuffle(values)
    bounds = sorted({0, len(values), *(int(c * len(values)) for c in cuts)})
    files = [values[a:b] for a, b in itertools.pairwise(bounds)]
    estimate = sketches.estimate(sketches.sketch(pa.array(f, pa.int64()), BIGINT) for f in files)
    assert abs(estimate - distinct) <= sketches.relative_error() * distinct


def test_no_sketch_estimates_nothing() -> None:
    assert sketches.estimate([]) == 0.0
    assert sketches.estimate([sketches.sketch(pa.array([None, None], pa.int32()), ColumnType("int"))]) == 0.0


def _one_value_set(type_name: str, distinct: int, *arrays: pa.Array) -> None:
    """The arrays (each holding the same `distinct` values) sketch as one set of values."""
    column_type = parse_type(type_name)
    merged = sketches.estimate(sketches.sketch(a, column_type) for a in arrays)
    assert round(merged) == distinct, type_name


def test_a_value_sketches_alike_whatever_its_arrow_width() -> None:
    _one_value_set("bigint", 3, pa.array([1, -3, 7], pa.int8()), pa.array([7, 1, -3], pa.int64()))
    _one_value_set("boolean", 2, pa.array([True, False]), pa.array([False, True]))
    _one_value_set("double", 2, pa.array([0.5, 2.25], pa.float32()), pa.array([2.25, 0.5], pa.float64()))
    _one_value_set("double", 2, pa.array([0.0, float("nan")]), pa.array([-0.0, float("nan")]))
    _one_value_set(
        "decimal(12,4)",
        2,
        pa.array([Decimal("1.50"), Decimal("0.00")], pa.decimal128(10, 2)),
        pa.array([Decimal("1.5000"), Decimal("0")], pa.decimal128(12, 4)),
    )
    day = date(2024, 2, 29)
    _one_value_set("date", 1, pa.array([day], pa.date32()), pa.array([day], pa.date64()))
    instant = datetime(2024, 2, 29, 12, 30, 1)
    _one_value_set(
        "timestamp", 1, pa.array([instant], pa.timestamp("ms")), pa.array([instant], pa.timestamp("us"))
    )
    _one_value_set("string", 2, pa.array(["a", "b"]), pa.array(["b", "a"], pa.large_string()))
    _one_value_set("binary", 1, pa.array([b"\x00\xff"]), pa.array([b"\x00\xff"], pa.large_binary()))


def test_nulls_are_not_values() -> None:
    _one_value_set("bigint", 2, pa.array([1, None, 2, None]), pa.array([2, 1]))


def test_timestamps_a_microsecond_apart_are_two_values() -> None:
    instant = datetime(2024, 1, 1)
    values = pa.array([instant, instant + timedelta(microseconds=1)], pa.timestamp("us"))
    assert round(sketches.estimate([sketches.sketch(values, ColumnType("timestamp"))])) == 2


def test_data_size_counts_the_bytes_of_variable_width_values() -> None:
    assert sketches.data_size(pa.array(["é", None, "ab"]), ColumnType("string")) == 4
    assert sketches.data_size(pa.array([b"\x00", b""]), ColumnType("binary")) == 1
    assert sketches.data_size(pa.array([None], pa.string()), ColumnType("string")) == 0
    assert sketches.data_size(pa.array([1, 2]), BIGINT) is None


def test_a_dense_sketch_stays_small() -> None:
    """What one column of one file adds to a stats row at most (measured: 552 bytes)."""
    dense = sketches.sketch(pa.array(range(1_000_000)), BIGINT)
    assert len(dense) <= 600
