"""Index expressions (RFC-63): typed trees over one or more columns of a table — registry calls
nested in any order, arithmetic (`+ - * /`, `mod`), negation, `CAST` between the types it allows,
`COALESCE`, literals (and `CASE`, in `pruner.functions.conditions`). Each node knows its result
type, the columns it reads, how to compute its values with Arrow (the one implementation: index
rows, virtual column values, Spark through an Arrow UDF) and its canonical SQL text, which is its
identity: two expressions are the same index expression when their texts are equal (commutative
operands ordered, redundant casts dropped, constant parts folded by `pruner.functions.parsing`).

Semantics, as SQL engines define them for the rows where they give an answer:
- NULL in, NULL out (but `COALESCE`, `CASE` and `IS NULL`).
- Integer arithmetic is done in bigint; `/` of integers truncates toward zero (Trino's `/`, Spark's
  `div`), `mod` takes the dividend's sign. Where an engine fails the query (overflow, division or
  `mod` by zero), the index holds NULL: no answer depends on such a row. With a double on either
  side the arithmetic is IEEE double (no failure: infinities and NaN).
- Order (`Monotonicity`) is derived from the parts for a tree over one column: a range on that
  column projects onto the index only when the tree never decreases (or never increases) with it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pruner.functions.registry import REGISTRY, Function, Literal, Order, render_literal
from pruner.types import ColumnType, TypeKind

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn

BIGINT = ColumnType(TypeKind.BIGINT)
DOUBLE = ColumnType(TypeKind.DOUBLE)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
Inputs = Mapping[str, pa.Array]


class Monotonicity(StrEnum):
    """How an expression over one column moves as that column grows (NULLs aside)."""

    CONSTANT = "constant"
    INCREASING = "increasing"  # non-decreasing: a <= b implies f(a) <= f(b)
    DECREASING = "decreasing"  # non-increasing
    NONE = "none"

    def negated(self) -> Monotonicity:
        swap = {
            Monotonicity.INCREASING: Monotonicity.DECREASING,
            Monotonicity.DECREASING: Monotonicity.INCREASING,
        }
        return swap.get(self, self)

    def plus(self, other: Monotonicity) -> Monotonicity:
        """The order of a sum of two parts of these orders."""
        if self is Monotonicity.CONSTANT:
            return other
        if other is Monotonicity.CONSTANT or other is self:
            return self
        return Monotonicity.NONE

    def then(self, outer: Monotonicity) -> Monotonicity:
        """The order of `outer(self(x))`."""
        if Monotonicity.CONSTANT in (self, outer):
            return Monotonicity.CONSTANT
        if Monotonicity.NONE in (self, outer):
            return Monotonicity.NONE
        return Monotonicity.INCREASING if self is outer else Monotonicity.DECREASING

    @property
    def projects(self) -> bool:
        """Whether a range on the column maps to a range of the expression."""
        return self in (Monotonicity.INCREASING, Monotonicity.DECREASING)


class Expression:
    """A node of an index expression."""

    @property
    def type(self) -> ColumnType:
        raise NotImplementedError

    @property
    def children(self) -> tuple[Expression, ...]:
        """The expression's operands (none for a column or a constant)."""
        return ()

    @property
    def columns(self) -> frozenset[str]:
        """The table columns the expression reads."""
        return frozenset().union(*(child.columns for child in self.children))

    @property
    def order(self) -> Monotonicity:
        """How the expression moves with its one column (NONE over several: see `projects`)."""
        raise NotImplementedError

    def sql(self) -> str:
        raise NotImplementedError

    def compute(self, inputs: Inputs, length: int) -> pa.Array:
        """The expression's values for `length` rows whose columns are `inputs`."""
        raise NotImplementedError

    # Derived -------------------------------------------------------------------------------
    @property
    def source(self) -> str | None:
        """The one column the expression reads, None when it reads several."""
        return next(iter(self.columns)) if len(self.columns) == 1 else None

    @property
    def projects(self) -> bool:
        """Whether a range on its one column projects onto the expression's values."""
        return self.source is not None and self.order.projects

    def arrow(self, table: pa.Table | Inputs) -> pa.Array:
        """The expression's values for the rows of `table` (which holds at least its columns)."""
        inputs: dict[str, pa.Array] = {}
        length = table.num_rows if isinstance(table, pa.Table) else None
        for name in self.columns:
            values = table[name]
            if isinstance(values, pa.ChunkedArray):
                values = values.combine_chunks()
            inputs[name] = values
            length = len(values)
        return pc.cast(self.compute(inputs, length or 0), self.type.to_arrow())

    def value(self, **sources: Any) -> Any:
        """The expression of one row given as Python values (None for NULL)."""
        types = self.column_types()
        return self.arrow({n: pa.array([v], types[n].to_arrow()) for n, v in sources.items()})[0].as_py()

    def column_types(self) -> dict[str, ColumnType]:
        out: dict[str, ColumnType] = {}
        for node in self.walk():
            if isinstance(node, ColumnRef):
                out[node.name] = node.column_type
        return out

    def walk(self) -> list[Expression]:
        """The expression and every part of it, outermost first."""
        return [self, *(node for child in self.children for node in child.walk())]

    def spark(self, column: Callable[[str], SparkColumn]) -> SparkColumn:
        """A Spark column computing the expression, given each source column by name: a registry
        call over a column uses the function's Spark implementation, anything else this tree's
        Arrow implementation as an Arrow UDF (the same values by construction)."""
        from pyspark.sql.pandas.functions import arrow_udf

        names = sorted(self.columns)
        result_type = self.type

        def scalar(*values: pa.Array) -> pa.Array:
            return self.arrow(dict(zip(names, values, strict=True)))

        # pyspark's stubs lack the type-hinted form, which its runtime prefers (no warning).
        udf = arrow_udf(scalar, result_type.to_spark_ddl())  # type: ignore[call-overload]
        result: SparkColumn = udf(*(column(n) for n in names))
        return result

    def key(self) -> str:
        """The identity of the expression: its canonical text."""
        return self.sql()

    def __str__(self) -> str:
        return self.sql()


