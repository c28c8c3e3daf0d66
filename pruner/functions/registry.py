"""Functions of functional indexes, defined once. Semantics (docs/indexes.md, "Functional indexes"):

- timestamps are UTC instants in microseconds; dates are days. Only values in 0001-01-01 ..
  9999-12-31 (the range Spark and Trino share) have a result: any other input gives NULL.
- NULL in, NULL out, for every function.
- `year`, `month`, `day`, `hour` (bigint) of a timestamp or date (hour of a date is 0).
- `date_format(ts, pattern)`: pattern in the Trino / MySQL `%` spelling, from the documented set
  `%Y %m %d %H %i %s %%`, other characters literal (no quote). Zero-padded, 4-digit years.
- `from_unixtime(bigint seconds)` -> timestamp; `to_date(ts)` -> date (floor to the UTC day).
- `lower`, `upper`: Unicode simple case mapping per code point (Arrow's utf8proc tables;
  `upper('ß')` is `'ẞ'`, not `'SS'`). `substring(s, start, length)`: 1-based, in code points,
  start >= 1 and length >= 0 literals. `length(s)`: code points (bigint).
- order: `monotonic` (non-decreasing: a <= b implies f(a) <= f(b), NULLs aside) for identity, year,
  to_date, from_unixtime and date_format patterns whose fields are a prefix of `%Y %m %d %H %i %s`
  in that order; `none` for all others. Only monotonic functions project source-column ranges.

Spark implementations exist for every function; `lower` / `upper` run the Arrow kernel in a pandas
UDF (`arrow_udf`) because the JVM's full case mapping differs (`'ß'` -> `'SS'`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pruner.bounded import echo
from pruner.errors import InvalidInputError
from pruner.numeric import MAX_DAY, MAX_MICROS, MICROS_PER_SECOND, MIN_DAY, MIN_MICROS
from pruner.types import ColumnType, TypeKind

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn

MIN_SECONDS = MIN_MICROS // MICROS_PER_SECOND
MAX_SECONDS = MAX_MICROS // MICROS_PER_SECOND
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


def _from_unixtime_arrow(values: pa.Array, args: tuple[Literal, ...]) -> pa.Array:
    raw = pc.cast(values, pa.int64())
    inside = pc.and_(pc.greater_equal(raw, MIN_SECONDS), pc.less_equal(raw, MAX_SECONDS))
    safe = pc.if_else(inside, raw, pa.nulls(len(raw), pa.int64()))
    return pc.cast(pc.cast(safe, pa.timestamp("s", tz="UTC")), pa.timestamp("us", tz="UTC"))


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


def _from_unixtime_spark(column: SparkColumn, source: ColumnType, args: tuple[Literal, ...]) -> SparkColumn:
    from pyspark.sql import functions as F

    seconds = column.cast(BIGINT.to_spark_ddl())
    inside = (seconds >= F.lit(MIN_SECONDS)) & (seconds <= F.lit(MAX_SECONDS))
    return F.when(inside, F.timestamp_seconds(seconds))


def _to_date_spark(column: SparkColumn, source: ColumnType, args: tuple[Literal, ...]) -> SparkColumn:
    from pyspark.sql import functions as F

    return _spark_in_range(column, source, F.to_date(column))


def _case_spark(kernel: Callable[[pa.Array], pa.Array]) -> SparkImpl:
    def run(column: SparkColumn, source: ColumnType, args: tuple[Literal, ...]) -> SparkColumn:
        from pyspark.sql.pandas.functions import arrow_udf

        def scalar(values: pa.Array) -> pa.Array:  # the hints make it a scalar Arrow UDF
            return kernel(values)

        # pyspark's stubs lack the type-hinted form, which its runtime prefers (no warning).
        udf = arrow_udf(scalar, STRING.to_spark_ddl())  # type: ignore[call-overload]
        result: SparkColumn = udf(column)
        return result

    return run


def _substring_spark(column: SparkColumn, source: ColumnType, args: tuple[Literal, ...]) -> SparkColumn:
    from pyspark.sql import functions as F

    return F.substring(column, int(args[0]), int(args[1]))


def _length_spark(column: SparkColumn, source: ColumnType, args: tuple[Literal, ...]) -> SparkColumn:
    from pyspark.sql import functions as F

    return F.length(column).cast(BIGINT.to_spark_ddl())


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
        Function(
            "from_unixtime", _INTS, (), lambda t: TS, _from_unixtime_arrow, _from_unixtime_spark, _monotonic
        ),
        Function("to_date", _TEMPORAL, (), lambda t: DATE, _to_date_arrow, _to_date_spark, _monotonic),
        Function(
            "lower",
            _STRING,
            (),
            _same,
            lambda v, a: pc.utf8_lower(v),
            _case_spark(pc.utf8_lower),
            _unordered,
        ),
        Function(
            "upper",
            _STRING,
            (),
            _same,
            lambda v, a: pc.utf8_upper(v),
            _case_spark(pc.utf8_upper),
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


@dataclass(frozen=True)
class BoundFunction:
    """A registry function applied to one source column with its literal arguments."""

    function: Function
    column: str
    source_type: ColumnType
    args: tuple[Literal, ...] = ()

    @property
    def name(self) -> str:
        return self.function.name

    @property
    def result_type(self) -> ColumnType:
        return self.function.result(self.source_type)

    @property
    def order(self) -> Order:
        return self.function.order(self.args)

    def arrow(self, values: pa.Array | pa.ChunkedArray) -> pa.Array:
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        out = self.function.arrow(values, self.args)
        return pc.cast(out, self.result_type.to_arrow())

    def spark(self, column: SparkColumn) -> SparkColumn:
        return self.function.spark(column, self.source_type, self.args).cast(self.result_type.to_spark_ddl())

    def value(self, source: Any) -> Any:
        """f(one Python value), None for NULL or out-of-range."""
        return self.arrow(pa.array([source], self.source_type.to_arrow()))[0].as_py()

    def sql(self) -> str:
        rendered = [self.column]
        for arg in self.args:
            rendered.append("'" + arg.replace("'", "''") + "'" if isinstance(arg, str) else str(arg))
        return f"{self.name}({', '.join(rendered)})"

    def key(self) -> tuple[str, str, tuple[Literal, ...]]:
        return (self.name, self.column, self.args)


def bind(name: str, column: str, source_type: ColumnType, args: tuple[Literal, ...]) -> BoundFunction:
    """Resolve and check a call; raises InvalidInputError."""
    function = REGISTRY.get(name.lower())
    if function is None:
        raise InvalidInputError(f"unknown function {name!r} (known: {', '.join(sorted(REGISTRY))})")
    if source_type.kind not in function.sources:
        raise InvalidInputError(
            f"{function.name} takes a column of type {' or '.join(function.sources)}, "
            f"not {source_type} ({column})"
        )
    if len(args) != len(function.literals) or not all(
        isinstance(a, k) for a, k in zip(args, function.literals, strict=True)
    ):
        kinds = ", ".join(k.__name__ for k in function.literals)
        raise InvalidInputError(f"{function.name}(column{', ' if kinds else ''}{kinds}): wrong arguments")
    function.check(args)
    return BoundFunction(function, column, source_type, args)


_CALL = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*$", re.S)
_ARG = re.compile(r"\s*(?:'((?:[^']|'')*)'|(-?[0-9]+)|([A-Za-z_][A-Za-z0-9_]*)|\"([^\"]+)\")\s*(?:,|$)")


def parse_call(text: str) -> tuple[str, str, tuple[Literal, ...]]:
    """`name(column, literal, ...)` -> (name, column, literals). One function over one column."""
    match = _CALL.match(text)
    if not match:
        raise InvalidInputError(f"expected function(column, ...), got {text!r}")
    name, inner = match.group(1).lower(), match.group(2)
    values: list[Literal] = []
    column: str | None = None
    position = 0
    while position < len(inner):
        arg = _ARG.match(inner, position)
        if not arg or arg.end() == position:
            raise InvalidInputError(f"cannot read the arguments of {text!r} (nested calls are not supported)")
        string, number, identifier, quoted = arg.groups()
        if identifier is not None or quoted is not None:
            if column is not None or values:
                raise InvalidInputError(f"{text!r}: the column must be the only, first, column argument")
            column = (identifier or quoted).lower()
        elif string is not None:
            values.append(string.replace("''", "'"))
        else:
            values.append(int(number))
        position = arg.end()
    if column is None:
        raise InvalidInputError(f"{echo(text)} names no column")
    return name, column, tuple(values)


def parse_expression(text: str, column_types: dict[str, ColumnType]) -> BoundFunction:
    name, column, args = parse_call(text)
    if column not in column_types:
        raise InvalidInputError(f"unknown column {echo(column)} in {echo(text)}")
    return bind(name, column, column_types[column], args)
