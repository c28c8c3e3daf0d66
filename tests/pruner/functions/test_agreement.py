"""Spark and Arrow implementations of every registry function agree on every value, NULLs and
edge cases included (negative epochs, the 0001 / 9999 boundaries, out-of-range inputs, unicode)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from pruner.functions.expression import Call, ColumnRef, Expression
from pruner.functions.parsing import parse_expression
from pruner.functions.registry import MAX_SECONDS, MIN_SECONDS, REGISTRY
from pruner.types import ColumnType

TS = ColumnType("timestamp")
EDGE_TS = [
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(1970, 1, 1, tzinfo=UTC),
    datetime(1582, 10, 10, 12, tzinfo=UTC),  # inside the Julian / Gregorian switch
    datetime(999, 3, 4, 5, 6, 7, tzinfo=UTC),
    None,
]
EDGE_STRINGS = ["", "abc", "ß", "İstanbul", "Σίσυφος", "ǅ", "ﬁ", "😀x😀", "a\u0301", None]
timestamps = st.one_of(
    st.none(),
    st.sampled_from(EDGE_TS),
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)).map(
        lambda d: d.replace(tzinfo=UTC)
    ),
)
dates = st.one_of(st.none(), st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31)))
strings = st.one_of(st.none(), st.sampled_from(EDGE_STRINGS), st.text(max_size=12))
seconds = st.one_of(
    st.none(),
    st.integers(MIN_SECONDS - 10, MAX_SECONDS + 10),
    st.sampled_from([MIN_SECONDS, MAX_SECONDS, MIN_SECONDS - 1, MAX_SECONDS + 1, 0, -1, 2**62, -(2**62)]),
)
millis = st.one_of(
    st.none(),
    st.integers(MIN_SECONDS * 1000 - 10, MAX_SECONDS * 1000 + 10),
    st.sampled_from([MIN_SECONDS * 1000, MAX_SECONDS * 1000 + 999, -1, 0, 2**62]),
)
CASES: list[tuple[str, str, tuple[Any, ...], Any]] = [
    ("identity", "bigint", (), st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1))),
    ("year", "timestamp", (), timestamps),
    ("month", "timestamp", (), timestamps),
    ("day", "timestamp", (), timestamps),
    ("hour", "timestamp", (), timestamps),
    ("year", "date", (), dates),
    ("hour", "date", (), dates),
    ("date_format", "timestamp", ("%Y-%m-%d",), timestamps),
    ("date_format", "timestamp", ("%Y%m%d %H:%i:%s %%",), timestamps),
    ("date_format", "date", ("%d/%m/%Y T%H",), dates),
    ("from_unixtime", "bigint", (), seconds),
    ("to_timestamp", "bigint", (), seconds),
    ("to_date", "timestamp", (), timestamps),
    ("lower", "string", (), strings),
    ("upper", "string", (), strings),
    ("substring", "string", (1, 3), strings),
    ("substring", "string", (2, 0), strings),
    ("substring", "string", (3, 100), strings),
    ("length", "string", (), strings),
    ("regexp_extract", "string", ("^([a-zß]+)([0-9]*)", 2), strings),
    ("date_trunc", "timestamp", ("hour",), timestamps),
    ("date_trunc", "timestamp", ("week",), timestamps),
    ("date_trunc", "date", ("quarter",), dates),
    ("trim", "string", (), st.one_of(strings, st.text(alphabet=" \tab", max_size=8))),
    ("abs", "bigint", (), st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1), st.just(-(2**63)))),
    ("abs", "double", (), st.one_of(st.none(), st.floats(allow_nan=False))),
    ("timestamp_millis", "bigint", (), millis),
]


def bind(name: str, column: str, source: ColumnType, args: tuple[Any, ...]) -> Expression:
    """The registry call `name(column, args)`."""
    return Call(REGISTRY[name], ColumnRef(column, source), args)


def _spark_values(spark: SparkSession, function: Expression, values: pa.Array) -> list[Any]:
    frame = spark.createDataFrame(pa.table({"x": values}))
    result = frame.select(function.spark(lambda name: frame[name]).alias("y")).toArrow()
    return [function_cast(v) for v in result.column("y").to_pylist()]


def function_cast(value: Any) -> Any:
    if isinstance(value, datetime) and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


@pytest.mark.parametrize(("name", "source", "args", "strategy"), CASES, ids=lambda c: str(c)[:20])
def test_spark_and_arrow_agree(
    spark: SparkSession, name: str, source: str, args: tuple[Any, ...], strategy: Any
) -> None:
    function = bind(name, "x", ColumnType(source), args)

    @settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(strategy, min_size=1, max_size=120))
    def check(values: list[Any]) -> None:
        if source == "timestamp":
            values = [*values, *EDGE_TS]
        if source == "string":
            values = [*values, *EDGE_STRINGS]
        column = pa.array(values, ColumnType(source).to_arrow())
        expected = [function_cast(v) for v in function.arrow({"x": column}).to_pylist()]
        assert _spark_values(spark, function, column) == expected

    check()


@pytest.mark.parametrize(
    ("text", "source", "strategy"),
    [
        ("lower(substring(x, 1, 3))", "string", strings),
        ("hour(from_unixtime(x / 1000))", "bigint", millis),
        ("3 * x - 7", "bigint", st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1))),
    ],
)
def test_spark_computes_trees_as_arrow(spark: SparkSession, text: str, source: str, strategy: Any) -> None:
    expression = parse_expression(text, {"x": ColumnType(source)})

    @settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(strategy, min_size=1, max_size=60))
    def check(values: list[Any]) -> None:
        column = pa.array(values, ColumnType(source).to_arrow())
        expected = [function_cast(v) for v in expression.arrow({"x": column}).to_pylist()]
        assert _spark_values(spark, expression, column) == expected

    check()


def test_out_of_range_timestamps_give_null() -> None:
    raw = pa.array([-(2**62), 2**62, 0], pa.int64()).cast(pa.timestamp("us", tz="UTC"))
    assert bind("hour", "x", TS, ()).arrow({"x": raw}).to_pylist() == [None, None, 0]
    assert bind("date_format", "x", TS, ("%Y",)).arrow({"x": raw}).to_pylist() == [None, None, "1970"]


def test_negative_epochs_floor() -> None:
    ts = pa.array([datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=UTC)], pa.timestamp("us", tz="UTC"))
    assert bind("to_date", "x", TS, ()).arrow({"x": ts}).to_pylist() == [date(1969, 12, 31)]
    assert bind("date_format", "x", TS, ("%H:%i:%s",)).arrow({"x": ts}).to_pylist() == ["23:59:59"]
    assert bind("from_unixtime", "x", ColumnType("bigint"), ()).value(x=-1) == datetime(
        1970, 1, 1, tzinfo=UTC
    ) - timedelta(seconds=1)
