"""The functions of index expressions, defined once. Semantics (docs/indexes.md, "Functional indexes"):

- timestamps are UTC instants in microseconds; dates are days. Only values in 0001-01-01 ..
  9999-12-31 (the range Spark and Trino share) have a result: any other input gives NULL.
- NULL in, NULL out, for every function.
- `year`, `month`, `day`, `hour` (bigint) of a timestamp or date (hour of a date is 0).
- `date_format(ts, pattern)`: pattern in the Trino / MySQL `%` spelling, from the documented set
  `%Y %m %d %H %i %s %%`, other characters literal (no quote). Zero-padded, 4-digit years.
- `date_trunc(unit, t)`: the start of its second / minute / hour / day / week (Monday) / month /
  quarter / year, of the same type; the unit is a literal, written first as in Trino and Spark.
- `from_unixtime` = `to_timestamp` = `timestamp_seconds(bigint seconds)`, `timestamp_millis(bigint ms)`
  -> timestamp;
  `to_date(ts)` -> date (floor to the UTC day).
- `lower`, `upper`: Unicode simple case mapping per code point (Arrow's utf8proc tables;
  `upper('ß')` is `'ẞ'`, not `'SS'`). `substring(s, start, length)`: 1-based, in code points,
  start >= 1 and length >= 0 literals. `length(s)`: code points (bigint). `trim(s)`: leading and
  trailing spaces (U+0020) removed.
- `abs(x)`: bigint for integers (NULL for -2^63, where SQL fails), the same type for floats.
- `regexp_extract(s, pattern, group)`: the group (0: the whole match) of the first match, NULL
  without a match or when the group took no part in it (Trino's); the pattern is a literal in the
  subset every engine reads alike (`pruner.functions.regex_subset`).
- order: `monotonic` (non-decreasing: a <= b implies f(a) <= f(b), NULLs aside) for identity, year,
  to_date, date_trunc, the epoch functions and date_format patterns whose fields are a prefix of
  `%Y %m %d %H %i %s` in that order; `none` for all others. How a tree of calls, arithmetic and
  casts moves is derived from these (`pruner.functions.expression`).

Spark implementations exist for every function; where Spark has no built-in with the same values
(`lower` / `upper`: the JVM's full case mapping differs, `'ß'` -> `'SS'`), it runs the Arrow
implementation as an Arrow UDF (`arrow_udf`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from pruner.bounded import echo
from pruner.errors import InvalidInputError
from pruner.functions.regex_subset import check_pattern
from pruner.numeric import MAX_DAY, MAX_MICROS, MICROS_PER_SECOND, MIN_DAY, MIN_MICROS
from pruner.types import ColumnType, TypeKind

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn

MIN_SECONDS = MIN_MICROS // MICROS_PER_SECOND
MAX_SECONDS = MAX_MICROS // MICROS_PER_SECOND
MIN_MILLIS = MIN_MICROS // 1000
MAX_MILLIS = MAX_MICROS // 1000
INT64_MIN = -(2**63)
TS = ColumnType(TypeKind.TIMESTAMP)
DATE = ColumnType(TypeKind.DATE)
BIGINT = ColumnType(TypeKind.BIGINT)
STRING = ColumnType(TypeKind.STRING)
Literal = str | int


class Order(StrEnum):
    MONOTONIC = "monotonic"
    NONE = "none"


ArrowImpl = Callable[[pa.Array, tuple[Literal, ...]], pa.Array]
SparkImpl = Callable[["SparkColumn", ColumnType, tuple[Literal, ...]], "SparkColumn"]


@dataclass(frozen=True)
class Function:
    name: str
    sources: tuple[TypeKind, ...]  # the kinds of source column it accepts
    literals: tuple[type, ...]  # kinds of the literal arguments after the column
    result: Callable[[ColumnType], ColumnType]
    arrow: ArrowImpl
    spark: SparkImpl
    order: Callable[[tuple[Literal, ...]], Order]
    check: Callable[[tuple[Literal, ...]], None] = lambda args: None
    # How many of the literal arguments come before the value (`date_trunc('hour', ts)`: one).
    leading: int = 0
    # The literal arguments as the index's expression keeps them (`date_trunc`: the unit in lower case).
    canonical: Callable[[tuple[Literal, ...]], tuple[Literal, ...]] = lambda args: args

    def render(self, value: str, args: tuple[Literal, ...]) -> str:
        """The call as SQL text, its value argument already rendered."""
        rendered = [render_literal(arg) for arg in args]
        rendered.insert(self.leading, value)
        return f"{self.name}({', '.join(rendered)})"


def render_literal(value: Literal) -> str:
    """A literal argument as SQL: a quoted string (quotes doubled) or a decimal integer."""
    return "'" + value.replace("'", "''") + "'" if isinstance(value, str) else str(value)


# Arrow helpers -------------------------------------------------------------------------------
def _null_outside(values: pa.Array, result: pa.Array) -> pa.Array:
    """`result` with NULL wherever the temporal input lies outside 0001..9999."""
    if pa.types.is_date(values.type):
        raw = pc.cast(values, pa.int32())
        low, high = MIN_DAY, MAX_DAY
    else:
        raw = pc.cast(pc.cast(values, pa.timestamp("us", tz="UTC")), pa.int64())
        low, high = MIN_MICROS, MAX_MICROS
    inside = pc.and_(pc.greater_equal(raw, low), pc.less_equal(raw, high))
    return pc.if_else(inside, result, pa.nulls(len(result), result.type))


def _ts(values: pa.Array) -> pa.Array:
    if pa.types.is_date(values.type):
        return pc.cast(pc.cast(values, pa.timestamp("s")), pa.timestamp("us", tz="UTC"))
    return pc.cast(values, pa.timestamp("us", tz="UTC"))


def _field(kernel: Callable[[pa.Array], pa.Array]) -> ArrowImpl:
    def run(values: pa.Array, args: tuple[Literal, ...]) -> pa.Array:
        if len(values) == 0:
            return pa.array([], pa.int64())
        # Out-of-range values are replaced before the kernel so that it never overflows.
        safe = _null_outside(values, values)
        return pc.cast(kernel(_ts(safe)), pa.int64())

    return run


_PATTERN_FIELDS = {"Y": ("%Y", "yyyy"), "m": ("%m", "MM"), "d": ("%d", "dd")}
_PATTERN_FIELDS |= {"H": ("%H", "HH"), "i": ("%M", "mm"), "s": ("%S", "ss")}
_ORDERED = "YmdHis"


def _pattern_parts(pattern: str) -> list[tuple[str, str]]:
    """[(kind, text)]: kind "field" (text = the letter) or "literal"."""
    parts: list[tuple[str, str]] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "%":
            if i + 1 >= len(pattern):
                raise InvalidInputError(f"date_format pattern {pattern!r} ends with a lone %")
            letter = pattern[i + 1]
            if letter == "%":
                parts.append(("literal", "%"))
            elif letter in _PATTERN_FIELDS:
                parts.append(("field", letter))
            else:
                raise InvalidInputError(
                    f"date_format specifier %{letter} is not supported (supported: %Y %m %d %H %i %s %%)"
                )
            i += 2
        else:
            if char == "'":
                raise InvalidInputError("date_format patterns cannot contain a quote")
            parts.append(("literal", char))
            i += 1
    return parts


def _check_pattern(args: tuple[Literal, ...]) -> None:
    if not str(args[0]):
        raise InvalidInputError("date_format needs a non-empty pattern")
    _pattern_parts(str(args[0]))


def _date_format_arrow(values: pa.Array, args: tuple[Literal, ...]) -> pa.Array:
    parts = _pattern_parts(str(args[0]))
    arrow_format = "".join(
        _PATTERN_FIELDS[text][0] if kind == "field" else text.replace("%", "%%") for kind, text in parts
    )
    if len(values) == 0:
        return pa.array([], pa.string())
    safe = _null_outside(values, values)
    seconds = pc.cast(pc.floor_temporal(_ts(safe), unit="second"), pa.timestamp("s", tz="UTC"))
    return pc.strftime(seconds, format=arrow_format)


def _date_format_order(args: tuple[Literal, ...]) -> Order:
    letters = "".join(text for kind, text in _pattern_parts(str(args[0])) if kind == "field")
    return Order.MONOTONIC if letters and _ORDERED.startswith(letters) else Order.NONE


def _epoch_arrow(unit: str, low: int, high: int) -> ArrowImpl:
    """Epoch counts of `unit` ("s", "ms") as UTC timestamps, NULL outside 0001..9999."""

    def run(values: pa.Array, args: tuple[Literal, ...]) -> pa.Array:
        raw = pc.cast(values, pa.int64())
        inside = pc.and_(pc.greater_equal(raw, low), pc.less_equal(raw, high))
        safe = pc.if_else(inside, raw, pa.nulls(len(raw), pa.int64()))
        return pc.cast(pc.cast(safe, pa.timestamp(unit, tz="UTC")), pa.timestamp("us", tz="UTC"))

    return run


TRUNC_UNITS = ("second", "minute", "hour", "day", "week", "month", "quarter", "year")


def _check_unit(args: tuple[Literal, ...]) -> None:
    if not isinstance(args[0], str) or args[0].lower() not in TRUNC_UNITS:
        raise InvalidInputError(f"date_trunc takes a unit of {', '.join(TRUNC_UNITS)}; got {echo(args[0])}")


def _date_trunc_arrow(values: pa.Array, args: tuple[Literal, ...]) -> pa.Array:
    # Weeks start on Monday (ISO 8601), as in Trino and Spark.
    if len(values) == 0:
        return values
    safe = _null_outside(values, values)
    return pc.floor_temporal(_ts(safe), unit=str(args[0]).lower())


def _abs_arrow(values: pa.Array, args: tuple[Literal, ...]) -> pa.Array:
    if pa.types.is_floating(values.type):
        return pc.abs(values)
    raw = pc.cast(values, pa.int64())
    # |-2^63| is not a bigint: NULL, where SQL engines fail the query (no answer depends on it).
    overflow = pc.fill_null(pc.equal(raw, INT64_MIN), False)
    return pc.if_else(overflow, pa.nulls(len(raw), pa.int64()), pc.abs(raw))


def _to_date_arrow(values: pa.Array, args: tuple[Literal, ...]) -> pa.Array:
    safe = _null_outside(values, values)
    if pa.types.is_date(safe.type):
        return pc.cast(safe, pa.date32())
    return pc.cast(pc.floor_temporal(_ts(safe), unit="day"), pa.date32())


def _substring_arrow(values: pa.Array, args: tuple[Literal, ...]) -> pa.Array:
    start, length = int(args[0]), int(args[1])
    return pc.utf8_slice_codeunits(values, start - 1, start - 1 + length)


def _check_substring(args: tuple[Literal, ...]) -> None:
    if int(args[0]) < 1 or int(args[1]) < 0:
        raise InvalidInputError("substring(s, start, length) needs start >= 1 and length >= 0")


def _check_regexp_extract(args: tuple[Literal, ...]) -> None:
    groups = check_pattern(str(args[0]))
    if not 0 <= int(args[1]) <= groups:
        raise InvalidInputError(
            f"regexp_extract(s, {render_literal(args[0])}, {args[1]}): the pattern has {groups} "
            "group(s); the group is 0 (the whole match) to that"
        )


def _regexp_extract_arrow(values: pa.Array, args: tuple[Literal, ...]) -> pa.Array:
    """The group of the first match; NULL without a match or when the group took no part in it.
    Python's `re`, one value at a time: the pattern subset (`regex_subset`) means the same there as
    in every engine, which Arrow's RE2 kernel does not offer group by number."""
    pattern = _compiled(str(args[0]))
    group = int(args[1])
    out: list[str | None] = []
    for value in values.to_pylist():
        found = None if value is None else pattern.search(value)
        out.append(None if found is None else found.group(group))
    return pa.array(out, pa.string())


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


