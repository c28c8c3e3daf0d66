"""Constants of a WHERE clause: `read_literal` evaluates a literal, a negated number or a CAST of
one into a `Literal` (None for NULL, bool, int, an exact `Decimal` for numbers, float, str, bytes,
date or datetime), remembering whether engines treat it as an approximate (double or real) value.
A CAST is evaluated only when every engine agrees on its result; one that engines round or
truncate differently is `NotLiteralError` (the comparison is then ignored, i.e. widened), one that
cannot be evaluated at all (`DATE 'x'`) a `LiteralError` that names the literal."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation

from sqlglot import exp

from pruner.errors import InvalidInputError, InvalidSchemaError
from pruner.numeric import Bits, nearest_float32
from pruner.predicate.sql.parsing import sql_text, unparen
from pruner.predicate.values import Value, is_nan, normalize
from pruner.types import ColumnType, TypeKind, parse_type


class LiteralError(InvalidInputError):
    """A constant that cannot be evaluated (a bad date, a non-number cast to a number, ...)."""

    def __init__(self, text: str, reason: str) -> None:
        super().__init__(f"invalid literal {text}: {reason}")
        self.text, self.reason = text, reason


class NotLiteralError(Exception):
    """The expression is not a constant this module can evaluate (the reason is the message)."""


@dataclass(frozen=True)
class Literal:
    """A constant: `None` (NULL), bool, int, Decimal (an exact number), float, str, bytes, date or
    datetime. `approximate` is 64 or 32 when the value is a double or a real, which engines compare
    with integer and decimal columns after rounding the column value (None for an exact value)."""

    value: object
    approximate: Bits | None
    node: exp.Expr

    @property
    def sql(self) -> str:
        """The literal's text, for notes and messages (made when asked for: an IN list of 100,000
        values is read value by value)."""
        return sql_text(self.node)


_MAX_EXACT_DIGITS = 38  # longer decimal literals are doubles in Spark
_TIMESTAMP_TYPES = {"TIMESTAMP", "TIMESTAMPTZ", "TIMESTAMPLTZ", "TIMESTAMPNTZ"}
_STRING_TYPES = {"VARCHAR", "NVARCHAR", "TEXT"}


def read_literal(node: exp.Expr) -> Literal:
    node = unparen(node)
    if isinstance(node, exp.Null):
        return Literal(None, None, node)
    if isinstance(node, exp.Boolean):
        return Literal(bool(node.this), None, node)
    if type(node) is exp.Literal:
        if node.is_string:
            return Literal(str(node.this), None, node)
        number = str(node.this)
        try:
            value = Decimal(number)
        except InvalidOperation:
            raise LiteralError(sql_text(node), "not a number") from None
        approximate = "e" in number.lower() or len(value.as_tuple().digits) > _MAX_EXACT_DIGITS
        return Literal(value, 64 if approximate else None, node)
    if isinstance(node, exp.Neg):
        inner = read_literal(node.this)
        if inner.value is None:
            return Literal(None, None, node)
        if isinstance(inner.value, int | float | Decimal) and not isinstance(inner.value, bool):
            return Literal(-inner.value, inner.approximate, node)
        raise NotLiteralError(f"cannot negate {inner.sql}")
    if type(node) is exp.Cast:
        target = _cast_type(node.args["to"])
        if target is None:
            raise NotLiteralError(f"cast to {sql_text(node.args['to'])} not supported")
        return _cast(read_literal(node.this), target, node)
    raise NotLiteralError(f"{sql_text(node)} is not a literal")


def _cast_type(data_type: exp.DataType) -> tuple[ColumnType, int | None] | None:
    """The column type of a CAST target, and a VARCHAR(n) length limit if any."""
    kind = data_type.this.name
    if kind in _TIMESTAMP_TYPES:
        return ColumnType(TypeKind.TIMESTAMP), None
    if kind in _STRING_TYPES:
        params = data_type.expressions
        return ColumnType(TypeKind.STRING), int(params[0].this.name) if params else None
    if kind == "CHAR":  # CHAR(n) pads with spaces
        return None
    try:
        return parse_type(data_type.sql().lower()), None
    except (InvalidSchemaError, ValueError):
        return None


def _cast(inner: Literal, target: tuple[ColumnType, int | None], node: exp.Expr) -> Literal:
    """CAST(literal AS type), when every engine agrees on the result; `NotLiteralError` when engines
    round or truncate differently, `InvalidInputError` when the value cannot be cast at all."""
    value = inner.value
    column_type, max_length = target
    kind = column_type.kind
    if value is None:
        return Literal(None, None, node)
    if isinstance(value, str) and (kind is TypeKind.BOOLEAN or kind.is_numeric):
        value = _parse_text(value, column_type, sql_text(node))
    try:
        if isinstance(value, bool):
            if kind is TypeKind.BOOLEAN:
                return Literal(value, None, node)
        elif isinstance(value, int | float | Decimal):
            result = _cast_number(value, column_type)
            if result is not None:
                return Literal(result, kind.float_bits, node)
        elif isinstance(value, str):
            if kind is TypeKind.STRING and (max_length is None or len(value) <= max_length):
                return Literal(value, None, node)
            if kind in (TypeKind.BINARY, TypeKind.DATE, TypeKind.TIMESTAMP):
                return Literal(normalize(value, column_type), None, node)
        elif isinstance(value, datetime):
            if kind is TypeKind.TIMESTAMP:
                return Literal(value, None, node)
        elif isinstance(value, date):
            if kind in (TypeKind.DATE, TypeKind.TIMESTAMP):
                return Literal(normalize(value, column_type), None, node)
        elif isinstance(value, bytes) and kind is TypeKind.BINARY:
            return Literal(value, None, node)
    except InvalidInputError as exc:
        raise LiteralError(sql_text(node), error_reason(exc)) from None
    raise NotLiteralError(f"{sql_text(node)} depends on the engine")


def _parse_text(value: str, column_type: ColumnType, text: str) -> object:
    """A string cast to a boolean or a number: the value it spells."""
    word = value.strip()
    if column_type.kind is TypeKind.BOOLEAN:
        if word.lower() in ("true", "false"):
            return word.lower() == "true"
        raise LiteralError(text, "not a boolean")
    try:
        number = Decimal(word)
    except InvalidOperation:
        raise LiteralError(text, "not a number") from None
    if number.is_snan() or (not number.is_finite() and not column_type.kind.is_floating):
        raise LiteralError(text, "not a finite number")
    return number


def _cast_number(value: int | float | Decimal, column_type: ColumnType) -> Value | None:
    """A number cast to a numeric type, or `None` if the cast would round or overflow."""
    bits, bounds = column_type.kind.float_bits, column_type.kind.integer_bounds
    if bits == 64:
        result = float(value)
        return None if math.isinf(result) and not _is_infinite(value) else result
    if bits == 32:
        result = nearest_float32(float(value))
        if is_nan(value) or _is_infinite(value):
            return result
        return result if not math.isinf(result) and Decimal(result) == to_decimal(value) else None
    if bounds is not None or column_type.kind is TypeKind.DECIMAL:
        if is_nan(value) or _is_infinite(value):
            return None
        number = to_decimal(value)
        if bounds is not None:
            if number != number.to_integral_value():
                return None
            low, high = bounds
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


def to_decimal(value: int | float | Decimal) -> Decimal:
    return value if isinstance(value, Decimal) else Decimal(value)


def error_reason(exc: InvalidInputError) -> str:
    """The reason part of a `normalize` error ('cannot use X as a T value: reason')."""
    return str(exc).rsplit(": ", 1)[-1]
