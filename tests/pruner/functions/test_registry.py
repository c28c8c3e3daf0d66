"""The registry without Spark: parsing, binding checks, and the order claims (monotonic functions
never decrease; NULLs aside)."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.errors import InvalidInputError
from pruner.functions import REGISTRY, Expression, Order, parse_expression
from pruner.types import ColumnType

TS = ColumnType("timestamp")
TYPES = {"ts": TS, "s": ColumnType("string"), "n": ColumnType("bigint"), "d": ColumnType("date")}
instants = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)).map(
    lambda d: d.replace(tzinfo=UTC)
)


def call(text: str) -> Expression:
    return parse_expression(text, TYPES)


def test_parse_and_render() -> None:
    f = call("date_format(ts, '%Y-%m-%d')")
    assert f.sql() == "date_format(ts, '%Y-%m-%d')"
    assert f.type == ColumnType("string")
    assert call("HOUR( ts )").key() == "hour(ts)"
    assert call("substring(s, 1, 3)").sql() == "substring(s, 1, 3)"
    assert call("date_trunc('Month', ts)").sql() == "date_trunc('month', ts)"
    assert call("abs(n)").type == ColumnType("bigint")


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
        "date_trunc('fortnight', ts)",
        "date_trunc(ts, 'hour')",
        "abs(s)",
        "trim(n)",
        "regexp_extract(s, 'a.c', 0)",  # '.': outside the subset every engine reads alike
        "regexp_extract(s, '(a)', 2)",  # no group 2
        "regexp_extract(s, '(a)')",
    ],
)
def test_rejects(text: str) -> None:
    with pytest.raises(InvalidInputError):
        call(text)


def test_orders() -> None:
    def args(name: str) -> tuple[str | int, ...]:
        return {"date_format": ("%Y",), "date_trunc": ("hour",)}.get(name, (1, 1))

    monotonic = {n for n, f in REGISTRY.items() if f.order(args(n)) == Order.MONOTONIC}
    assert monotonic == {
        "identity",
        "year",
        "date_format",
        "date_trunc",
        "from_unixtime",
        "to_timestamp",
        "timestamp_seconds",
        "timestamp_millis",
        "to_date",
    }
    assert call("date_format(ts, '%Y-%m-%d %H')").projects
    assert not call("date_format(ts, '%H:%i')").projects
    assert not call("date_format(ts, '%d/%m/%Y')").projects


@settings(max_examples=200)
@given(st.lists(instants, min_size=2, max_size=30))
def test_monotonic_functions_never_decrease(values: list[datetime]) -> None:
    ordered = {"ts": pa.array(sorted(values), pa.timestamp("us", tz="UTC"))}
    for text in [
        "year(ts)",
        "to_date(ts)",
        "date_format(ts, '%Y-%m-%d')",
        "date_format(ts, '%Y%m%d%H%i%s')",
        "date_trunc('week', ts)",
        "date_trunc('quarter', ts)",
    ]:
        out = call(text).arrow(ordered).to_pylist()
        assert out == sorted(out)


@given(st.lists(st.integers(-(2**50), 2**50), min_size=2, max_size=30))
def test_epoch_functions_are_monotonic(values: list[int]) -> None:
    ordered = {"n": pa.array(sorted(values), pa.int64())}
    for text in ["from_unixtime(n)", "timestamp_millis(n)"]:
        out = [v for v in call(text).arrow(ordered).to_pylist() if v is not None]
        assert out == sorted(out)


def test_regexp_extract_is_null_without_a_match_or_a_group() -> None:
    f = call("regexp_extract(s, '^([a-z]+)(-([0-9]+))?', 3)")
    values = pa.array(["ab-12x", "ab", "12", None, "é"])
    assert f.compute({"s": values}, 5).to_pylist() == ["12", None, None, None, None]
    whole = call("regexp_extract(s, '[0-9]+', 0)")
    assert whole.compute({"s": values}, 5).to_pylist() == ["12", None, "12", None, None]