# Spark helpers (pyspark is imported lazily: the sidecar never loads it) ----------------------
def _spark_in_range(column: SparkColumn, source: ColumnType, result: SparkColumn) -> SparkColumn:
    from pyspark.sql import functions as F

    if source.kind is TypeKind.DATE:
        low, high = F.date_from_unix_date(F.lit(MIN_DAY)), F.date_from_unix_date(F.lit(MAX_DAY))
    else:
        low, high = F.timestamp_micros(F.lit(MIN_MICROS)), F.timestamp_micros(F.lit(MAX_MICROS))
    return F.when((column >= low) & (column <= high), result)


def _spark_field(name: str) -> SparkImpl:
    def run(column: SparkColumn, source: ColumnType, args: tuple[Literal, ...]) -> SparkColumn:
        from pyspark.sql import functions as F

        kernel = getattr(F, name)
        value = F.lit(0) if (name == "hour" and source.kind is TypeKind.DATE) else kernel(column)
        return _spark_in_range(column, source, value.cast(BIGINT.to_spark_ddl()))

    return run


def _date_format_spark(column: SparkColumn, source: ColumnType, args: tuple[Literal, ...]) -> SparkColumn:
    from pyspark.sql import functions as F

    java, literal = [], ""
    for kind, text in _pattern_parts(str(args[0])):
        if kind == "literal":
            literal += text
            continue
        if literal:
            java.append(f"'{literal}'")
            literal = ""
        java.append(_PATTERN_FIELDS[text][1])
    if literal:
        java.append(f"'{literal}'")
    return _spark_in_range(column, source, F.date_format(column, "".join(java)))


