"""Translate a SQL WHERE clause into a `TupleDomain` that pruning can use.

`translate(where, schema)` parses the predicate with sqlglot and returns a `Translation`: a tuple
domain that is a SUPERSET of the rows for which the predicate is TRUE under SQL three-valued logic,
as tight as the algebra allows, plus a human-readable note for every place where it had to widen.

How it works. Every sub-expression is translated with a polarity: the rows where it is TRUE, or (under
a NOT) the rows where it is FALSE. NULL is neither, so NOT never turns "unknown" into a match, and
De Morgan's laws apply exactly: AND is an intersection (exact), OR a column-wise union (a widening
when the operands constrain different columns; noted). Comparisons, BETWEEN, IN, IS [NOT] NULL,
IS [NOT] TRUE/FALSE, a bare boolean column, LIKE and TRUE/FALSE/NULL are understood; anything else
(column against column, functions or arithmetic on columns, subqueries, CASE, ...) becomes "every
row" with a note, whatever its polarity.

Literals are converted to the column's type without ever dropping a matching row:
- a literal between two representable values is snapped to them with the comparison's exact meaning
  (`x > 2.5` on an integer column is `x >= 3`; `price = 1.234` on decimal(10,2) matches nothing;
  out-of-range numbers compare as beyond the type's range);
- engines compare float and double columns with a decimal literal after rounding the literal (to
  double, or to real for a real column), so an inexact literal covers both its exact and its rounded
  value; an approximate (exponent or double-typed) literal against an integer or decimal column
  covers one double step either side, because engines then round the column value to double;
  either widening is noted when it changes the result;
- a TIMESTAMP literal against a date column compares at midnight UTC; a DATE literal against a
  timestamp column is midnight UTC; a literal that cannot be a value of the column's type is an
  `InvalidInputError` naming the column and the literal.

NaN: on float and double columns NaN compares false, so comparisons, IN and BETWEEN exclude it; but
every negation (`<>`, `NOT (x < v)`, NOT IN, NOT BETWEEN) is TRUE for NaN, and the algebra lets only
an all-values domain match NaN, so those become `IS NOT NULL` (noted).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal, InvalidOperation, localcontext
from typing import Any

import numpy as np
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokenizer_core import TokenType
from sqlglot.tokens import Tokenizer

from pruner.errors import InvalidInputError, InvalidSchemaError
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import Value, is_nan, normalize
from pruner.types import Column, ColumnType, TableSchema, parse_type


@dataclass(frozen=True)
class Translation:
    """A superset of the rows matching a WHERE clause, and how it was widened."""

    domain: TupleDomain
    widened: tuple[str, ...]


def translate(
    where: str, schema: TableSchema, expressions: Mapping[tuple[Any, ...], str] | None = None
) -> Translation:
    """Translate the WHERE clause `where` (without the keyword) over the columns of `schema`.
    `expressions` maps indexed calls (`BoundFunction.key()`) to the virtual column named after their
    functional index; a call written in `where` that matches one is read as that column (which
    `schema` must then include)."""
    if expressions:
        where = _calls_as_columns(where, expressions)
    tree = _parse(where)
    translator = _Translator(schema)
    try:
        domain = translator.predicate(tree, negated=False)
    except RecursionError:
        raise InvalidInputError("WHERE clause is nested too deeply to translate") from None
    return Translation(domain, tuple(translator.notes))


# Parsing ---------------------------------------------------------------------------------------


def _calls_as_columns(where: str, expressions: Mapping[tuple[Any, ...], str]) -> str:
    """Replace each call `f(col, literal, ...)` that a functional index indexes by the index's name."""
    from pruner.functions.registry import parse_call

    try:
        tokens = Tokenizer().tokenize(where)
    except SqlglotError:
        return where  # _parse reports the error
    out, cursor, i = [], 0, 0
    while i < len(tokens) - 1:
        if tokens[i + 1].token_type == TokenType.L_PAREN and tokens[i].text.replace("_", "").isalnum():
            depth, end = 0, None
            for j in range(i + 1, len(tokens)):
                depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(tokens[j].token_type, 0)
                if depth == 0:
                    end = j
                    break
            if end is not None:
                text = where[tokens[i].start : tokens[end].end + 1]
                try:
                    name = expressions.get(parse_call(text))
                except InvalidInputError:
                    name = None
                if name is not None:
                    out.append(where[cursor : tokens[i].start] + name)
                    cursor, i = tokens[end].end + 1, end + 1
                    continue
        i += 1
    return "".join(out) + where[cursor:]


_ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
_MAX_TEXT = 80


def _parse(where: str) -> exp.Expr:
    text = where.strip()
    if not text:
        raise InvalidInputError("empty WHERE clause")
    try:
        tree = sqlglot.parse_one(text)
    except SqlglotError as exc:
        raise InvalidInputError(f"cannot parse WHERE clause {_short(text)}: {_error_text(exc)}") from None
    except RecursionError:
        raise InvalidInputError("WHERE clause is nested too deeply to parse") from None
    if not isinstance(tree, exp.Condition):
        raise InvalidInputError(f"not a WHERE predicate: {_short(text)} (parsed as {type(tree).__name__})")
    return tree


def _error_text(exc: SqlglotError) -> str:
    errors = getattr(exc, "errors", None)
    if errors:
        first = errors[0]
        return _one_line(f"{first.get('description')} at line {first.get('line')}, column {first.get('col')}")
    return _one_line(str(exc))


def _one_line(text: str) -> str:
    return " ".join(_ANSI_RE.sub("", text).split())


def _short(text: str) -> str:
    text = _one_line(text)
    if len(text) > _MAX_TEXT:
        text = text[: _MAX_TEXT - 3] + "..."
    return repr(text)


def _sql(node: exp.Expr) -> str:
    text = _one_line(node.sql())
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 3] + "..."


