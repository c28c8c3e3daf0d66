"""The engine-parity cases: for each function of the registry (and the operators) and each engine
that hands the sidecar its own expressions — Trino's native catalog (expression trees,
`pruner.predicate.sql.trino`) and Spark (Catalyst's SQL text, `pruner.predicate.sql.spark`) — inputs
that are read as lakeprune SQL and inputs that are left out, and why. `test_trino.py` and
`test_spark.py` run every case; `scripts/engine_parity.py` renders the table in
docs/trino-presto.md from the same cases, so the table says what the tests check."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal

from pruner.predicate.sql.trino import Call, ColumnRef, Constant, TrinoExpression
from pruner.types import ColumnType, TableSchema, TypeKind

SCHEMA = TableSchema.parse(
    "id bigint, n int, x double, amount decimal(10,2), s string, ts timestamp, d date, epoch bigint"
)
_TYPES = {c.name: c.type for c in SCHEMA.columns}
BOOLEAN, BIGINT, DOUBLE = ColumnType("boolean"), ColumnType("bigint"), ColumnType("double")
STRING, DATE, TS = ColumnType("string"), ColumnType("date"), ColumnType("timestamp")
WIDER_DECIMAL = ColumnType(TypeKind.DECIMAL, 11, 2)

# The table's rows, in this order.
FUNCTIONS = (
    "NOT",
    "arithmetic `+ - * / %`",
    "CAST",
    "`year` `month` `day` `hour`",
    "`date_format`",
    "`date_trunc`",
    "`from_unixtime` `timestamp_seconds` `timestamp_millis`",
    "`to_date`",
    "`lower`",
    "`upper`",
    "`substring` `length`",
    "`trim`",
    "`abs`",
    "`regexp_extract`",
)


@dataclass(frozen=True)
class TrinoCase:
    """Trino's `tree` in a session at `time_zone`: read as `read`, or left out (None) with a
    reason holding `why`; `shape` is how a user writes it."""

    function: str
    shape: str
    tree: TrinoExpression
    read: str | None
    why: str = ""
    time_zone: str = "UTC"


@dataclass(frozen=True)
class SparkCase:
    """Catalyst's `text` in a session at `time_zone` (ANSI mode or not): read as `read` (the
    WHERE clause is `(read)`), or left out (None); `shape` is how a user writes it, and why."""

    function: str
    shape: str
    text: str
    read: str | None
    time_zone: str = "UTC"
    ansi: bool = True


def c(name: str) -> ColumnRef:
    return ColumnRef(name, _TYPES[name])


def k(value: object, kind: ColumnType = BIGINT) -> Constant:
    return Constant(value, kind)  # type: ignore[arg-type]


def text(value: str) -> Constant:
    return Constant(value, STRING)


def f(function: str, result: ColumnType, *arguments: TrinoExpression) -> Call:
    return Call(function, arguments, result)


def eq(left: TrinoExpression, right: TrinoExpression, op: str = "$equal") -> Call:
    return f(op, BOOLEAN, left, right)


HOUR = f("hour", BIGINT, c("ts"))
# Trino's from_unixtime takes a double: `from_unixtime(CAST(epoch AS double))`, in the session's zone
SECONDS = f("$cast", DOUBLE, c("epoch"))
EPOCH = f("from_unixtime", TS, SECONDS)
EPOCH_HOUR = 'HOUR(FROM_UNIXTIME("epoch"))'

TRINO = [
    TrinoCase("NOT", "`NOT (id = 2)`", f("$not", BOOLEAN, eq(c("id"), k(2))), 'NOT ("id" = 2)'),
    TrinoCase(
        "NOT",
        "`NOT (hour(ts) = 3)`",
        f("$not", BOOLEAN, eq(HOUR, k(3))),
        None,
        "a negated lower or time function",
    ),
    TrinoCase(
        "arithmetic `+ - * / %`",
        "`id + 1 = 5` (integers, doubles)",
        eq(f("$add", BIGINT, c("id"), k(1)), k(5)),
        '("id" + 1) = 5',
    ),
    TrinoCase(
        "arithmetic `+ - * / %`",
        "`-x = 1.5`",
        eq(f("$negate", DOUBLE, c("x")), k(1.5, DOUBLE)),
        "-(\"x\") = CAST('1.5' AS DOUBLE)",
    ),
    TrinoCase(
        "arithmetic `+ - * / %`",
        "`mod(id, 7) = 1` (the function, as `%`)",
        eq(f("mod", BIGINT, c("id"), k(7)), k(1)),
        '("id" % 7) = 1',
    ),
    TrinoCase(
        "arithmetic `+ - * / %`",
        "`amount + amount` (decimals, reals: other result types)",
        eq(f("$add", WIDER_DECIMAL, c("amount"), c("amount")), k(1)),
        None,
        "of other than integers",
    ),
    TrinoCase(
        "arithmetic `+ - * / %`",
        "`x % 2` (no index expression)",
        eq(f("$modulus", DOUBLE, c("x"), k(2.0, DOUBLE)), k(1.0, DOUBLE)),
        None,
        "$modulus of doubles",
    ),
    TrinoCase(
        "CAST",
        "`CAST(n AS bigint)` (wider integers, double)",
        eq(f("$cast", BIGINT, c("n")), k(5)),
        'CAST("n" AS BIGINT) = 5',
    ),
    TrinoCase(
        "CAST",
        "`CAST(ts AS date)`",
        eq(f("$cast", DATE, c("ts")), k(date(2026, 1, 2), DATE)),
        "CAST(\"ts\" AS DATE) = CAST('2026-01-02' AS DATE)",
    ),
    TrinoCase(
        "CAST",
        "`CAST(d AS timestamp(6) with time zone)` (Trino places it in the session's zone)",
        eq(f("$cast", TS, c("d")), k(datetime(2026, 1, 1, tzinfo=UTC), TS)),
        None,
        "$cast from date to timestamp",
    ),
    TrinoCase(
        "CAST",
        "`CAST(id AS integer)` (narrowing)",
        eq(f("$cast", ColumnType("int"), c("id")), k(1)),
        None,
        "$cast from bigint to int",
    ),
    TrinoCase(
        "`year` `month` `day` `hour`",
        "`hour(ts) < 3` of `timestamp(6) with time zone`, in UTC (NULL kept possible)",
        eq(HOUR, k(3), "$less_than"),
        '(HOUR("ts") < 3 OR HOUR("ts") IS NULL)',
    ),
    TrinoCase(
        "`year` `month` `day` `hour`",
        "`day_of_month(ts) = 3`",
        eq(f("day_of_month", BIGINT, c("ts")), k(3)),
        '(DAY("ts") = 3 OR DAY("ts") IS NULL)',
    ),
    TrinoCase(
        "`year` `month` `day` `hour`",
        "`year(d)` of a date (Trino pushes it as a TupleDomain)",
        eq(f("year", BIGINT, c("d")), k(2026)),
        None,
        "year of other than timestamp",
    ),
    TrinoCase(
        "`date_format`",
        "`date_format(ts, '%Y-%m-%d')` (`%Y %m %d %H %i %s %%`)",
        eq(f("date_format", STRING, c("ts"), text("%Y-%m-%d")), text("2026-01-02")),
        "(DATE_FORMAT(\"ts\", '%Y-%m-%d') = '2026-01-02' OR DATE_FORMAT(\"ts\", '%Y-%m-%d') IS NULL)",
    ),
    TrinoCase(
        "`date_format`",
        "`date_format(ts, '%W')` (other fields)",
        eq(f("date_format", STRING, c("ts"), text("%W")), text("x")),
        None,
        "date_format pattern",
    ),
    TrinoCase(
        "`date_trunc`",
        "`date_trunc('hour', ts) = TIMESTAMP '...'`",
        eq(f("date_trunc", TS, text("HOUR"), c("ts")), k(datetime(2026, 1, 2, 3, tzinfo=UTC), TS)),
        "(DATE_TRUNC('hour', \"ts\") = CAST('2026-01-02T03:00:00+00:00' AS TIMESTAMP) "
        "OR DATE_TRUNC('hour', \"ts\") IS NULL)",
    ),
    TrinoCase(
        "`from_unixtime` `timestamp_seconds` `timestamp_millis`",
        "`hour(from_unixtime(epoch))` of integer seconds, session zone UTC",
        eq(f("hour", BIGINT, EPOCH), k(3)),
        f"({EPOCH_HOUR} = 3 OR {EPOCH_HOUR} IS NULL)",
    ),
    TrinoCase(
        "`from_unixtime` `timestamp_seconds` `timestamp_millis`",
        "`hour(from_unixtime(epoch, 'UTC'))`, any session zone",
        eq(f("hour", BIGINT, f("from_unixtime", TS, SECONDS, text("UTC"))), k(3)),
        f"({EPOCH_HOUR} = 3 OR {EPOCH_HOUR} IS NULL)",
        time_zone="Europe/Paris",
    ),
    TrinoCase(
        "`from_unixtime` `timestamp_seconds` `timestamp_millis`",
        "`hour(from_unixtime(epoch))` in another session zone (the hour would be that zone's)",
        eq(f("hour", BIGINT, EPOCH), k(3)),
        None,
        "from_unixtime in the session's zone 'Europe/Paris'",
        time_zone="Europe/Paris",
    ),
    TrinoCase(
        "`from_unixtime` `timestamp_seconds` `timestamp_millis`",
        "`hour(from_unixtime(epoch))` from a connector that sends no zone",
        eq(f("hour", BIGINT, EPOCH), k(3)),
        None,
        "from_unixtime in the session's zone '(unknown)'",
        time_zone="",
    ),
    TrinoCase(
        "`from_unixtime` `timestamp_seconds` `timestamp_millis`",
        "`from_unixtime(epoch, 'Asia/Tokyo')`",
        eq(f("hour", BIGINT, f("from_unixtime", TS, SECONDS, text("Asia/Tokyo"))), k(3)),
        None,
        "from_unixtime in a zone other than UTC",
    ),
    TrinoCase(
        "`from_unixtime` `timestamp_seconds` `timestamp_millis`",
        "`from_unixtime(x)` of double seconds (the registry takes integers)",
        eq(f("hour", BIGINT, f("from_unixtime", TS, c("x"))), k(3)),
        None,
        "from_unixtime of other than integer seconds",
    ),
    TrinoCase(
        "`lower`",
        "`lower(s) IN ('a', 'b')` (`=` / IN; the connector sends only literals its JVM lowers as the index)",
        f("$in", BOOLEAN, f("lower", STRING, c("s")), f("$array", STRING, text("a"), text("b"))),
        "LOWER(\"s\") IN ('a', 'b')",
    ),
    TrinoCase(
        "`lower`",
        "`lower(s) < 'a'` (a row could sort inside Trino's range and outside the index's)",
        eq(f("lower", STRING, c("s")), text("a"), "$less_than"),
        None,
        "lower compared other than by =",
    ),
    TrinoCase(
        "`upper`",
        "`upper(s) = 'A'` (Trino keeps 'ß', the index makes 'ẞ')",
        eq(f("upper", STRING, c("s")), text("A")),
        None,
        "upper is not a function",
    ),
    TrinoCase(
        "`substring` `length`",
        "`substring(s, 1, 3)` (code points, from a positive start)",
        eq(f("substring", STRING, c("s"), k(1), k(3)), text("abc")),
        "SUBSTRING(\"s\", 1, 3) = 'abc'",
    ),
    TrinoCase(
        "`substring` `length`",
        "`length(s) IS NULL`",
        f("$is_null", BOOLEAN, f("length", BIGINT, c("s"))),
        'LENGTH("s") IS NULL',
    ),
    TrinoCase(
        "`substring` `length`",
        "`substring(s, -2)` (from the end)",
        eq(f("substring", STRING, c("s"), k(-2)), text("ab")),
        None,
        "positive start",
    ),
    TrinoCase(
        "`trim`",
        "`trim(s) = 'A'` (Trino's trims other white space too)",
        eq(f("trim", STRING, c("s")), text("A")),
        None,
        "trim is not a function",
    ),
    TrinoCase(
        "`abs`",
        "`abs(id) = 3` (integers, doubles)",
        eq(f("abs", BIGINT, c("id")), k(3)),
        'ABS("id") = 3',
    ),
    TrinoCase(
        "`regexp_extract`",
        "`regexp_extract(s, '^a([0-9]+)')` (the pattern subset engines read alike; NULL without a match)",
        eq(f("regexp_extract", STRING, c("s"), text("^a([0-9]+)")), text("a1")),
        "REGEXP_EXTRACT(\"s\", '^a([0-9]+)', 0) = 'a1'",
    ),
    TrinoCase(
        "`regexp_extract`",
        "`regexp_extract(s, 'a.b', 0)` (`.`, `$`, `\\d`, flags, ...)",
        eq(f("regexp_extract", STRING, c("s"), text("a.b"), k(0)), text("x")),
        None,
        "'.'",
    ),
]

# an exact decimal constant, read as such
TRINO_DECIMAL = TrinoCase(
    "",
    "",
    eq(c("amount"), k(Decimal("1.50"), _TYPES["amount"])),
    "\"amount\" = CAST('1.50' AS DECIMAL(10, 2))",
)

_EPOCH_TEXT = "CAST(from_unixtime(t.epoch, 'yyyy-MM-dd HH:mm:ss') AS TIMESTAMP)"

SPARK = [
    SparkCase("NOT", "`NOT (id = 2)`", "(NOT (t.id = 2L))", '(NOT ("id" = CAST(2 AS BIGINT)))'),
    SparkCase(
        "NOT",
        "`NOT (lower(s) = 'a')` (the JVM's and the index's case mappings differ: equality only)",
        "(NOT (lower(t.s) = 'a'))",
        None,
    ),
    SparkCase(
        "arithmetic `+ - * / %`",
        "`id % 7 = 1`, ANSI mode (Spark 4's default)",
        "((t.id % 7L) = 1L)",
        '(("id" % CAST(7 AS BIGINT)) = CAST(1 AS BIGINT))',
    ),
    SparkCase(
        "arithmetic `+ - * / %`",
        "`id + 1 = 5` without ANSI mode (Spark wraps overflow where the index holds NULL)",
        "((t.id + 1L) = 5L)",
        None,
        ansi=False,
    ),
    SparkCase(
        "CAST",
        "`CAST(id AS double) / 2 > 1` inside arithmetic or a call",
        "((CAST(t.id AS DOUBLE) / CAST(2 AS DOUBLE)) > 1.0D)",
        '((CAST("id" AS DOUBLE) / CAST(2 AS DOUBLE)) > CAST(1.0 AS DOUBLE))',
    ),
    SparkCase("CAST", "`CAST(id AS int) = 2` as a comparison's side", "(CAST(t.id AS INT) = 2)", None),
    SparkCase(
        "`year` `month` `day` `hour`",
        "`hour(ts) = 12`, UTC session",
        "(hour(t.ts) = 12)",
        '(HOUR("ts") = 12)',
    ),
    SparkCase(
        "`year` `month` `day` `hour`",
        "`year(ts)` (Catalyst's `year(CAST(ts AS DATE))`), UTC session",
        "(year(CAST(t.ts AS DATE)) = 2026)",
        '(YEAR("ts") = 2026)',
    ),
    SparkCase(
        "`year` `month` `day` `hour`",
        "`dayofmonth(d) = 2`",
        "(dayofmonth(t.d) = 2)",
        '(DAY("d") = 2)',
    ),
    SparkCase(
        "`year` `month` `day` `hour`",
        "`hour(ts)` in another session zone",
        "(hour(t.ts) = 12)",
        None,
        time_zone="America/New_York",
    ),
    SparkCase(
        "`date_format`",
        "`date_format(ts, 'yyyy-MM-dd HH:mm')` (Java fields `yyyy MM dd HH mm ss`)",
        "(date_format(t.ts, 'yyyy-MM-dd HH:mm') = '2026-01-01 10:00')",
        "(DATE_FORMAT(\"ts\", '%Y-%m-%d %H:%i') = '2026-01-01 10:00')",
    ),
    SparkCase(
        "`date_format`",
        "`date_format(ts, 'EEE')` (other fields, quotes in quotes)",
        "(date_format(t.ts, 'EEE') = 'Mon')",
        None,
    ),
    SparkCase(
        "`date_trunc`",
        "`date_trunc('HOUR', ts)`",
        "(date_trunc('HOUR', t.ts) = TIMESTAMP '2026-01-01 00:00:00')",
        None,
    ),
    SparkCase(
        "`from_unixtime` `timestamp_seconds` `timestamp_millis`",
        "`hour(timestamp_seconds(epoch))`, UTC session (NULL kept possible)",
        "(hour(timestamp_seconds(t.epoch)) = 3)",
        '(HOUR(TIMESTAMP_SECONDS("epoch")) = 3 OR HOUR(TIMESTAMP_SECONDS("epoch")) IS NULL)',
    ),
    SparkCase(
        "`from_unixtime` `timestamp_seconds` `timestamp_millis`",
        "`hour(timestamp_millis(epoch)) IN (3, 4)`",
        "(hour(timestamp_millis(t.epoch)) IN (3, 4))",
        '(HOUR(TIMESTAMP_MILLIS("epoch")) IN (3, 4) OR HOUR(TIMESTAMP_MILLIS("epoch")) IS NULL)',
    ),
    SparkCase(
        "`from_unixtime` `timestamp_seconds` `timestamp_millis`",
        "`hour(from_unixtime(epoch))` (Catalyst casts the string back to a timestamp), UTC session",
        f"(hour({_EPOCH_TEXT}) = 3)",
        f"({EPOCH_HOUR} = 3 OR {EPOCH_HOUR} IS NULL)",
    ),
    SparkCase(
        "`from_unixtime` `timestamp_seconds` `timestamp_millis`",
        "`from_unixtime(epoch) = '...'` (a string)",
        "(from_unixtime(t.epoch, 'yyyy-MM-dd HH:mm:ss') = '2026-03-01 03:00:00')",
        None,
    ),
    SparkCase(
        "`from_unixtime` `timestamp_seconds` `timestamp_millis`",
        "`NOT (hour(timestamp_seconds(epoch)) = 3)` (NULL kept possible: never negated)",
        "(NOT (hour(timestamp_seconds(t.epoch)) = 3))",
        None,
    ),
    SparkCase(
        "`from_unixtime` `timestamp_seconds` `timestamp_millis`",
        "`hour(from_unixtime(epoch))` in another session zone",
        f"(hour({_EPOCH_TEXT}) = 3)",
        None,
        time_zone="America/New_York",
    ),
    SparkCase(
        "`to_date`",
        "`to_date(ts) = DATE '...'`, UTC session",
        "(to_date(t.ts) = DATE '2026-01-01')",
        "(TO_DATE(\"ts\") = CAST('2026-01-01' AS DATE))",
    ),
    SparkCase(
        "`lower`",
        "`lower(s) IN ('ams', 'ber')` (`=` / IN)",
        "(lower(t.s) IN ('ams', 'ber'))",
        "(LOWER(\"s\") IN ('ams', 'ber'))",
    ),
    SparkCase(
        "`lower`",
        "`lower(s) = 'i\u0307'` (the JVM lowers U+0130 to i + U+0307; also final sigma)",
        "(lower(t.s) = 'i\u0307')",
        None,
    ),
    SparkCase("`lower`", "`lower(s) > 'ams'` (ranges)", "(lower(t.s) > 'ams')", None),
    SparkCase(
        "`lower`",
        "`lower(s) = 'Ams'` (not lower-case by the index's tables: only a letter newer than the JVM's"
        " would match it in Spark)",
        "(lower(t.s) = 'Ams')",
        None,
    ),
    SparkCase(
        "`upper`",
        "`upper(s) = 'AMS'` (`=` / IN, ASCII literals)",
        "(upper(t.s) = 'AMS')",
        "(UPPER(\"s\") = 'AMS')",
    ),
    SparkCase(
        "`upper`",
        "`upper(s) = 'STRASSE'` (the JVM makes 'SS' of 'ß', 'FI' of 'ﬁ' ...; the index 'ẞ', 'ﬁ')",
        "(upper(t.s) = 'STRASSE')",
        None,
    ),
    SparkCase("`upper`", "`upper(s) = 'ÉTÉ'` (non-ASCII)", "(upper(t.s) = 'ÉTÉ')", None),
    SparkCase(
        "`substring` `length`",
        "`substring(s, 1, 2) = 'am'`",
        "(substring(t.s, 1, 2) = 'am')",
        "(SUBSTRING(\"s\", 1, 2) = 'am')",
    ),
    SparkCase(
        "`substring` `length`",
        "`substring(s, id, 2)` (a computed start)",
        "(substring(t.s, t.id, 2) = 'am')",
        None,
    ),
    SparkCase("`trim`", "`trim(s) = 'a'`", "(trim(t.s) = 'a')", None),
    SparkCase("`abs`", "`abs(id) = 1`", "(abs(t.id) = 1L)", None),
    SparkCase(
        "`regexp_extract`",
        "`regexp_extract(s, '^x([0-9]+)', 1) IN ('a', 'b')` (`=` / IN of non-empty strings)",
        "(regexp_extract(t.s, '^x([0-9]+)', 1) IN ('a', 'b'))",
        "(REGEXP_EXTRACT(\"s\", '^x([0-9]+)', 1) IN ('a', 'b'))",
    ),
    SparkCase(
        "`regexp_extract`",
        "`regexp_extract(...) = ''`, ranges, NOT (Spark gives '' where the index has NULL)",
        "(regexp_extract(t.s, '^x([0-9]+)', 1) = '')",
        None,
    ),
    SparkCase(
        "`regexp_extract`",
        "`regexp_extract(s, 'x.y', 0)` (outside the pattern subset)",
        "(regexp_extract(t.s, 'x.y', 0) = 'x1y')",
        None,
    ),
]