def _epoch_spark(name: str, low: int, high: int) -> SparkImpl:
    """Spark's `timestamp_seconds` / `timestamp_millis`, NULL outside 0001..9999."""

    def run(column: SparkColumn, source: ColumnType, args: tuple[Literal, ...]) -> SparkColumn:
        from pyspark.sql import functions as F

        count = column.cast(BIGINT.to_spark_ddl())
        inside = (count >= F.lit(low)) & (count <= F.lit(high))
        result: SparkColumn = F.when(inside, getattr(F, name)(count))
        return result

    return run


def _to_date_spark(column: SparkColumn, source: ColumnType, args: tuple[Literal, ...]) -> SparkColumn:
    from pyspark.sql import functions as F

    return _spark_in_range(column, source, F.to_date(column))


def _arrow_in_spark(arrow: ArrowImpl, result: Callable[[ColumnType], ColumnType]) -> SparkImpl:
    """The Arrow implementation itself, as a scalar Arrow UDF: for functions whose Spark built-in
    differs from the registry's on some inputs (the JVM's full case mapping: `'ß'` -> `'SS'`), or
    has no exact equivalent."""

    def run(column: SparkColumn, source: ColumnType, args: tuple[Literal, ...]) -> SparkColumn:
        from pyspark.sql.pandas.functions import arrow_udf

        def scalar(values: pa.Array) -> pa.Array:  # the hints make it a scalar Arrow UDF
            return pc.cast(arrow(values, args), result(source).to_arrow())

        # pyspark's stubs lack the type-hinted form, which its runtime prefers (no warning).
        udf = arrow_udf(scalar, result(source).to_spark_ddl())  # type: ignore[call-overload]
        spark_result: SparkColumn = udf(column)
        return spark_result

    return run


