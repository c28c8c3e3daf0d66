"""pruner.planner.stats_eval: a Domain against min / max / count statistics. Properties over every
stats family, from stats computed by the real writer code (`file_stats`) on random files: never
False for a file holding a matching value (the invariant), exactly as precise as testing each
range on its own where bounds convert exactly (and never less safe where they do not), and cases
for exclusive ends, unbounded ends, unknown statistics and decimals that round to one double. A
100,000-value IN list is evaluated in one pass."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.index.stats import family, file_stats
from pruner.planner.stats_eval import _bound, might_match
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.values import Value, is_nan, normalize
from pruner.types import Column, ColumnType, TableSchema, parse_type

EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
# Column type -> values of that type (few distinct ones, so that files and ranges meet often).
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "bigint": st.integers(-6, 6),
    "boolean": st.booleans(),
    "double": st.sampled_from([-2.5, -1.0, -0.0, 0.0, 0.1, 1.0, 2.5, float("nan")]),
    "real": st.sampled_from([-1.0, 0.1, 0.5, 1.0, 3.0e38]),
    # Neighbours that round to one double, around an inexact (0.1) and an exact (0.5) one.
    "decimal(38,20)": st.sampled_from(
        [
            Decimal("0.1"),
            Decimal("0.10000000000000000001"),
            Decimal("0.09999999999999999999"),
            Decimal("0.5"),
            Decimal("0.49999999999999999999"),
            Decimal("0.50000000000000000001"),
            Decimal("-1"),
        ]
    ),
    "decimal(10,2)": st.decimals(
        Decimal("-3"), Decimal("3"), places=2, allow_nan=False, allow_infinity=False
    ),
    "string": st.text(alphabet="ab\u00e9\U0001f600", max_size=3),
    "date": st.dates(date(2024, 1, 1), date(2024, 1, 9)),
    "timestamp": st.integers(0, 8).map(lambda h: EPOCH + timedelta(hours=h)),
}


def reference(domain: Domain, column_type: ColumnType, stats: pa.Table) -> npt.NDArray[np.bool_]:
    """Each range tested on its own against every row (the evaluation before it was vectorised)."""
    nulls = stats["null_count"].to_numpy(zero_copy_only=False)
    values = stats["value_count"].to_numpy(zero_copy_only=False)
    ordinary = values - nulls - stats["nan_count"].to_numpy(zero_copy_only=False) > 0
    result = (nulls > 0) if domain.is_null_allowed() else np.zeros(stats.num_rows, dtype=bool)
    if domain.values.is_all():
        return np.asarray(result | (values - nulls > 0), dtype=bool)
    if domain.is_nan_allowed():
        result |= stats["nan_count"].to_numpy(zero_copy_only=False) > 0
    fam = family(column_type)
    low_stat, high_stat = stats[f"min_{fam}"], stats[f"max_{fam}"]
    for r in domain.values.ranges:
        ok = np.ones(stats.num_rows, dtype=bool)
        if r.high is not None:
            bound, exact = _bound(r.high, column_type, upper=True)
            compare = pc.less_equal if (r.high_inclusive or not exact) else pc.less
            ok &= pc.fill_null(compare(low_stat, pa.scalar(bound, low_stat.type)), True).to_numpy(
                zero_copy_only=False
            )
        if r.low is not None:
            bound, exact = _bound(r.low, column_type, upper=False)
            compare = pc.greater_equal if (r.low_inclusive or not exact) else pc.greater
            ok &= pc.fill_null(compare(high_stat, pa.scalar(bound, high_stat.type)), True).to_numpy(
                zero_copy_only=False
            )
        result |= ordinary & ok
    return result


def stats_of(type_name: str, files: list[list[Any]]) -> tuple[ColumnType, pa.Table]:
    column_type = parse_type(type_name)
    schema = TableSchema((Column("c", column_type),))
    tables = [
        file_stats(pa.table({"c": pa.array(rows, column_type.to_arrow())}), schema, ("c",), "", f"f{i}")
        for i, rows in enumerate(files)
    ]
    return column_type, pa.concat_tables(tables)


@st.composite
def ranges_of(draw: st.DrawFn, values: st.SearchStrategy[Value]) -> Range:
    low, high = draw(st.none() | values), draw(st.none() | values)
    if low is not None and high is not None and high < low:  # type: ignore[operator]
        low, high = high, low
    made = Range.between(low, draw(st.booleans()), high, draw(st.booleans()))
    if made is None:
        assert low is not None
        return Range.equal(low)
    return made


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, ColumnType, pa.Table, list[list[Any]], Domain]:
    type_name = draw(st.sampled_from(sorted(VALUES)))
    raw = VALUES[type_name]
    files = draw(st.lists(st.lists(st.none() | raw, max_size=5), min_size=1, max_size=6))
    column_type, stats = stats_of(type_name, files)
    bounds = raw.filter(lambda v: not is_nan(v)).map(lambda v: normalize(v, column_type))
    shapes = [
        st.lists(bounds, max_size=6).map(lambda vs: SortedRangeSet.of_values(*vs)),
        st.lists(ranges_of(bounds), max_size=4).map(lambda rs: SortedRangeSet.of_ranges(*rs)),
    ]
    if column_type.is_integer:  # a packed IN list, as the gRPC codec decodes one
        packed = st.lists(bounds, min_size=1, max_size=6).map(lambda vs: np.array(vs, dtype=np.int64))
        shapes.append(packed.map(SortedRangeSet.of_integers))
    values = draw(st.one_of(shapes))
    nan_allowed = column_type.kind.is_floating and draw(st.booleans())
    return type_name, column_type, stats, files, Domain(values, draw(st.booleans()), nan_allowed)


@settings(deadline=None, max_examples=400)
@given(cases())
def test_never_drops_a_matching_file_and_is_as_precise_as_each_range_alone(
    case: tuple[str, ColumnType, pa.Table, list[list[Any]], Domain],
) -> None:
    _, column_type, stats, files, domain = case
    result = might_match(domain, column_type, stats)
    for keep, rows in zip(result, files, strict=True):
        holds_a_match = any(
            domain.is_null_allowed() if v is None else domain.contains_value(normalize(v, column_type))
            for v in rows
        )
        assert keep or not holds_a_match, f"dropped a file of {rows} for {domain}"
    expected = reference(domain, column_type, stats)
    if family(column_type) == "double":
        assert np.all(result | ~expected)  # widened bounds keep at least as much
    else:
        assert result.tolist() == expected.tolist()


def _stats(type_name: str, bounds: list[tuple[Any, Any]]) -> tuple[ColumnType, pa.Table]:
    """One file per (min, max); `None` for an unknown bound."""
    column_type = parse_type(type_name)
    fam = family(column_type)
    rows = [
        {"value_count": 1, "null_count": 0, "nan_count": 0, f"min_{fam}": low, f"max_{fam}": high}
        for low, high in bounds
    ]
    arrow = pa.Table.from_pylist(rows)
    return column_type, arrow.cast(
        pa.schema(
            [
                pa.field("value_count", pa.int64()),
                pa.field("null_count", pa.int64()),
                pa.field("nan_count", pa.int64()),
                pa.field(f"min_{fam}", stats_type(fam)),
                pa.field(f"max_{fam}", stats_type(fam)),
            ]
        )
    )


def stats_type(fam: str) -> pa.DataType:
    from pruner.index.stats import FAMILY_TYPES

    return FAMILY_TYPES[fam]


def ints(*texts: str) -> Domain:
    """An int domain from interval notation, as in the range tests."""
    from tests.pruner.predicate.test_ranges import r

    return Domain.of(SortedRangeSet.of_ranges(*(r(t) for t in texts)), False)


FILES = [(0, 4), (5, 5), (6, 9), (10, 20), (None, 3), (30, None), (None, None)]


@pytest.mark.parametrize(
    ("domain", "expected"),
    [
        (ints("(4,5)"), [False, False, False, False, False, False, True]),
        (ints("[4,5)"), [True, False, False, False, False, False, True]),
        (ints("(4,5]"), [False, True, False, False, False, False, True]),
        (ints("(-inf,0)"), [False, False, False, False, True, False, True]),
        (ints("(20,+inf)"), [False, False, False, False, False, True, True]),
        (ints("(-inf,0]", "(20,25)"), [True, False, False, False, True, False, True]),
        (ints("5", "7", "21"), [False, True, True, False, False, False, True]),
        (ints("(9,10)"), [False, False, False, False, False, False, True]),
    ],
)
def test_ends_unbounded_ranges_and_unknown_statistics(domain: Domain, expected: list[bool]) -> None:
    column_type, stats = _stats("bigint", FILES)
    assert might_match(domain, column_type, stats).tolist() == expected


def test_decimals_that_round_to_one_double_keep_what_either_could_match() -> None:
    # 0.5 is exact as a double; 0.5 - 1e-20 is not and rounds to it, so its upper bound widens to
    # the next double up: the ranges' upper ends come out of order and must be widened to ascend.
    below, half = Decimal("0.49999999999999999999"), Decimal("0.5")
    above_half = float(np.nextafter(0.5, 1.0))
    column_type, stats = _stats(
        "decimal(38,20)", [(0.5, 0.5), (above_half, above_half), (0.0, 0.4), (0.6, 0.7)]
    )
    domain = Domain.multiple_values([below, half])
    assert reference(domain, column_type, stats).tolist() == [True, True, False, False]
    assert might_match(domain, column_type, stats).tolist() == [True, True, False, False]
    outside = Domain.of(SortedRangeSet.of_ranges(Range.less_than(below), Range.greater_than(half)), False)
    assert might_match(outside, column_type, stats).tolist() == [True, True, True, True]


def test_a_hundred_thousand_value_in_list() -> None:
    # Evaluated in one pass over the files (the per-range evaluation took ~10 s here): see
    # bench/notes/prune_latency.md for the timing.
    column_type, stats = _stats("bigint", [(i * 1000, i * 1000 + 999) for i in range(2000)])
    keep = might_match(Domain.multiple_values(range(1_000_000, 1_100_000)), column_type, stats)
    assert np.flatnonzero(keep).tolist() == list(range(1000, 1100))
