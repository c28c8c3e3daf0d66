"""Test oracle: evaluate a sqlglot-parsed WHERE clause on one row under SQL three-valued logic.

Independent of `pruner.predicate.sql` on purpose: it evaluates, it does not translate. A row is a
dict of column name to Python value (None is NULL). `evaluate` returns True, False or None
(unknown). Numbers compare by their exact value in the "exact" mode (Python compares int, float
and Decimal exactly); the "round64" and "round32" modes mimic engines, which compare a floating
column with a decimal literal after rounding the literal to double (or to real, for a real column
in "round32"), and an integer or decimal column with a double literal (one with an exponent) after
rounding the column value to double. NaN compares false, except with <> which is true; `is_nan`
is NULL for NULL.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, time
from decimal import Decimal
from typing import Any

import numpy as np
from sqlglot import exp

MODES = ("exact", "round64", "round32")
Truth = bool | None

_OPS: dict[type[exp.Expr], Callable[[Any, Any], bool]] = {
    exp.EQ: operator.eq,
    exp.NEQ: operator.ne,
    exp.LT: operator.lt,
    exp.LTE: operator.le,
    exp.GT: operator.gt,
    exp.GTE: operator.ge,
}


class _Val:
    """A value and where it came from: a column of a type, or a literal (`approximate` if it has an
    exponent, which makes it a double in SQL)."""

    def __init__(self, value: Any, column_type: str | None = None, approximate: bool = False) -> None:
        self.value, self.column_type, self.approximate = value, column_type, approximate


def evaluate(node: exp.Expr, row: Mapping[str, Any], types: Mapping[str, str], mode: str = "exact") -> Truth:
    return _Evaluator(row, types, mode).truth(node)


def _and(a: Truth, b: Truth) -> Truth:
    if a is False or b is False:
        return False
    return True if a is True and b is True else None


def _or(a: Truth, b: Truth) -> Truth:
    if a is True or b is True:
        return True
    return False if a is False and b is False else None


def _not(a: Truth) -> Truth:
    return None if a is None else not a


def _is_nan(value: Any) -> bool:
    return (isinstance(value, float) and math.isnan(value)) or (isinstance(value, Decimal) and value.is_nan())


def like_regex(pattern: str, escape: str | None = None) -> str:
    parts: list[str] = []
    chars = iter(pattern)
    for ch in chars:
        if escape is not None and ch == escape:
            parts.append(re.escape(next(chars, escape)))
        elif ch == "%":
            parts.append(".*")
        elif ch == "_":
            parts.append(".")
        else:
            parts.append(re.escape(ch))
    return "".join(parts)


class _Evaluator:
    def __init__(self, row: Mapping[str, Any], types: Mapping[str, str], mode: str) -> None:
        self.row, self.types, self.mode = row, types, mode

    def truth(self, node: exp.Expr) -> Truth:
        if isinstance(node, exp.Paren):
            return self.truth(node.this)
        if isinstance(node, exp.And):
            return _and(self.truth(node.this), self.truth(node.expression))
        if isinstance(node, exp.Or):
            return _or(self.truth(node.this), self.truth(node.expression))
        if isinstance(node, exp.Not):
            return _not(self.truth(node.this))
        if isinstance(node, exp.Boolean | exp.Null | exp.Column):
            value = self.value(node).value
            assert value is None or isinstance(value, bool)
            return value
        if type(node) in _OPS:
            return self.compare(self.value(node.this), _OPS[type(node)], self.value(node.expression))
        if isinstance(node, exp.Between):
            x, low, high = self.value(node.this), self.value(node.args["low"]), self.value(node.args["high"])
            result = _and(self.compare(x, operator.ge, low), self.compare(x, operator.le, high))
            if node.args.get("symmetric"):
                result = _or(
                    result, _and(self.compare(x, operator.ge, high), self.compare(x, operator.le, low))
                )
            return result
        if isinstance(node, exp.In):
            x = self.value(node.this)
            result: Truth = False
            for item in node.expressions:
                result = _or(result, self.compare(x, operator.eq, self.value(item)))
            return result
        if isinstance(node, exp.Is):
            value = self.value(node.this).value
            test = self.value(node.expression).value
            result = value is None if test is None else value is test
            return not result if node.args.get("negate") else result
        if isinstance(node, exp.Escape | exp.Like | exp.ILike):
            return self.like(node)
        if isinstance(node, exp.IsNan):  # NULL for NULL, as Trino's is_nan
            value = self.value(node.this).value
            return None if value is None else _is_nan(value)
        raise NotImplementedError(f"oracle cannot evaluate {node.sql()}")

    def like(self, node: exp.Expr) -> Truth:
        escape = None
        if isinstance(node, exp.Escape):
            escape = self.value(node.expression).value
            node = node.this
        value, pattern = self.value(node.this).value, self.value(node.expression).value
        if value is None or pattern is None:
            return None
        flags = re.DOTALL | (re.IGNORECASE if isinstance(node, exp.ILike) else 0)
        matched = re.fullmatch(like_regex(pattern, escape), value, flags) is not None
        return not matched if node.args.get("negate") else matched

    def value(self, node: exp.Expr) -> _Val:
        if isinstance(node, exp.Paren):
            return self.value(node.this)
        if isinstance(node, exp.Null):
            return _Val(None)
        if isinstance(node, exp.Boolean):
            return _Val(bool(node.this))
        if isinstance(node, exp.Column):
            name = node.name.lower()
            return _Val(self.row.get(name), self.types[name])
        if isinstance(node, exp.Literal):
            if node.is_string:
                return _Val(str(node.this))
            return _Val(Decimal(str(node.this)), approximate="e" in str(node.this).lower())
        if isinstance(node, exp.Neg):
            inner = self.value(node.this)
            return _Val(None if inner.value is None else -inner.value, inner.column_type, inner.approximate)
        if isinstance(node, exp.Abs):
            inner = self.value(node.this)
            return _Val(None if inner.value is None else abs(inner.value), inner.column_type)
        if isinstance(node, exp.Cast):
            return _Val(self.cast(self.value(node.this).value, node.args["to"].this.name))
        raise NotImplementedError(f"oracle cannot evaluate {node.sql()}")

    @staticmethod
    def cast(value: Any, to: str) -> Any:
        if value is None:
            return None
        if to == "DATE":
            return date.fromisoformat(value)
        if to == "TIMESTAMP":
            moment = datetime.fromisoformat(value)
            return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
        if to == "DOUBLE":
            return float(value)
        if to == "FLOAT":
            with np.errstate(over="ignore"):
                return float(np.float32(float(value)))
        if to in ("BIGINT", "INT"):
            return int(value)
        raise NotImplementedError(f"oracle cannot cast to {to}")

    def compare(self, left: _Val, op: Callable[[Any, Any], bool], right: _Val) -> Truth:
        a, b = left.value, right.value
        if a is None or b is None:
            return None
        if self.mode != "exact":
            a, b = self.rounded(left, right), self.rounded(right, left)
        if _is_nan(a) or _is_nan(b):
            return op is operator.ne
        if isinstance(a, datetime) and not isinstance(b, datetime):
            b = datetime.combine(b, time(), UTC)
        if isinstance(b, datetime) and not isinstance(a, datetime):
            a = datetime.combine(a, time(), UTC)
        return op(a, b)

    def rounded(self, mine: _Val, other: _Val) -> Any:
        """`mine` as an engine compares it with `other`."""
        value = mine.value
        if (
            mine.column_type is None
            and isinstance(value, Decimal)
            and other.column_type in ("double", "float")
        ):
            if other.column_type == "float" and self.mode == "round32":
                with np.errstate(over="ignore"):
                    return float(np.float32(float(value)))
            return float(value)
        if (
            isinstance(value, int | Decimal)
            and other.approximate
            and (mine.column_type in ("bigint", "int") or (mine.column_type or "").startswith("decimal"))
        ):
            return float(value)
        if mine.approximate and other.column_type is not None and isinstance(value, Decimal):
            return float(value)
        return value
