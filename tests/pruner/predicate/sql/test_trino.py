"""pruner.predicate.sql.trino: Trino's expression trees as lakeprune SQL. What means the same in
Trino and in the registry is rewritten (comparisons, IN, arithmetic over integers and doubles, the
casts the registry has, time functions on timestamps with NULL kept possible, string functions);
everything else is left out with its reason, never approximated."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest

from pruner.predicate.sql import translate
from pruner.predicate.sql.trino import Call, ColumnRef, Constant, TrinoExpression, from_trino, translate_trino
from pruner.types import ColumnType, TableSchema, TypeKind

SCHEMA = TableSchema.parse(
    "id bigint, n int, x double, amount decimal(10,2), s string, ts timestamp, d date, epoch bigint"
)
T = {c.name: c.type for c in SCHEMA.columns}
BOOLEAN, BIGINT, DOUBLE = ColumnType("boolean"), ColumnType("bigint"), ColumnType("double")
STRING, DATE, TS = ColumnType("string"), ColumnType("date"), ColumnType("timestamp")
DECIMAL, WIDER = T["amount"], ColumnType(TypeKind.DECIMAL, 11, 2)


def c(name: str) -> ColumnRef:
    return ColumnRef(name, T[name])


def k(value: object, kind: ColumnType | str = BIGINT) -> Constant:
    return Constant(value, STRING if kind == "x" else kind)  # type: ignore[arg-type]


def f(function: str, result: ColumnType, *arguments: TrinoExpression) -> Call:
    return Call(function, arguments, result)


def eq(left: TrinoExpression, right: TrinoExpression, op: str = "$equal") -> Call:
    return f(op, BOOLEAN, left, right)


HOUR = f("hour", BIGINT, c("ts"))
# Trino's from_unixtime takes a double: `from_unixtime(CAST(epoch AS double))`, in the session's zone
EPOCH_SECONDS = f("$cast", DOUBLE, c("epoch"))


@pytest.mark.parametrize(
    ("tree", "sql"),
    [
        (eq(f("$add", BIGINT, c("id"), k(1)), k(5)), '("id" + 1) = 5'),
        (eq(f("$cast", BIGINT, c("n")), k(5)), 'CAST("n" AS BIGINT) = 5'),
        (
            eq(f("$cast", DATE, c("ts")), k(date(2026, 1, 2), DATE)),
            "CAST(\"ts\" AS DATE) = CAST('2026-01-02' AS DATE)",
        ),
        (eq(HOUR, k(3), "$less_than"), '(HOUR("ts") < 3 OR HOUR("ts") IS NULL)'),
        (eq(f("day_of_month", BIGINT, c("ts")), k(3)), '(DAY("ts") = 3 OR DAY("ts") IS NULL)'),
        (
            f(
                "$in",
                BOOLEAN,
                f("lower", STRING, c("s")),
                f("$array", STRING, k("a", STRING), k("b", STRING)),
            ),
            "LOWER(\"s\") IN ('a', 'b')",
        ),
        (eq(f("substring", STRING, c("s"), k(1), k(3)), k("abc", STRING)), "SUBSTRING(\"s\", 1, 3) = 'abc'"),
        (eq(f("$negate", DOUBLE, c("x")), k(1.5, DOUBLE)), "-(\"x\") = CAST('1.5' AS DOUBLE)"),
        (
            eq(c("amount"), k(Decimal("1.50"), DECIMAL)),
            "\"amount\" = CAST('1.50' AS DECIMAL(10, 2))",
        ),
        (
            eq(f("date_trunc", TS, k("HOUR", STRING), c("ts")), k(datetime(2026, 1, 2, 3, tzinfo=UTC), TS)),
            "(DATE_TRUNC('hour', \"ts\") = CAST('2026-01-02T03:00:00+00:00' AS TIMESTAMP) "
            "OR DATE_TRUNC('hour', \"ts\") IS NULL)",
        ),
        (f("$is_null", BOOLEAN, f("length", BIGINT, c("s"))), 'LENGTH("s") IS NULL'),
        (f("$not", BOOLEAN, eq(c("id"), k(2))), 'NOT ("id" = 2)'),
        (
            eq(f("regexp_extract", STRING, c("s"), k("^a([0-9]+)", STRING)), k("a1", STRING)),
            "REGEXP_EXTRACT(\"s\", '^a([0-9]+)', 0) = 'a1'",
        ),
    ],
)
def test_what_means_the_same_is_rewritten(tree: Call, sql: str) -> None:
    filters = from_trino([tree])
    assert filters.dropped == ()
    assert filters.conjuncts == (sql,)
    translate(sql, SCHEMA)  # lakeprune reads it back


@pytest.mark.parametrize(
    ("tree", "reason"),
    [
        (eq(f("upper", STRING, c("s")), k("A", STRING)), "upper is not a function"),
        (eq(f("trim", STRING, c("s")), k("A", STRING)), "trim is not a function"),
        (eq(f("lower", STRING, c("s")), k("a", STRING), "$less_than"), "lower compared other than by ="),
        (f("$not", BOOLEAN, eq(HOUR, k(3))), "a negated lower or time function"),
        (eq(f("$modulus", DOUBLE, c("x"), k(2.0, DOUBLE)), k(1.0, DOUBLE)), "$modulus of doubles"),
        (
            eq(f("$add", WIDER, c("amount"), c("amount")), k(1)),
            "of other than integers",
        ),
        (eq(f("$cast", TS, c("d")), k(datetime(2026, 1, 1, tzinfo=UTC), TS)), "$cast from date to timestamp"),
        (eq(f("$cast", ColumnType("int"), c("id")), k(1)), "$cast from bigint to int"),
        (eq(f("date_format", STRING, c("ts"), k("%W", STRING)), k("x", STRING)), "date_format pattern"),
        (eq(f("substring", STRING, c("s"), k(-2)), k("ab", STRING)), "positive start"),
        (eq(f("year", BIGINT, c("d")), k(2026)), "year of other than timestamp"),
        (f("$like", BOOLEAN, c("s"), k("%a%", STRING)), "$like is not a condition"),
        (c("s"), "not a condition"),
        (eq(f("regexp_extract", STRING, c("s"), k("a.b", STRING), k(0)), k("x", STRING)), "'.'"),
    ],
)
def test_what_may_differ_is_left_out_with_its_reason(tree: TrinoExpression, reason: str) -> None:
    filters = from_trino([tree])
    assert filters.conjuncts == ()
    assert len(filters.dropped) == 1 and reason in filters.dropped[0], filters.dropped


@pytest.mark.parametrize(
    ("zone", "arguments", "read"),
    [
        ("UTC", (EPOCH_SECONDS,), True),
        ("Etc/UTC", (EPOCH_SECONDS,), True),
        ("Europe/Paris", (EPOCH_SECONDS,), False),  # hour() would be Paris's hour
        ("", (EPOCH_SECONDS,), False),  # an older connector: the zone is unknown
        ("Europe/Paris", (EPOCH_SECONDS, k("UTC", STRING)), True),  # the zone written in
        ("UTC", (EPOCH_SECONDS, k("Asia/Tokyo", STRING)), False),
        ("UTC", (c("x"),), False),  # double seconds: the registry takes integers
    ],
)
def test_from_unixtime_is_read_where_its_zone_is_utc(
    zone: str, arguments: tuple[TrinoExpression, ...], read: bool
) -> None:
    hour = f("hour", BIGINT, f("from_unixtime", TS, *arguments))
    filters = from_trino([eq(hour, k(3))], time_zone=zone)
    if read:
        sql = 'HOUR(FROM_UNIXTIME("epoch"))'
        assert filters.conjuncts == (f"({sql} = 3 OR {sql} IS NULL)",)  # NULL outside 0001..9999
        translate(filters.conjuncts[0], SCHEMA)
    else:
        assert filters.conjuncts == () and len(filters.dropped) == 1


def test_each_conjunct_stands_alone() -> None:
    unbound = eq(c("d"), k("someday", STRING))  # not a date: that conjunct alone is left out
    translation = translate_trino([unbound, eq(c("id"), k(7)), eq(c("id"), k(7))], SCHEMA, {})
    assert translation.domain == translate('"id" = 7', SCHEMA).domain
    assert any("not bound" in note for note in translation.widened)


def test_a_computed_value_that_no_index_holds_is_left_out_before_it_is_rendered() -> None:
    # TPC-DS q8's `substr(ca_zip, 1, 5) IN (400 zips)` on a table without an index on it
    zips = f("$array", STRING, *(k(f"{10_000 + i}", STRING) for i in range(400)))
    conjunct = f("$in", BOOLEAN, f("substring", STRING, c("s"), k(1), k(5)), zips)
    translation = translate_trino([conjunct, eq(c("id"), k(7))], SCHEMA, {})
    assert translation.domain == translate('"id" = 7', SCHEMA).domain
    (note,) = translation.widened
    assert 'no index on SUBSTRING("s", 1, 5)' in note and len(note) < 500