def _substring_spark(column: SparkColumn, source: ColumnType, args: tuple[Literal, ...]) -> SparkColumn:
    from pyspark.sql import functions as F

    return F.substring(column, int(args[0]), int(args[1]))


def _length_spark(column: SparkColumn, source: ColumnType, args: tuple[Literal, ...]) -> SparkColumn:
    from pyspark.sql import functions as F

    return F.length(column).cast(BIGINT.to_spark_ddl())


def _lower_arrow(values: pa.Array, args: tuple[Literal, ...]) -> pa.Array:
    return pc.utf8_lower(values)


def _upper_arrow(values: pa.Array, args: tuple[Literal, ...]) -> pa.Array:
    return pc.utf8_upper(values)


def _trim_arrow(values: pa.Array, args: tuple[Literal, ...]) -> pa.Array:
    return pc.utf8_trim(values, characters=" ")


def _abs_result(t: ColumnType) -> ColumnType:
    return t if t.kind.is_floating else BIGINT


def _same(t: ColumnType) -> ColumnType:
    return t


def _monotonic(args: tuple[Literal, ...]) -> Order:
    return Order.MONOTONIC


def _unordered(args: tuple[Literal, ...]) -> Order:
    return Order.NONE


_ANY = tuple(TypeKind)
_TEMPORAL = (TypeKind.TIMESTAMP, TypeKind.DATE)
_INTS = tuple(kind for kind in TypeKind if kind.is_integer)
_STRING = (TypeKind.STRING,)
_NUMBERS = tuple(kind for kind in TypeKind if kind.is_integer or kind.is_floating)