def _unparen(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _is_column(node: exp.Expr) -> bool:
    return isinstance(node, exp.Column) and isinstance(node.this, exp.Identifier)


# Literals --------------------------------------------------------------------------------------


class _LiteralError(InvalidInputError):
    """A constant that cannot be evaluated (a bad date, a non-number cast to a number, ...)."""

    def __init__(self, text: str, reason: str) -> None:
        super().__init__(f"invalid literal {text}: {reason}")
        self.text, self.reason = text, reason


class _NotLiteralError(Exception):
    """The expression is not a constant this module can evaluate (the reason is the message)."""


@dataclass(frozen=True)
class _Literal:
    """A constant: `None` (NULL), bool, int, Decimal (an exact number), float, str, bytes, date or
    datetime. `approximate` is 64 or 32 when the value is a double or a real, which engines compare
    with integer and decimal columns after rounding the column value (0 for an exact value)."""

    value: object
    approximate: int
    sql: str


_INTEGER_BOUNDS = {
    "tinyint": (-(2**7), 2**7 - 1),
    "smallint": (-(2**15), 2**15 - 1),
    "int": (-(2**31), 2**31 - 1),
    "bigint": (-(2**63), 2**63 - 1),
}
_FLOATING = ("float", "double")
_MAX_EXACT_DIGITS = 38  # longer decimal literals are doubles in Spark
_CONTEXT = Context(prec=200)
_TIMESTAMP_TYPES = {"TIMESTAMP", "TIMESTAMPTZ", "TIMESTAMPLTZ", "TIMESTAMPNTZ"}
_STRING_TYPES = {"VARCHAR", "NVARCHAR", "TEXT"}


def _literal(node: exp.Expr) -> _Literal:
    node = _unparen(node)
    text = _sql(node)
    if isinstance(node, exp.Null):
        return _Literal(None, 0, text)
    if isinstance(node, exp.Boolean):
        return _Literal(bool(node.this), 0, text)
    if type(node) is exp.Literal:
        if node.is_string:
            return _Literal(str(node.this), 0, text)
        number = str(node.this)
        try:
            value = Decimal(number)
        except InvalidOperation:
            raise _LiteralError(text, "not a number") from None
        approximate = "e" in number.lower() or len(value.as_tuple().digits) > _MAX_EXACT_DIGITS
        return _Literal(value, 64 if approximate else 0, text)
    if isinstance(node, exp.Neg):
        inner = _literal(node.this)
        if inner.value is None:
            return _Literal(None, 0, text)
        if isinstance(inner.value, int | float | Decimal) and not isinstance(inner.value, bool):
            return _Literal(-inner.value, inner.approximate, text)
        raise _NotLiteralError(f"cannot negate {inner.sql}")
    if type(node) is exp.Cast:
        target = _cast_type(node.args["to"])
        if target is None:
            raise _NotLiteralError(f"cast to {_sql(node.args['to'])} not supported")
        return _cast(_literal(node.this), target, text)
    raise _NotLiteralError(f"{text} is not a literal")


def _cast_type(data_type: exp.DataType) -> tuple[ColumnType, int | None] | None:
    """The column type of a CAST target, and a VARCHAR(n) length limit if any."""
    kind = data_type.this.name
    if kind in _TIMESTAMP_TYPES:
        return ColumnType("timestamp"), None
    if kind in _STRING_TYPES:
        params = data_type.expressions
        return ColumnType("string"), int(params[0].this.name) if params else None
    if kind == "CHAR":  # CHAR(n) pads with spaces
        return None
    try:
        return parse_type(data_type.sql().lower()), None
    except (InvalidSchemaError, ValueError):
        return None


def _cast(inner: _Literal, target: tuple[ColumnType, int | None], text: str) -> _Literal:
    """CAST(literal AS type), when every engine agrees on the result; `_NotLiteralError` when engines
    round or truncate differently, `InvalidInputError` when the value cannot be cast at all."""
    value = inner.value
    column_type, max_length = target
    name = column_type.name
    approximate = {"double": 64, "float": 32}.get(name, 0)
    if value is None:
        return _Literal(None, 0, text)
    if isinstance(value, str) and name not in ("string", "binary", "date", "timestamp"):
        value = _parse_text(value, column_type, text)
    try:
        if isinstance(value, bool):
            if name == "boolean":
                return _Literal(value, 0, text)
        elif isinstance(value, int | float | Decimal):
            result = _cast_number(value, column_type)
            if result is not None:
                return _Literal(result, approximate, text)
        elif isinstance(value, str):
            if name == "string" and (max_length is None or len(value) <= max_length):
                return _Literal(value, 0, text)
            if name in ("binary", "date", "timestamp"):
                return _Literal(normalize(value, column_type), 0, text)
        elif isinstance(value, datetime):
            if name == "timestamp":
                return _Literal(value, 0, text)
        elif isinstance(value, date):
            if name in ("date", "timestamp"):
                return _Literal(normalize(value, column_type), 0, text)
        elif isinstance(value, bytes) and name == "binary":
            return _Literal(value, 0, text)
    except InvalidInputError as exc:
        raise _LiteralError(text, _reason(exc)) from None
    raise _NotLiteralError(f"{text} depends on the engine")


def _parse_text(value: str, column_type: ColumnType, text: str) -> object:
    """A string cast to a boolean or a number: the value it spells."""
    word = value.strip()
    if column_type.name == "boolean":
        if word.lower() in ("true", "false"):
            return word.lower() == "true"
        raise _LiteralError(text, "not a boolean")
    try:
        number = Decimal(word)
    except InvalidOperation:
        raise _LiteralError(text, "not a number") from None
    if number.is_snan() or (not number.is_finite() and column_type.name not in _FLOATING):
        raise _LiteralError(text, "not a finite number")
    return number


def _cast_number(value: int | float | Decimal, column_type: ColumnType) -> Value | None:
    """A number cast to a numeric type, or `None` if the cast would round or overflow."""
    name = column_type.name
    if name == "double":
        result = float(value)
        return None if math.isinf(result) and not _is_infinite(value) else result
    if name == "float":
        result = _round32(float(value))
        if is_nan(value) or _is_infinite(value):
            return result
        return result if not math.isinf(result) and Decimal(result) == _to_decimal(value) else None
    if name in _INTEGER_BOUNDS or name == "decimal":
        if is_nan(value) or _is_infinite(value):
            return None
        number = _to_decimal(value)
        if name in _INTEGER_BOUNDS:
            if number != number.to_integral_value():
                return None
            low, high = _INTEGER_BOUNDS[name]
            return int(number) if low <= number <= high else None
        try:
            return normalize(number, column_type)
        except InvalidInputError:
            return None
    return None


def _is_infinite(value: object) -> bool:
    return (isinstance(value, float) and math.isinf(value)) or (
        isinstance(value, Decimal) and value.is_infinite()
    )


def _to_decimal(value: int | float | Decimal) -> Decimal:
    return value if isinstance(value, Decimal) else Decimal(value)


def _reason(exc: InvalidInputError) -> str:
    """The reason part of a `normalize` error ('cannot use X as a T value: reason')."""
    return str(exc).rsplit(": ", 1)[-1]


# Grids: the values of a column type ------------------------------------------------------------


def _round32(value: float) -> float:
    """The nearest real (float32) to a double, ±inf on overflow."""
    with np.errstate(all="ignore"):
        return float(np.float32(value))


class _Grid:
    """The values a column can hold, to snap a literal to: `floor` is the greatest value <= x,
    `ceil` the least value >= x (`None` if there is none), `exact` the value equal to x or `None`."""

    def floor(self, x: Any) -> Value | None:
        return x  # type: ignore[no-any-return]

    def ceil(self, x: Any) -> Value | None:
        return x  # type: ignore[no-any-return]

    def exact(self, x: Any) -> Value | None:
        low = self.floor(x)
        return low if low is not None and low == x else None


_IDENTITY = _Grid()


class _Integers(_Grid):
    def __init__(self, low: int, high: int) -> None:
        self.low, self.high = low, high

    def floor(self, x: Decimal) -> Value | None:
        if x < self.low:
            return None
        return self.high if x > self.high else int(x.to_integral_value(ROUND_FLOOR))

    def ceil(self, x: Decimal) -> Value | None:
        if x > self.high:
            return None
        return self.low if x < self.low else int(x.to_integral_value(ROUND_CEILING))


class _Decimals(_Grid):
    def __init__(self, column_type: ColumnType) -> None:
        self.step = Decimal(1).scaleb(-column_type.scale)
        self.high = Decimal(10) ** (column_type.precision - column_type.scale) - self.step

    def _snap(self, x: Decimal, rounding: str) -> Decimal:
        with localcontext(_CONTEXT):
            result = x.quantize(self.step, rounding=rounding)
        return result.copy_abs() if result == 0 else result

    def floor(self, x: Decimal) -> Value | None:
        if x < -self.high:
            return None
        return self.high if x > self.high else self._snap(x, ROUND_FLOOR)

    def ceil(self, x: Decimal) -> Value | None:
        if x > self.high:
            return None
        return -self.high if x < -self.high else self._snap(x, ROUND_CEILING)


class _Floats(_Grid):
    """Doubles (width 64) or reals (width 32), including the infinities."""

    def __init__(self, width: int) -> None:
        self.width = width

    def nearest(self, x: Decimal) -> float:
        """x rounded to the nearest value (through double for reals)."""
        value = float(x)
        return value if self.width == 64 else _round32(value)

    def step(self, value: float, up: bool) -> float:
        target = math.inf if up else -math.inf
        if self.width == 64:
            return math.nextafter(value, target)
        with np.errstate(all="ignore"):
            return float(np.nextafter(np.float32(value), np.float32(target)))

    def floor(self, x: Decimal) -> Value | None:
        value = self.nearest(x)
        return self.step(value, up=False) if Decimal(value) > x else value

    def ceil(self, x: Decimal) -> Value | None:
        value = self.nearest(x)
        return self.step(value, up=True) if Decimal(value) < x else value


class _Dates(_Grid):
    """Dates, compared with a timestamp at midnight UTC."""

    def floor(self, x: datetime) -> Value | None:
        return x.astimezone(UTC).date()

    def ceil(self, x: datetime) -> Value | None:
        day = x.astimezone(UTC).date()
        if self.exact(x) is not None:
            return day
        try:
            return day + timedelta(days=1)
        except OverflowError:
            return None

    def exact(self, x: datetime) -> Value | None:
        day = x.astimezone(UTC).date()
        return day if datetime.combine(day, time(), UTC) == x else None


def _numeric_grid(column_type: ColumnType) -> _Grid:
    if column_type.name in _INTEGER_BOUNDS:
        return _Integers(*_INTEGER_BOUNDS[column_type.name])
    if column_type.name == "decimal":
        return _Decimals(column_type)
    return _Floats(64 if column_type.name == "double" else 32)


def _candidates(grid: _Grid, exact: Decimal, approximate: int, op: str) -> list[Decimal]:
    """Values that `column op literal` may compare the literal as: engines round a decimal literal
    to the floating type of a floating column, and round an integer or decimal column to double
    (or real) against a double (real) literal; `column op c` for some c in the hull of these is
    TRUE whenever `column op literal` is, under exact or engine semantics."""
    values = [exact]
    if not exact.is_finite():
        return values
    if isinstance(grid, _Floats):
        short = len(exact.as_tuple().digits) <= 15 and -22 <= int(exact.as_tuple().exponent) <= 22
        low, high = grid.floor(exact), grid.ceil(exact)
        if not short:  # engines' decimal-to-double conversions may round either way
            values += [Decimal(v) for v in (low, high) if isinstance(v, float)]
            return values
        values.append(Decimal(float(exact)))
        if grid.width == 32:
            values.append(Decimal(_round32(float(exact))))
            assert isinstance(low, float) and isinstance(high, float)
            if math.isinf(low) or math.isinf(high):
                values += [Decimal(low), Decimal(high)]
            else:  # the nearest real, rounded directly (both on a tie)
                with localcontext(_CONTEXT):
                    below, above = exact - Decimal(low), Decimal(high) - exact
                if below <= above:
                    values.append(Decimal(low))
                if above <= below:
                    values.append(Decimal(high))
    elif approximate:
        # With f the literal as a double and r(g) any faithful rounding of a column value g:
        # r(g) < f needs g < f, r(g) <= f needs g < next(f), r(g) = f needs prev(f) < g < next(f),
        # and r(g) <> f holds for every g other than f.
        floats = _Floats(approximate)
        nearest = floats.nearest(exact)
        if not math.isinf(nearest):
            values.append(Decimal(nearest))
            if op in ("=", "<=", ">="):
                values += [Decimal(floats.step(nearest, up=False)), Decimal(floats.step(nearest, up=True))]
    return values


# Translation -----------------------------------------------------------------------------------

_COMPARISONS: dict[type[exp.Expr], str] = {
    exp.EQ: "=",
    exp.NEQ: "<>",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
}
_FLIPPED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NEGATED = {"=": "<>", "<>": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_WILDCARDS = re.compile(r"[%_\\]")


@dataclass
class _Translator:
    schema: TableSchema
    notes: list[str] = field(default_factory=list)
    texts: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.columns = {c.name.lower(): c for c in self.schema.columns}

    def sql(self, node: exp.Expr) -> str:
        """The (shortened) SQL text of a node, generated once per node: a note about one item of a
        long IN list would otherwise print the whole list for every item."""
        key = id(node)
        if key not in self.texts:
            self.texts[key] = _sql(node)
        return self.texts[key]

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    # Connectives ---------------------------------------------------------------------------

    def predicate(self, node: exp.Expr, negated: bool) -> TupleDomain:
        """A superset of the rows where `node` is TRUE (or FALSE, if `negated`)."""
        noted = len(self.notes)
        result = self._predicate(node, negated)
        if result.is_none():  # exact after all: what widened inside does not matter
            del self.notes[noted:]
        return result

    def _predicate(self, node: exp.Expr, negated: bool) -> TupleDomain:
        if isinstance(node, exp.Is | exp.Like | exp.ILike) and node.args.get("negate"):
            negated = not negated
        if isinstance(node, exp.Paren):
            return self.predicate(node.this, negated)
        if isinstance(node, exp.Not):
            return self.predicate(node.this, not negated)
        if isinstance(node, exp.And | exp.Or):
            operands = _operands(node, type(node))
            parts = [self.predicate(operand, negated) for operand in operands]
            return self.combine(parts, isinstance(node, exp.And) != negated, node, negated)
        if isinstance(node, exp.Boolean):
            return TupleDomain.all() if bool(node.this) != negated else TupleDomain.none()
        if isinstance(node, exp.Null):
            return TupleDomain.none()
        if _is_column(node):
            return self.boolean_column(node, value=not negated)
        if type(node) in _COMPARISONS:
            return self.comparison(node.this, _COMPARISONS[type(node)], node.expression, negated, node)
        if isinstance(node, exp.Between):
            return self.between(node, negated)
        if isinstance(node, exp.In):
            return self.in_list(node, negated)
        if isinstance(node, exp.Is):
            return self.is_test(node, negated)
        if isinstance(node, exp.Escape | exp.Like | exp.ILike):
            return self.like(node, negated)
        return self.unsupported(node, f"{self.sql(node)} not supported: ignored")

    def combine(
        self, parts: Sequence[TupleDomain], conjunction: bool, source: exp.Expr, negated: bool = False
    ) -> TupleDomain:
        if conjunction:
            return _reduce(parts, TupleDomain.intersect, TupleDomain.all())
        result = _reduce(parts, TupleDomain.column_wise_union, TupleDomain.none())
        if not _union_is_exact([p for p in parts if not p.is_none()], result):
            text = f"NOT ({self.sql(source)})" if negated else self.sql(source)
            self.note(f"OR over different columns widened column-wise: {text}")
        return result

    def unsupported(self, node: exp.Expr, note: str) -> TupleDomain:
        for column in node.find_all(exp.Column):
            if _is_column(column) and column.find_ancestor(exp.Query, exp.Lambda) is None:
                self.column(column)  # an unknown column is an error even where it is ignored
        self.note(note)
        return TupleDomain.all()

    def column(self, node: exp.Expr) -> Column:
        name = str(node.name).lower()
        if name not in self.columns:
            raise InvalidInputError(
                f"unknown column {node.name!r} in WHERE clause (columns: {', '.join(self.schema.names)})"
            )
        return self.columns[name]

    # Atoms ---------------------------------------------------------------------------------

    def boolean_column(self, node: exp.Expr, value: bool) -> TupleDomain:
        column = self.column(node)
        if column.type.name != "boolean":
            return self.unsupported(node, f"non-boolean column {column.name} used as a condition: ignored")
        return _single(column, Domain.single_value(value))

    def comparison(
        self, left: exp.Expr, op: str, right: exp.Expr, negated: bool, source: exp.Expr
    ) -> TupleDomain:
        left, right = _unparen(left), _unparen(right)
        if _is_column(left) and _is_column(right):
            return self.unsupported(source, f"comparison between columns {self.sql(source)}: ignored")
        if _is_column(right):
            left, right, op = right, left, _FLIPPED[op]
        if not _is_column(left):
            return self.unsupported(source, _not_indexed(left, right, self.sql(source)))
        column = self.column(left)
        try:
            literal = _literal(right)
        except _NotLiteralError as exc:
            if any(_is_column(c) for c in right.find_all(exp.Column)):
                return self.unsupported(source, _not_indexed(left, right, self.sql(source)))
            return self.unsupported(source, f"{exc}: {self.sql(source)} ignored")
        except _LiteralError as exc:
            raise InvalidInputError(
                f"cannot compare column {column.name} with {exc.text}: {exc.reason}"
            ) from None
        return self.compare(column, op, literal, negated, source)

    def compare(
        self, column: Column, op: str, literal: _Literal, negated: bool, source: exp.Expr
    ) -> TupleDomain:
        """`column op literal` is TRUE (or FALSE, if `negated`)."""
        value = literal.value
        if value is None:
            return TupleDomain.none()
        nan_matches = (op == "<>") != negated  # a NaN operand makes the comparison TRUE
        if is_nan(value) and _is_numeric(column.type):
            return _single(column, Domain.not_null()) if nan_matches else TupleDomain.none()
        if column.type.name in _FLOATING and nan_matches:
            text = f"NOT ({self.sql(source)})" if negated else self.sql(source)
            self.note(
                f"{text} on floating column {column.name} keeps NaN: widened to {column.name} IS NOT NULL"
            )
            return _single(column, Domain.not_null())
        op = _NEGATED[op] if negated else op
        grid, reference, low, high = self.bounds(column, literal, op)
        domain = _compare_domain(op, grid, low, high)
        if column.type.name == "boolean":  # `b <> FALSE` is `b = TRUE`
            domain = domain.intersect(Domain.multiple_values((False, True)))
        elif (low, high) != (reference, reference) and domain != _compare_domain(
            op, grid, reference, reference
        ):
            self.note(
                f"{self.sql(source)}: literal {literal.sql} is inexact in {column.type}; "
                "widened to cover floating-point rounding"
            )
        return _single(column, domain)

    def bounds(self, column: Column, literal: _Literal, op: str) -> tuple[_Grid, Any, Any, Any]:
        """The grid of the column, the value engines usually compare the literal as (its exact
        value, rounded for a floating column), and the range of the values it may be compared as."""
        value, column_type = literal.value, column.type
        if (
            _is_numeric(column_type)
            and isinstance(value, int | float | Decimal)
            and not isinstance(value, bool)
        ):
            grid = _numeric_grid(column_type)
            exact = _to_decimal(value)
            values = _candidates(grid, exact, literal.approximate, op)
            reference = exact
            if isinstance(grid, _Floats) and exact.is_finite():
                reference = Decimal(grid.nearest(exact))
            return grid, reference, min(values), max(values)
        if column_type.name == "date" and isinstance(value, datetime):
            return _Dates(), value, value, value
        try:
            converted = normalize(value, column_type)
        except InvalidInputError as exc:
            raise InvalidInputError(
                f"cannot compare column {column.name} ({column_type}) with {literal.sql}: {_reason(exc)}"
            ) from None
        return _IDENTITY, converted, converted, converted

    def between(self, node: exp.Between, negated: bool) -> TupleDomain:
        this, low, high = node.this, node.args["low"], node.args["high"]
        if node.args.get("symmetric"):
            parts = [
                self._between(this, low, high, negated, node),
                self._between(this, high, low, negated, node),
            ]
            return self.combine(parts, conjunction=negated, source=node)
        return self._between(this, low, high, negated, node)

    def _between(
        self, this: exp.Expr, low: exp.Expr, high: exp.Expr, negated: bool, node: exp.Expr
    ) -> TupleDomain:
        # x BETWEEN a AND b is x >= a AND x <= b, also under three-valued logic.
        parts = [
            self.comparison(this, ">=", low, negated, node),
            self.comparison(this, "<=", high, negated, node),
        ]
        return self.combine(parts, conjunction=not negated, source=node)

    def in_list(self, node: exp.In, negated: bool) -> TupleDomain:
        if any(node.args.get(key) for key in ("query", "unnest", "field")):
            return self.unsupported(node, f"{self.sql(node)} not supported: ignored")
        # x IN (a, b) is x = a OR x = b, also under three-valued logic.
        parts = [self.comparison(node.this, "=", item, negated, node) for item in node.expressions]
        return self.combine(parts, conjunction=negated, source=node)

    def is_test(self, node: exp.Is, negated: bool) -> TupleDomain:
        subject, test = _unparen(node.this), _unparen(node.expression)
        if not _is_column(subject):
            return self.unsupported(node, f"{self.sql(node)} not supported: ignored")
        column = self.column(subject)
        if isinstance(test, exp.Null):
            return _single(column, Domain.not_null() if negated else Domain.only_null())
        if isinstance(test, exp.Boolean) and column.type.name == "boolean":
            value = bool(test.this)
            if negated:  # x IS NOT TRUE: false or NULL
                return _single(column, Domain(SortedRangeSet.of_values(not value), True))
            return _single(column, Domain.single_value(value))
        return self.unsupported(node, f"{self.sql(node)} not supported: ignored")

    def like(self, node: exp.Expr, negated: bool) -> TupleDomain:
        escape = isinstance(node, exp.Escape)
        like = node.this if escape else node
        if escape and isinstance(like, exp.Like | exp.ILike) and like.args.get("negate"):
            negated = not negated
        if not isinstance(like, exp.Like | exp.ILike):
            return self.unsupported(node, f"{self.sql(node)} not supported: ignored")
        subject, pattern_node = _unparen(like.this), _unparen(like.expression)
        if not _is_column(subject):
            return self.unsupported(node, f"{self.sql(node)} not supported: ignored")
        column = self.column(subject)
        if column.type.name != "string":
            return self.unsupported(node, f"LIKE on {column.type} column {column.name}: ignored")
        try:
            pattern = _literal(pattern_node).value
        except _NotLiteralError:
            return self.unsupported(node, f"{self.sql(node)} with a non-literal pattern: ignored")
        if pattern is None:
            return TupleDomain.none()
        if not isinstance(pattern, str):
            return self.unsupported(node, f"{self.sql(node)} with a non-string pattern: ignored")
        wildcard = _WILDCARDS.search(pattern)
        if isinstance(like, exp.ILike) or escape:
            reason = "ILIKE" if isinstance(like, exp.ILike) else "an ESCAPE clause"
            self.note(f"{self.sql(node)} with {reason}: widened to {column.name} IS NOT NULL")
            return _single(column, Domain.not_null())
        if wildcard is None:  # no wildcard: (in)equality
            single = Domain.single_value(pattern)
            return _single(column, Domain(single.values.complement(), False) if negated else single)
        if negated:
            text = self.sql(node) if like.args.get("negate") else f"NOT ({self.sql(node)})"
            self.note(f"{text} keeps every string: widened to {column.name} IS NOT NULL")
            return _single(column, Domain.not_null())
        prefix, rest = pattern[: wildcard.start()], pattern[wildcard.start() :]
        if not prefix:
            if rest.strip("%"):
                self.note(f"{self.sql(node)} has no literal prefix: widened to {column.name} IS NOT NULL")
            return _single(column, Domain.not_null())
        if rest.strip("%"):
            self.note(f"{self.sql(node)} widened to the prefix range of {prefix!r}")
        upper = _prefix_upper(prefix)
        values = (
            Range(prefix, True, upper, False) if upper is not None else Range.greater_than_or_equal(prefix)
        )
        return _single(column, Domain(SortedRangeSet.of_ranges(values), False))


def _union_is_exact(parts: list[TupleDomain], union: TupleDomain) -> bool:
    """Whether the column-wise union of `parts` (none of them NONE) is their exact union: it is
    when one part holds all the others, or when all parts constrain the same columns and differ
    on at most one of them."""
    if not parts or union in parts:
        return True
    if len({p.columns for p in parts}) != 1:
        return False
    first = parts[0]
    varying = [name for name in first.columns if any(p.domain(name) != first.domain(name) for p in parts[1:])]
    return len(varying) <= 1


def _is_numeric(column_type: ColumnType) -> bool:
    return column_type.is_integer or column_type.name in ("decimal", *_FLOATING)


def _not_indexed(left: exp.Expr, right: exp.Expr, source: str) -> str:
    for side in (left, right):
        if not _is_column(side) and any(_is_column(c) for c in side.find_all(exp.Column)):
            kind = "function" if isinstance(side, exp.Func) else "expression"
            return f"{kind} {_sql(side)} not indexed: {source} ignored"
    return f"{source} has no column: ignored"


def _operands(node: exp.Expr, kind: type[exp.Expr]) -> list[exp.Expr]:
    """The operands of a chain of one connective (`a AND (b AND c)` has three), left to right."""
    result: list[exp.Expr] = []
    stack = [node]
    while stack:
        current = stack.pop()
        inner = _unparen(current)
        if isinstance(inner, kind):
            stack += [inner.expression, inner.this]
        else:
            result.append(current)
    return result


def _reduce(
    parts: Sequence[TupleDomain], op: Callable[[TupleDomain, TupleDomain], TupleDomain], empty: TupleDomain
) -> TupleDomain:
    """Combine pairwise as a balanced tree, so long IN lists stay fast."""
    items = list(parts)
    if not items:
        return empty
    while len(items) > 1:
        items = [
            op(items[i], items[i + 1]) if i + 1 < len(items) else items[i] for i in range(0, len(items), 2)
        ]
    return items[0]


def _single(column: Column, domain: Domain) -> TupleDomain:
    return TupleDomain.with_domains({column.name: domain})


def _compare_domain(op: str, grid: _Grid, low: Any, high: Any) -> Domain:
    """The column values v with `v op x` for some x in [low, high] (exactly x when low == high)."""
    if op == "=":
        first, last = grid.ceil(low), grid.floor(high)
        if first is None or last is None:
            return Domain.none()
        values = Range.between(first, True, last, True)
        return Domain.none() if values is None else Domain(SortedRangeSet.of_ranges(values), False)
    if op == "<>":
        value = grid.exact(low) if low == high else None
        if value is None:
            return Domain.not_null()
        return Domain(SortedRangeSet.of_values(value).complement(), False)
    if op in ("<", "<="):
        value = grid.exact(high) if op == "<" else None
        if value is not None:
            return Domain(SortedRangeSet.of_ranges(Range.less_than(value)), False)
        value = grid.floor(high)
        if value is None:
            return Domain.none()
        return Domain(SortedRangeSet.of_ranges(Range.less_than_or_equal(value)), False)
    value = grid.exact(low) if op == ">" else None
    if value is not None:
        return Domain(SortedRangeSet.of_ranges(Range.greater_than(value)), False)
    value = grid.ceil(low)
    if value is None:
        return Domain.none()
    return Domain(SortedRangeSet.of_ranges(Range.greater_than_or_equal(value)), False)


def _prefix_upper(prefix: str) -> str | None:
    """The least string greater than every string starting with `prefix` (code-point order), or
    `None` if there is none (a prefix of U+10FFFF only)."""
    chars = list(prefix)
    while chars:
        code = ord(chars[-1])
        if code == 0x10FFFF:
            chars.pop()
            continue
        code += 1
        if 0xD800 <= code <= 0xDFFF:  # surrogates are not characters
            code = 0xE000
        chars[-1] = chr(code)
        return "".join(chars)
    return None
