"""Index expressions from SQL text: parsed with sqlglot (in its default dialect, but with the
registry's functions read as plain calls, so that `date_format(ts, '%Y')` stays what it says),
bound to the table's column types and checked, constant parts folded, the operands of `+` and `*`
put in the order of their text and casts to a value's own type dropped. The result is the canonical
tree (`pruner.functions.expression`): equal texts, equal expressions.

`EXPRESSION_FORMAT` is the version of what an index definition stores: 1, one registry call over
one column (`hour(ts)`), was the first; 2 is the trees of this module, of which every format-1
text is one with the same canonical text."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.parser import Parser

from pruner.bounded import echo
from pruner.errors import InvalidInputError, InvalidSchemaError
from pruner.functions.conditions import (
    Case,
    Comparator,
    Comparison,
    Connective,
    IsNull,
    Logical,
    Not,
    comparable,
)
from pruner.functions.expression import (
    Arithmetic,
    Call,
    Cast,
    Coalesce,
    ColumnRef,
    Constant,
    Expression,
    Negate,
    Operator,
    arithmetic_type,
    cast_allowed,
)
from pruner.functions.registry import REGISTRY, Literal
from pruner.types import ColumnType, TypeKind, parse_type

EXPRESSION_FORMAT = 2
_STRING = ColumnType(TypeKind.STRING)
_BIGINT = ColumnType(TypeKind.BIGINT)
_DOUBLE = ColumnType(TypeKind.DOUBLE)
_INTEGER_TEXT = re.compile(r"[0-9]+")
_DECIMAL_TEXT = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_COMPARATORS: dict[type[exp.Expr], Comparator] = {
    exp.EQ: Comparator.EQUAL,
    exp.NEQ: Comparator.NOT_EQUAL,
    exp.LT: Comparator.LESS,
    exp.LTE: Comparator.LESS_OR_EQUAL,
    exp.GT: Comparator.GREATER,
    exp.GTE: Comparator.GREATER_OR_EQUAL,
}
_OPERATORS: dict[type[exp.Expr], Operator] = {
    exp.Add: Operator.ADD,
    exp.Sub: Operator.SUBTRACT,
    exp.Mul: Operator.MULTIPLY,
    exp.Div: Operator.DIVIDE,
    exp.IntDiv: Operator.DIVIDE,
    exp.Mod: Operator.MOD,
}
SUPPORTED = "registry functions, + - * / mod, unary -, CAST, COALESCE, CASE, column names and literals"


def _dialect() -> Dialect:
    names = {name.upper() for name in REGISTRY}
    parser = type(
        "IndexExpressionParser",
        (Parser,),
        {
            "FUNCTIONS": {k: v for k, v in Parser.FUNCTIONS.items() if k not in names},
            "FUNCTION_PARSERS": {k: v for k, v in Parser.FUNCTION_PARSERS.items() if k not in names},
        },
    )
    dialect: Dialect = type("IndexExpressions", (Dialect,), {"Parser": parser})()
    return dialect


DIALECT = _dialect()


def parse_sql(text: str) -> exp.Expr:
    """The sqlglot tree of an expression (or of a WHERE clause) with registry calls as plain calls."""
    try:
        tree = DIALECT.parse(text)[0]
    except SqlglotError as exc:
        raise InvalidInputError(f"cannot parse expression {echo(text)}: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise InvalidInputError(f"expression {echo(text)} is nested too deeply") from None
    if tree is None:
        raise InvalidInputError(f"empty expression {echo(text)}")
    return tree


def parse_expression(text: str, column_types: Mapping[str, ColumnType]) -> Expression:
    """The canonical tree of an index expression over a table with these columns. Raises
    InvalidInputError, naming what is wrong, for anything but an expression over at least one
    column made of what `SUPPORTED` lists."""
    expression = bind(parse_sql(text), column_types, text)
    if not expression.columns:
        raise InvalidInputError(f"{echo(text)} names no column")
    if isinstance(expression, ColumnRef):
        raise InvalidInputError(
            f"{echo(text)} is a column, not an expression: index the column itself "
            "(USING column_stats, bloom_filters, secondary_index ...)"
        )
    return expression


def bind(node: exp.Expr, column_types: Mapping[str, ColumnType], text: str) -> Expression:
    """The canonical tree of a sqlglot expression; InvalidInputError when it is not one."""
    return _Binder(column_types, text).bind(node)


class _Binder:
    def __init__(self, column_types: Mapping[str, ColumnType], text: str) -> None:
        self.column_types = column_types
        self.text = text

    def fail(self, message: str) -> InvalidInputError:
        return InvalidInputError(f"index expression {echo(self.text)}: {message}")

    def bind(self, node: exp.Expr) -> Expression:
        binders: dict[type[exp.Expr], Callable[[exp.Expr], Expression]] = {
            exp.Paren: lambda n: self.bind(n.this),
            exp.Column: self.column,
            exp.Literal: self.literal,
            exp.Neg: self.negate,
            exp.Cast: self.cast,
            exp.Coalesce: self.coalesce,
            exp.Anonymous: self.call,
        }
        binder = binders.get(type(node))
        if binder is not None:
            return binder(node)
        operator = _OPERATORS.get(type(node))
        if operator is not None:
            return self.arithmetic(operator, node)
        if isinstance(node, exp.Case | exp.If):
            return self.case(node)
        raise self.fail(f"{echo(node.sql())} is not supported (supported: {SUPPORTED})")

    def case(self, node: exp.Expr) -> Expression:
        """`CASE [operand] WHEN ... THEN ... [ELSE ...] END`, or `IF(condition, a[, b])`."""
        if isinstance(node, exp.If):
            pairs = [(node.this, node.args["true"])]
            default = node.args.get("false")
        else:
            operand = node.this  # CASE x WHEN v THEN ...: WHEN x = v
            pairs = [
                (exp.EQ(this=operand.copy(), expression=w.this) if operand else w.this, w.args["true"])
                for w in node.args["ifs"]
            ]
            default = node.args.get("default")
        conditions = [self.condition(c) for c, _ in pairs]
        values = self.one_type(
            [self.bind(v) for _, v in pairs] + ([self.bind(default)] if default is not None else []), "CASE"
        )
        branches = tuple(zip(conditions, values, strict=False))
        case = Case(branches, values[len(conditions)] if default is not None else None)
        if not case.columns:
            return _fold(case)
        return case

    def condition(self, node: exp.Expr) -> Expression:
        """A CASE branch's condition: a comparison, IS [NOT] NULL, AND / OR / NOT of conditions, or a
        boolean column."""
        node = node.unnest()
        if isinstance(node, exp.And | exp.Or):
            connective = Connective.AND if isinstance(node, exp.And) else Connective.OR
            operands = [self.condition(node.this), self.condition(node.expression)]
            return Logical.of(connective, operands)
        if isinstance(node, exp.Not):
            inner = node.this.unnest()
            if isinstance(inner, exp.Is):
                return self.null_test(inner, negated=True)
            return Not(self.condition(inner))
        if isinstance(node, exp.Is):
            return self.null_test(node, negated=False)
        if isinstance(node, exp.Between):
            low = self.comparison(Comparator.GREATER_OR_EQUAL, node.this, node.args["low"])
            high = self.comparison(Comparator.LESS_OR_EQUAL, node.this, node.args["high"])
            return Logical.of(Connective.AND, [low, high])
        comparator = _COMPARATORS.get(type(node))
        if comparator is not None:
            return self.comparison(comparator, node.this, node.expression)
        bound = self.bind(node)
        if bound.type.kind is not TypeKind.BOOLEAN:
            raise self.fail(f"{echo(node.sql())} is not a condition (a comparison, IS NULL, AND, OR, NOT)")
        return bound

    def comparison(self, comparator: Comparator, left_node: exp.Expr, right_node: exp.Expr) -> Expression:
        left, right = self.bind(left_node), self.bind(right_node)
        if not comparable(left.type, right.type):
            raise self.fail(
                f"cannot compare {left.type} with {right.type} ({left.sql()} {comparator.value} "
                f"{right.sql()}): CAST one of them (decimals to double)"
            )
        if not (left.columns or right.columns):
            raise self.fail(f"the condition {left.sql()} {comparator.value} {right.sql()} reads no column")
        return Comparison.of(comparator, left, right)

    def null_test(self, node: exp.Is, negated: bool) -> Expression:
        if not isinstance(node.expression, exp.Null):
            raise self.fail(f"{echo(node.sql())} is not supported (IS NULL, IS NOT NULL)")
        operand = self.bind(node.this)
        if not operand.columns:
            raise self.fail(f"the condition {echo(node.sql())} reads no column")
        return IsNull(operand, negated)

    def one_type(self, items: list[Expression], what: str) -> list[Expression]:
        """`items` as values of one type: that of the first that reads a column (constants that fit
        it converted), or for constants alone their common type (a bigint with a double: double)."""
        moving = [item for item in items if item.columns]
        if moving:
            target = moving[0].type
        elif {item.type.kind for item in items} == {TypeKind.BIGINT, TypeKind.DOUBLE}:
            target = _DOUBLE
        else:
            target = items[0].type
        converted = []
        for item in items:
            if item.type == target:
                converted.append(item)
            elif isinstance(item, Constant) and _constant_fits(item, target):
                converted.append(Constant(item.literal, target))
            else:
                raise self.fail(f"{what} of {target} and {item.type} ({item.sql()}): CAST them to one type")
        return converted

    def column(self, node: exp.Expr) -> Expression:
        assert isinstance(node, exp.Column)
        if node.table:
            raise self.fail(f"name column {echo(node.name)} without a table ({echo(node.sql())})")
        name = node.name.lower()
        if name not in self.column_types:
            raise self.fail(f"unknown column {echo(name)} (columns: {', '.join(self.column_types)})")
        return ColumnRef(name, self.column_types[name])

    def literal(self, node: exp.Expr) -> Expression:
        text = str(node.this)
        if node.is_string:
            return Constant(text, _STRING)
        if text.isascii() and _INTEGER_TEXT.fullmatch(text):
            return Constant(int(text), _BIGINT)
        if text.isascii() and _DECIMAL_TEXT.fullmatch(text):
            value = float(text)
            if not math.isfinite(value):
                raise self.fail(f"{text} is not a finite double")
            return Constant(value, _DOUBLE)
        raise self.fail(f"cannot read the literal {echo(text)}")

    def negate(self, node: exp.Expr) -> Expression:
        operand = self.numeric(self.bind(node.this), "-")
        return _fold(Negate(operand))

    def numeric(self, operand: Expression, operator: str) -> Expression:
        kind = operand.type.kind
        if kind is TypeKind.DECIMAL:
            raise self.fail(f"{operator} of a decimal is not supported: CAST it to double first")
        if not (kind.is_integer or kind.is_floating):
            raise self.fail(f"{operator} takes numbers, not {operand.type} ({operand.sql()})")
        return operand

    def arithmetic(self, operator: Operator, node: exp.Expr) -> Expression:
        symbol = operator.value
        left = self.numeric(self.bind(node.this), symbol)
        right = self.numeric(self.bind(node.expression), symbol)
        integers = arithmetic_type(left.type, right.type).kind is TypeKind.BIGINT
        if isinstance(node, exp.IntDiv) and not integers:
            raise self.fail("DIV takes integers")
        if operator is Operator.MOD and not integers:
            raise self.fail("mod takes integers")
        if operator.commutative and right.sql() < left.sql():
            left, right = right, left
        return _fold(Arithmetic(operator, left, right))

    def cast(self, node: exp.Expr) -> Expression:
        assert isinstance(node, exp.Cast)
        operand = self.bind(node.this)
        try:
            target = parse_type(node.to.sql())
        except InvalidSchemaError as exc:
            raise self.fail(str(exc)) from None
        if target == operand.type:
            return operand
        if not cast_allowed(operand.type, target):
            raise self.fail(
                f"CAST from {operand.type} to {target} is not supported (integers to wider integers or "
                "double, float to double, date to timestamp, timestamp to date)"
            )
        return _fold(Cast(operand, target))

    def coalesce(self, node: exp.Expr) -> Expression:
        items = [self.bind(item) for item in [node.this, *node.expressions]]
        if not any(item.columns for item in items):
            return _fold(Coalesce(tuple(items)))
        return Coalesce(tuple(self.one_type(items, "COALESCE")))

    def call(self, node: exp.Expr) -> Expression:
        name = node.name.lower()
        function = REGISTRY.get(name)
        if function is None:
            raise self.fail(
                f"unknown function {echo(name)} (known: {', '.join(sorted(REGISTRY))}, mod, coalesce)"
            )
        arguments = list(node.expressions)
        if len(arguments) != len(function.literals) + 1:
            raise self.fail(f"{name} takes {len(function.literals) + 1} argument(s), got {len(arguments)}")
        value = self.bind(arguments.pop(function.leading))
        literals: list[Literal] = []
        for argument, kind in zip(arguments, function.literals, strict=True):
            bound = self.bind(argument)
            literal = bound.literal if isinstance(bound, Constant) else None
            if not isinstance(literal, str | int) or not isinstance(literal, kind):
                raise self.fail(f"{name} takes a {kind.__name__} literal, not {echo(argument.sql())}")
            literals.append(literal)
        if value.type.kind not in function.sources:
            kinds = " or ".join(function.sources)
            raise self.fail(f"{name} takes a value of type {kinds}, not {value.type} ({value.sql()})")
        args = tuple(literals)
        function.check(args)
        return _fold(Call(function, value, function.canonical(args)))


def _constant_fits(constant: Constant, target: ColumnType) -> bool:
    value = constant.literal
    if isinstance(value, str):
        return target.kind is TypeKind.STRING
    bounds = target.kind.integer_bounds
    if bounds is not None:
        return isinstance(value, int) and bounds[0] <= value <= bounds[1]
    return target.kind.is_floating


def _fold(expression: Expression) -> Expression:
    """A part without a column, as the constant it is."""
    if expression.columns:
        return expression
    value = expression.compute({}, 1)[0].as_py()
    if value is None:
        raise InvalidInputError(f"the constant part {expression.sql()} of an index expression is NULL")
    if not isinstance(value, int | float | str):
        raise InvalidInputError(
            f"the constant part {expression.sql()} of an index expression is not a number or a string"
        )
    return Constant(value, expression.type)