REGISTRY: dict[str, Function] = {
    f.name: f
    for f in [
        Function("identity", _ANY, (), _same, lambda v, a: v, lambda c, s, a: c, _monotonic),
        Function("year", _TEMPORAL, (), lambda t: BIGINT, _field(pc.year), _spark_field("year"), _monotonic),
        Function(
            "month", _TEMPORAL, (), lambda t: BIGINT, _field(pc.month), _spark_field("month"), _unordered
        ),
        Function(
            "day", _TEMPORAL, (), lambda t: BIGINT, _field(pc.day), _spark_field("dayofmonth"), _unordered
        ),
        Function("hour", _TEMPORAL, (), lambda t: BIGINT, _field(pc.hour), _spark_field("hour"), _unordered),
        Function(
            "date_format",
            _TEMPORAL,
            (str,),
            lambda t: STRING,
            _date_format_arrow,
            _date_format_spark,
            _date_format_order,
            _check_pattern,
        ),
        *(
            Function(
                name,
                _INTS,
                (),
                lambda t: TS,
                _epoch_arrow(unit, low, high),
                _epoch_spark(spark, low, high),
                _monotonic,
            )
            for name, unit, low, high, spark in [
                ("from_unixtime", "s", MIN_SECONDS, MAX_SECONDS, "timestamp_seconds"),
                ("to_timestamp", "s", MIN_SECONDS, MAX_SECONDS, "timestamp_seconds"),  # PostgreSQL's
                ("timestamp_seconds", "s", MIN_SECONDS, MAX_SECONDS, "timestamp_seconds"),
                ("timestamp_millis", "ms", MIN_MILLIS, MAX_MILLIS, "timestamp_millis"),
            ]
        ),
        Function(
            "date_trunc",
            _TEMPORAL,
            (str,),
            _same,
            _date_trunc_arrow,
            _arrow_in_spark(_date_trunc_arrow, _same),
            _monotonic,
            _check_unit,
            leading=1,
            canonical=lambda args: (str(args[0]).lower(),),
        ),
        Function("trim", _STRING, (), _same, _trim_arrow, _arrow_in_spark(_trim_arrow, _same), _unordered),
        Function(
            "abs", _NUMBERS, (), _abs_result, _abs_arrow, _arrow_in_spark(_abs_arrow, _abs_result), _unordered
        ),
        Function("to_date", _TEMPORAL, (), lambda t: DATE, _to_date_arrow, _to_date_spark, _monotonic),
        Function(
            "lower",
            _STRING,
            (),
            _same,
            _lower_arrow,
            _arrow_in_spark(_lower_arrow, _same),
            _unordered,
        ),
        Function(
            "upper",
            _STRING,
            (),
            _same,
            _upper_arrow,
            _arrow_in_spark(_upper_arrow, _same),
            _unordered,
        ),
        Function(
            "substring",
            _STRING,
            (int, int),
            _same,
            _substring_arrow,
            _substring_spark,
            _unordered,
            _check_substring,
        ),
        Function(
            "regexp_extract",
            _STRING,
            (str, int),
            _same,
            _regexp_extract_arrow,
            _arrow_in_spark(_regexp_extract_arrow, _same),
            _unordered,
            _check_regexp_extract,
        ),
        Function(
            "length",
            _STRING,
            (),
            lambda t: BIGINT,
            lambda v, a: pc.cast(pc.utf8_length(v), pa.int64()),
            _length_spark,
            _unordered,
        ),
    ]
}
