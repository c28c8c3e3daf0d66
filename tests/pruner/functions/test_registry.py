"""The registry without Spark: parsing, binding checks, and the order claims (monotonic functions
never decrease; NULLs aside)."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.errors import InvalidInputError
from pruner.functions import REGISTRY, Order, bind, parse_expression
from pruner.types import ColumnType

TS = ColumnType("timestamp")
TYPES = {"ts": TS, "s": ColumnType("string"), "n": ColumnType("bigint"), "d": ColumnType("date")}
instants = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)).map(
    lambda d: d.replace(tzinfo=UTC)
)


def test_parse_and_render() -> None:
    f = parse_expression("date_format(ts, '%Y-%m-%d')", TYPES)
    assert f.sql() == "date_format(ts, '%Y-%m-%d')"
    assert f.result_type == ColumnType("string")
    assert parse_expression("HOUR( ts )", TYPES).key() == ("hour", "ts", ())
    assert parse_expression("substring(s, 1, 3)", TYPES).args == (1, 3)


@pytest.mark.parametrize(
    "text",
    [
        "hour(s)",
        "nope(ts)",
        "hour(ts, 1)",
        "date_format(ts, '%Q')",
        "substring(s, 0, 2)",
        "substring(s, \uff11, 2)",  # full-width digit: `\\d` and int() would take it for 1
        "hour(lower(s))",
        "ts",
    ],
)
def test_rejects(text: str) -> None:
    with pytest.raises(InvalidInputError):
        parse_expression(text, TYPES)


def test_orders() -> None:
    monotonic = {
        n
        for n, f in REGISTRY.items()
        if f.order(("%Y",) if n == "date_format" else (1, 1)) == Order.MONOTONIC
    }
    assert monotonic == {"identity", "year", "date_format", "from_unixtime", "to_date"}
    assert bind("date_format", "ts", TS, ("%Y-%m-%d %H",)).order == Order.MONOTONIC
    assert bind("date_format", "ts", TS, ("%H:%i",)).order == Order.NONE
    assert bind("date_format", "ts", TS, ("%d/%m/%Y",)).order == Order.NONE


@settings(max_examples=200)
@given(st.lists(instants, min_size=2, max_size=30))
def test_monotonic_functions_never_decrease(values: list[datetime]) -> None:
    ordered = pa.array(sorted(values), pa.timestamp("us", tz="UTC"))
    for f in [
        bind("year", "ts", TS, ()),
        bind("to_date", "ts", TS, ()),
        bind("date_format", "ts", TS, ("%Y-%m-%d",)),
        bind("date_format", "ts", TS, ("%Y%m%d%H%i%s",)),
    ]:
        out = f.arrow(ordered).to_pylist()
        assert out == sorted(out)


@given(st.lists(st.integers(-(2**40), 2**40), min_size=2, max_size=30))
def test_from_unixtime_is_monotonic(values: list[int]) -> None:
    f = bind("from_unixtime", "n", ColumnType("bigint"), ())
    out = [v for v in f.arrow(pa.array(sorted(values), pa.int64())).to_pylist() if v is not None]
    assert out == sorted(out)
