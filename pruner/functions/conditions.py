"""Conditions and `CASE` in index expressions: `CASE WHEN c1 THEN v1 [WHEN ...] [ELSE d] END` (and
`IF(c, a, b)`, which is one), whose conditions are comparisons (`= <> < <= > >=`) of expressions,
`IS [NOT] NULL`, `AND`, `OR`, `NOT` and boolean columns. SQL's three-valued logic throughout: a
comparison with NULL is NULL, `AND` / `OR` are Kleene's, and a branch whose condition is NULL is not
taken; a `CASE` without `ELSE` that takes no branch is NULL. A condition is never an index
expression by itself (it only chooses a branch), and a `CASE` has no order: a range on its columns
says nothing about it, an `=` / `IN` on them maps through it (`pruner.index.functional.image`).

Canonical texts, so that equal conditions written differently are one index: a comparison with a
constant on the left is turned around (`5 < x` is `x > 5`), `=` / `<>` operands and `AND` / `OR`
operands are put in the order of their text."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import pyarrow as pa
import pyarrow.compute as pc

from pruner.functions.expression import Constant, Expression, Inputs, Monotonicity
from pruner.types import ColumnType, TypeKind

BOOLEAN = ColumnType(TypeKind.BOOLEAN)


class Comparator(StrEnum):
    EQUAL = "="
    NOT_EQUAL = "<>"
    LESS = "<"
    LESS_OR_EQUAL = "<="
    GREATER = ">"
    GREATER_OR_EQUAL = ">="

    @property
    def flipped(self) -> Comparator:
        """The comparator with its operands swapped (`a < b` is `b > a`)."""
        return _FLIPPED.get(self, self)

    @property
    def symmetric(self) -> bool:
        return self in (Comparator.EQUAL, Comparator.NOT_EQUAL)


_FLIPPED = {
    Comparator.LESS: Comparator.GREATER,
    Comparator.GREATER: Comparator.LESS,
    Comparator.LESS_OR_EQUAL: Comparator.GREATER_OR_EQUAL,
    Comparator.GREATER_OR_EQUAL: Comparator.LESS_OR_EQUAL,
}
_ARROW_COMPARE = {
    Comparator.EQUAL: pc.equal,
    Comparator.NOT_EQUAL: pc.not_equal,
    Comparator.LESS: pc.less,
    Comparator.LESS_OR_EQUAL: pc.less_equal,
    Comparator.GREATER: pc.greater,
    Comparator.GREATER_OR_EQUAL: pc.greater_equal,
}


def comparable(left: ColumnType, right: ColumnType) -> bool:
    """Whether two operand types compare as every engine compares them: numbers (but decimals)
    with numbers, and otherwise values of one kind (strings, dates, timestamps, booleans)."""
    numbers = all((t.kind.is_integer or t.kind.is_floating) for t in (left, right))
    return numbers or (left.kind is right.kind and left.kind is not TypeKind.DECIMAL)


class Condition(Expression):
    """A boolean node: what a `CASE` branch is chosen by."""

    @property
    def type(self) -> ColumnType:
        return BOOLEAN

    @property
    def order(self) -> Monotonicity:
        return Monotonicity.NONE


@dataclass(frozen=True)
class Comparison(Condition):
    comparator: Comparator
    left: Expression
    right: Expression

    @classmethod
    def of(cls, comparator: Comparator, left: Expression, right: Expression) -> Comparison:
        """The canonical comparison: a constant goes right, symmetric operands in text order."""
        if isinstance(left, Constant) and not isinstance(right, Constant):
            left, right, comparator = right, left, comparator.flipped
        elif comparator.symmetric and not isinstance(right, Constant) and right.sql() < left.sql():
            left, right = right, left
        return cls(comparator, left, right)

    @property
    def children(self) -> tuple[Expression, ...]:
        return (self.left, self.right)

    def sql(self) -> str:
        return f"({self.left.sql()} {self.comparator.value} {self.right.sql()})"

    def compute(self, inputs: Inputs, length: int) -> pa.Array:
        left, right = (_operand(part, inputs, length) for part in (self.left, self.right))
        if left.type != right.type:  # numbers of two types: as bigints, or as doubles if either is
            wider = pa.int64() if all(pa.types.is_integer(v.type) for v in (left, right)) else pa.float64()
            left, right = pc.cast(left, wider), pc.cast(right, wider)
        result: pa.Array = _ARROW_COMPARE[self.comparator](left, right)
        return result


@dataclass(frozen=True)
class _Unary(Condition):
    operand: Expression

    @property
    def children(self) -> tuple[Expression, ...]:
        return (self.operand,)


@dataclass(frozen=True)
class IsNull(_Unary):
    negated: bool = False

    def sql(self) -> str:
        return f"({self.operand.sql()} IS {'NOT ' if self.negated else ''}NULL)"

    def compute(self, inputs: Inputs, length: int) -> pa.Array:
        values = self.operand.compute(inputs, length)
        result: pa.Array = pc.is_valid(values) if self.negated else pc.is_null(values)
        return result


class Connective(StrEnum):
    AND = "AND"
    OR = "OR"


@dataclass(frozen=True)
class Logical(Condition):
    """`AND` / `OR` of two or more conditions, in text order."""

    connective: Connective
    operands: tuple[Expression, ...]

    @classmethod
    def of(cls, connective: Connective, operands: list[Expression]) -> Logical:
        flat: list[Expression] = []
        for operand in operands:  # (a AND b) AND c is one AND of three
            same = isinstance(operand, Logical) and operand.connective is connective
            flat.extend(operand.operands if isinstance(operand, Logical) and same else (operand,))
        return cls(connective, tuple(sorted(flat, key=lambda o: o.sql())))

    @property
    def children(self) -> tuple[Expression, ...]:
        return self.operands

    def sql(self) -> str:
        return "(" + f" {self.connective.value} ".join(o.sql() for o in self.operands) + ")"

    def compute(self, inputs: Inputs, length: int) -> pa.Array:
        combine = pc.and_kleene if self.connective is Connective.AND else pc.or_kleene
        values = [o.compute(inputs, length) for o in self.operands]
        result = values[0]
        for value in values[1:]:
            result = combine(result, value)
        return result


@dataclass(frozen=True)
class Not(_Unary):
    def sql(self) -> str:
        return f"(NOT {self.operand.sql()})"

    def compute(self, inputs: Inputs, length: int) -> pa.Array:
        result: pa.Array = pc.invert(self.operand.compute(inputs, length))
        return result


@dataclass(frozen=True)
class Case(Expression):
    """The value of the first branch whose condition is TRUE, else the default (NULL without one);
    every value is of the expression's type."""

    branches: tuple[tuple[Expression, Expression], ...]
    default: Expression | None = None

    @property
    def type(self) -> ColumnType:
        return self.branches[0][1].type

    @property
    def children(self) -> tuple[Expression, ...]:
        parts = [part for branch in self.branches for part in branch]
        return (*parts, *((self.default,) if self.default is not None else ()))

    @property
    def order(self) -> Monotonicity:
        return Monotonicity.NONE

    def sql(self) -> str:
        whens = " ".join(f"WHEN {c.sql()} THEN {v.sql()}" for c, v in self.branches)
        default = f" ELSE {self.default.sql()}" if self.default is not None else ""
        return f"CASE {whens}{default} END"

    def compute(self, inputs: Inputs, length: int) -> pa.Array:
        arrow_type = self.type.to_arrow()
        # a NULL condition does not take its branch
        conditions = [pc.fill_null(c.compute(inputs, length), False) for c, _ in self.branches]
        values = [pc.cast(v.compute(inputs, length), arrow_type) for _, v in self.branches]
        if self.default is not None:
            values.append(pc.cast(self.default.compute(inputs, length), arrow_type))
        names = [str(i) for i in range(len(conditions))]
        chosen = pa.StructArray.from_arrays(conditions, names=names)
        result: pa.Array = pc.case_when(chosen, *values)
        return result


def _operand(part: Expression, inputs: Inputs, length: int) -> pa.Array:
    return pc.cast(part.compute(inputs, length), part.type.to_arrow())