@dataclass(frozen=True)
class ColumnRef(Expression):
    name: str
    column_type: ColumnType

    @property
    def type(self) -> ColumnType:
        return self.column_type

    @property
    def columns(self) -> frozenset[str]:
        return frozenset((self.name,))

    @property
    def order(self) -> Monotonicity:
        return Monotonicity.INCREASING

    def sql(self) -> str:
        return self.name if self.name.isidentifier() and self.name.isascii() else f'"{self.name}"'

    def compute(self, inputs: Inputs, length: int) -> pa.Array:
        return inputs[self.name]


@dataclass(frozen=True)
class Constant(Expression):
    """A literal: a bigint, a double or a string."""

    literal: int | float | str
    literal_type: ColumnType

    @property
    def type(self) -> ColumnType:
        return self.literal_type

    @property
    def order(self) -> Monotonicity:
        return Monotonicity.CONSTANT

    def sql(self) -> str:
        if isinstance(self.literal, float):
            text = repr(self.literal)
            return text if text[0].isdigit() else f"({text})"
        if isinstance(self.literal, int) and self.literal < 0:
            return f"({self.literal})"
        return render_literal(self.literal)

    def compute(self, inputs: Inputs, length: int) -> pa.Array:
        return pa.array([self.literal] * length, self.type.to_arrow())


