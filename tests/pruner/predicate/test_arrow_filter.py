"""`row_filter` keeps exactly the rows `TupleDomain.matches` accepts, property-tested over every
column type with NULLs, NaN and infinities, and values inside and outside the data."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.predicate.arrow_filter import row_filter
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import is_nan
from pruner.types import TableSchema

SCHEMA = TableSchema.parse(
    "i bigint, d double, s string, m decimal(6,2), day date, ts timestamp, b boolean, bin binary"
)
POOLS: dict[str, list[Any]] = {
    "i": [-(2**63), -3, 0, 7, 2**63 - 1],
    "d": [-math.inf, -1.5, 0.0, 2.25, math.inf, math.nan],
    "s": ["", "a", "ab", "é", "zz"],
    "m": [Decimal("-10.00"), Decimal("0.01"), Decimal("3.50"), Decimal("9999.99")],
    "day": [date(1900, 1, 1), date(1970, 1, 1), date(2026, 3, 1)],
    "ts": [datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC)],
    "b": [False, True],
    "bin": [b"", b"\x00", b"\xff\x01"],
}


@st.composite
def domains(draw: st.DrawFn, pool: list[Any]) -> Domain:
    """A domain over `pool`; over a pool holding NaN (a double column), it may allow NaN."""
    made = draw(_domains(pool))
    if any(is_nan(v) for v in pool) and draw(st.booleans()):
        return Domain(made.values, made.null_allowed, nan_allowed=True)
    return made


@st.composite
def _domains(draw: st.DrawFn, pool: list[Any]) -> Domain:
    clean = sorted(v for v in pool if not is_nan(v))
    null_allowed = draw(st.booleans())
    kind = draw(st.sampled_from(["values", "range", "all", "none", "complement"]))
    if kind == "all":
        return Domain.of(SortedRangeSet.all(), null_allowed)
    if kind == "none":
        return Domain.of(SortedRangeSet.none(), null_allowed)
    if kind == "values":
        return Domain.multiple_values(draw(st.lists(st.sampled_from(clean), min_size=1)), null_allowed)
    a, b = sorted(draw(st.lists(st.sampled_from(clean), min_size=2, max_size=2)))
    low = None if draw(st.booleans()) and draw(st.booleans()) else a
    high = None if draw(st.booleans()) and draw(st.booleans()) else b
    built = Range.between(
        low, draw(st.booleans()) and low is not None, high, draw(st.booleans()) and high is not None
    )
    values = SortedRangeSet.of_ranges(built) if built is not None else SortedRangeSet.none()
    return Domain.of(values.complement() if kind == "complement" else values, null_allowed)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_filter_keeps_exactly_the_matching_rows(data: st.DataObject) -> None:
    rows = data.draw(
        st.lists(
            st.fixed_dictionaries({c: st.one_of(st.none(), st.sampled_from(p)) for c, p in POOLS.items()}),
            max_size=12,
        )
    )
    columns = data.draw(st.lists(st.sampled_from(list(POOLS)), min_size=1, max_size=3, unique=True))
    predicate = TupleDomain.with_domains({c: data.draw(domains(POOLS[c])) for c in columns})
    table = pa.Table.from_pylist(rows, schema=SCHEMA.to_arrow())
    expression = row_filter(predicate, SCHEMA)
    kept = table if expression is None else table.filter(expression)
    expected = [r for r in rows if predicate.matches(r)]
    assert _canonical(kept.to_pylist()) == _canonical(expected)


def test_none_keeps_nothing_and_all_keeps_everything() -> None:
    table = pa.Table.from_pylist([{"i": 1}, {"i": None}], schema=pa.schema([("i", pa.int64())]))
    assert table.filter(row_filter(TupleDomain.none(), SCHEMA)).num_rows == 0
    assert row_filter(TupleDomain.all(), SCHEMA) is None


def test_timestamps_compare_as_instants() -> None:
    instant = datetime(2026, 1, 1, tzinfo=UTC)
    table = pa.table(
        {"ts": pa.array([instant - timedelta(microseconds=1), instant], pa.timestamp("us", "UTC"))}
    )
    predicate = TupleDomain.with_domains({"ts": Domain.single_value(instant)})
    assert table.filter(row_filter(predicate, SCHEMA)).column("ts").to_pylist() == [instant]


def _canonical(rows: list[dict[str, Any]]) -> list[str]:
    def plain(v: Any) -> Any:
        return "nan" if is_nan(v) else v.isoformat() if isinstance(v, datetime) else v

    return sorted(repr(sorted((k, plain(v)) for k, v in r.items())) for r in rows)