@dataclass(frozen=True)
class Call(Expression):
    """A registry function applied to an expression, with its literal arguments."""

    function: Function
    argument: Expression
    args: tuple[Literal, ...] = ()

    @property
    def type(self) -> ColumnType:
        return self.function.result(self.argument.type)

    @property
    def children(self) -> tuple[Expression, ...]:
        return (self.argument,)

    @property
    def order(self) -> Monotonicity:
        own = (
            Monotonicity.INCREASING
            if self.function.order(self.args) == Order.MONOTONIC
            else Monotonicity.NONE
        )
        return self.argument.order.then(own)

    def sql(self) -> str:
        return self.function.render(self.argument.sql(), self.args)

    def compute(self, inputs: Inputs, length: int) -> pa.Array:
        values = pc.cast(self.argument.compute(inputs, length), self.argument.type.to_arrow())
        return self.function.arrow(values, self.args)

    def spark(self, column: Callable[[str], SparkColumn]) -> SparkColumn:
        if isinstance(self.argument, ColumnRef):
            source = self.argument
            return self.function.spark(column(source.name), source.type, self.args).cast(
                self.type.to_spark_ddl()
            )
        return super().spark(column)


class Operator(StrEnum):
    ADD = "+"
    SUBTRACT = "-"
    MULTIPLY = "*"
    DIVIDE = "/"
    MOD = "mod"

    @property
    def commutative(self) -> bool:
        return self in (Operator.ADD, Operator.MULTIPLY)


_ARROW_CHECKED = {
    Operator.ADD: pc.add_checked,
    Operator.SUBTRACT: pc.subtract_checked,
    Operator.MULTIPLY: pc.multiply_checked,
    Operator.DIVIDE: pc.divide_checked,
}
_ARROW_DOUBLE = {
    Operator.ADD: pc.add,
    Operator.SUBTRACT: pc.subtract,
    Operator.MULTIPLY: pc.multiply,
    Operator.DIVIDE: pc.divide,
}


def arithmetic_type(left: ColumnType, right: ColumnType) -> ColumnType:
    """bigint when both sides are integers, double when either is floating point."""
    return BIGINT if left.kind.is_integer and right.kind.is_integer else DOUBLE


@dataclass(frozen=True)
class Arithmetic(Expression):
    operator: Operator
    left: Expression
    right: Expression

    @property
    def type(self) -> ColumnType:
        return arithmetic_type(self.left.type, self.right.type)

    @property
    def children(self) -> tuple[Expression, ...]:
        return (self.left, self.right)

    @property
    def order(self) -> Monotonicity:
        left, right = self.left.order, self.right.order
        if self.operator is Operator.ADD:
            return left.plus(right)
        if self.operator is Operator.SUBTRACT:
            return left.plus(right.negated())
        # Constant parts are folded when parsed: a Constant is the only part that does not move.
        if self.operator is Operator.MULTIPLY and isinstance(self.left, Constant):
            factor, moving = self.left.literal, right
        elif self.operator in (Operator.MULTIPLY, Operator.DIVIDE) and isinstance(self.right, Constant):
            factor, moving = self.right.literal, left
        else:
            return Monotonicity.NONE
        if not isinstance(factor, int | float) or factor == 0:
            return Monotonicity.NONE
        return moving if factor > 0 else moving.negated()

    def sql(self) -> str:
        if self.operator is Operator.MOD:
            return f"mod({self.left.sql()}, {self.right.sql()})"
        return f"{_operand(self.left)} {self.operator.value} {_operand(self.right)}"

    def compute(self, inputs: Inputs, length: int) -> pa.Array:
        left = self.left.compute(inputs, length)
        right = self.right.compute(inputs, length)
        if self.type == DOUBLE:
            left, right = pc.cast(left, pa.float64()), pc.cast(right, pa.float64())
            if self.operator is Operator.MOD:
                raise AssertionError("mod of doubles is refused when parsed")
            return _ARROW_DOUBLE[self.operator](left, right)
        left, right = pc.cast(left, pa.int64()), pc.cast(right, pa.int64())
        if self.operator is Operator.MOD:
            return _exact(self.operator, left, right)
        try:
            return _ARROW_CHECKED[self.operator](left, right)
        except pa.ArrowInvalid:  # an overflow or a division by zero somewhere: row by row
            return _exact(self.operator, left, right)


def _operand(node: Expression) -> str:
    return (
        f"({node.sql()})"
        if isinstance(node, Arithmetic) and node.operator is not Operator.MOD
        else node.sql()
    )


def _exact(operator: Operator, left: pa.Array, right: pa.Array) -> pa.Array:
    """Integer arithmetic in Python's exact integers, NULL where the result is not a bigint or the
    divisor is zero."""
    out: list[int | None] = []
    for a, b in zip(left.to_pylist(), right.to_pylist(), strict=True):
        out.append(None if a is None or b is None else _exact_one(operator, a, b))
    return pa.array(out, pa.int64())


def _exact_one(operator: Operator, a: int, b: int) -> int | None:
    if operator in (Operator.DIVIDE, Operator.MOD):
        if b == 0:
            return None
        quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # toward zero
        result = quotient if operator is Operator.DIVIDE else a - quotient * b
    elif operator is Operator.ADD:
        result = a + b
    elif operator is Operator.SUBTRACT:
        result = a - b
    else:
        result = a * b
    return result if INT64_MIN <= result <= INT64_MAX else None


@dataclass(frozen=True)
class Negate(Expression):
    operand: Expression

    @property
    def type(self) -> ColumnType:
        return self.operand.type if self.operand.type.kind.is_floating else BIGINT

    @property
    def children(self) -> tuple[Expression, ...]:
        return (self.operand,)

    @property
    def order(self) -> Monotonicity:
        return self.operand.order.negated()

    def sql(self) -> str:
        return f"-({self.operand.sql()})"

    def compute(self, inputs: Inputs, length: int) -> pa.Array:
        if self.type.kind.is_floating:
            return pc.negate(self.operand.compute(inputs, length))
        # 0 - x, so that -(-2^63) is NULL as every integer overflow is
        return Arithmetic(Operator.SUBTRACT, Constant(0, BIGINT), self.operand).compute(inputs, length)


# The casts an index expression may hold: those whose value every engine computes alike.
def cast_allowed(source: ColumnType, target: ColumnType) -> bool:
    if source.kind.is_integer:
        return target.kind in (TypeKind.BIGINT, TypeKind.DOUBLE) or (
            target.kind.is_integer and _bits(target) >= _bits(source)
        )
    if source.kind.is_floating:
        return target.kind is TypeKind.DOUBLE
    return (source.kind, target.kind) in (
        (TypeKind.DATE, TypeKind.TIMESTAMP),
        (TypeKind.TIMESTAMP, TypeKind.DATE),
    )


def _bits(t: ColumnType) -> int:
    bounds = t.kind.integer_bounds
    assert bounds is not None
    return bounds[1].bit_length()


@dataclass(frozen=True)
class Cast(Expression):
    operand: Expression
    target: ColumnType

    @property
    def type(self) -> ColumnType:
        return self.target

    @property
    def children(self) -> tuple[Expression, ...]:
        return (self.operand,)

    @property
    def order(self) -> Monotonicity:
        return self.operand.order  # every allowed cast keeps the order (a timestamp's date: floor)

    def sql(self) -> str:
        return f"CAST({self.operand.sql()} AS {self.target})"

    def compute(self, inputs: Inputs, length: int) -> pa.Array:
        values = pc.cast(self.operand.compute(inputs, length), self.operand.type.to_arrow())
        if self.operand.type.kind is TypeKind.TIMESTAMP and self.target.kind is TypeKind.DATE:
            return REGISTRY["to_date"].arrow(values, ())
        return pc.cast(values, self.target.to_arrow())


@dataclass(frozen=True)
class Coalesce(Expression):
    """The first non-NULL of its items (all of one type)."""

    items: tuple[Expression, ...]

    @property
    def type(self) -> ColumnType:
        return self.items[0].type

    @property
    def children(self) -> tuple[Expression, ...]:
        return self.items

    @property
    def order(self) -> Monotonicity:
        return Monotonicity.NONE

    def sql(self) -> str:
        return f"coalesce({', '.join(item.sql() for item in self.items)})"

    def compute(self, inputs: Inputs, length: int) -> pa.Array:
        arrow_type = self.type.to_arrow()
        return pc.coalesce(*(pc.cast(item.compute(inputs, length), arrow_type) for item in self.items))
