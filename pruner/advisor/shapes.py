"""The shape of a predicate, as the workload log keeps it and the advisor reads it: for each thing
the predicate constrains — a column, an expression over columns (`hour(ts)`), or a string's text —
what it asks of it (`Operation`: equal to one or a list of values, a range, NULL, or text that
contains a fragment or words), how many values, and the longest literal fragment of a text
condition; literal values only when the log is told to keep them. Shapes come from the bound
predicate the planner took (its TupleDomain, whose virtual columns stand for indexed expressions,
and its text condition) and from the conditions over computed values that no index holds, which
binding leaves out and clients send apart (`unindexed_conditions`), as lakeprune SQL. Pure: no
files, no indexes, no I/O."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sqlglot import exp

from pruner.errors import InvalidInputError
from pruner.functions.parsing import bind
from pruner.predicate.domain import Domain
from pruner.predicate.sql.parsing import is_column, parse, unparen
from pruner.predicate.text import Case, TextAll, TextAny, TextCondition, TextMatch
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import Value
from pruner.types import ColumnType

# Literals kept per shape when the log keeps literals: an IN list's first ones.
MAX_LITERALS = 20
_COMPARISONS = (exp.EQ, exp.NullSafeEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


class Operation(StrEnum):
    """What a predicate asks of a target."""

    EQUAL = "equal"  # = or IN: `values` values
    RANGE = "range"  # <, <=, >, >=, BETWEEN, a prefix LIKE
    NULL = "null"  # IS NULL only
    TEXT = "text"  # contains a fragment (infix LIKE, strpos, a regex's literal run) or words


@dataclass(frozen=True, order=True)
class Shape:
    """One constraint of a predicate, without its values unless `literals` were kept."""

    target: str  # a column's name, an expression's canonical text, or a text subject (`lower(msg)`)
    operation: Operation
    expression: bool = False  # `target` is an expression over columns, not a column
    values: int = 0  # EQUAL: how many values (1 for =)
    fragment: int = 0  # TEXT: the longest literal fragment, in characters (0: words only)
    literals: tuple[str, ...] = ()

    @property
    def signature(self) -> tuple[str, Operation, bool]:
        """What shapes of one kind share: the advisor counts queries per signature."""
        return (self.target, self.operation, self.expression)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"target": self.target, "operation": self.operation.value}
        if self.expression:
            data["expression"] = True
        if self.values:
            data["values"] = self.values
        if self.fragment:
            data["fragment"] = self.fragment
        if self.literals:
            data["literals"] = list(self.literals)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Shape:
        return cls(
            str(data["target"]),
            Operation(data["operation"]),
            bool(data.get("expression", False)),
            int(data.get("values", 0)),
            int(data.get("fragment", 0)),
            tuple(str(v) for v in data.get("literals", ())),
        )


def domain_shapes(domain: TupleDomain, expressions: Mapping[str, str], keep_literals: bool) -> list[Shape]:
    """A shape per constrained column of `domain`; a virtual column (a name in `expressions`, which
    maps it to its index's expression) is its expression."""
    shapes: list[Shape] = []
    domains = domain.domains
    if domains is None:  # NONE: no row, nothing to learn
        return shapes
    for column, column_domain in domains.items():
        shape = _domain_shape(column, column_domain, expressions, keep_literals)
        if shape is not None:
            shapes.append(shape)
    return shapes


def _domain_shape(
    column: str, domain: Domain, expressions: Mapping[str, str], keep_literals: bool
) -> Shape | None:
    target, expression = (expressions[column], True) if column in expressions else (column, False)
    if domain.is_all():
        return None
    if domain.is_only_null():
        return Shape(target, Operation.NULL, expression)
    values = domain.values
    if values.is_all():  # IS NOT NULL: every file with a value may match
        return None
    if values.is_discrete():
        points = values.discrete_values()
        return Shape(target, Operation.EQUAL, expression, len(points), 0, _literals(points, keep_literals))
    return Shape(target, Operation.RANGE, expression, literals=_literals((str(values),), keep_literals))


def text_shapes(condition: TextCondition, keep_literals: bool) -> list[Shape]:
    """A shape per text atom of `condition` that a text index could answer: one with words, or a
    fragment that does not begin the value (a prefix is a range, which column stats answer)."""
    shapes: list[Shape] = []
    for leaf in _leaves(condition):
        infix = [f.text for f in leaf.fragments if not f.at_start]
        if not infix and not leaf.words:
            continue
        literals = _literals((*infix, *leaf.words), keep_literals)
        longest = max((len(f) for f in infix), default=0)
        computed = leaf.subject.expression or leaf.subject.case is not Case.AS_IS
        shapes.append(Shape(leaf.subject.sql(), Operation.TEXT, computed, 0, longest, literals))
    return shapes


def _leaves(condition: TextCondition) -> Iterable[TextMatch]:
    if isinstance(condition, TextMatch):
        yield condition
    elif isinstance(condition, TextAll | TextAny):
        for part in condition.parts:
            yield from _leaves(part)


def unindexed_conditions(
    where: str, types: Mapping[str, ColumnType], indexed: Mapping[str, str]
) -> tuple[str, ...]:
    """The comparisons in the WHERE clause `where` (lakeprune SQL) of a computed value that an
    index could hold (an expression `pruner.functions` binds) but none does (its canonical text is
    not a key of `indexed`), as SQL texts: what binding leaves out, and a client sends apart for
    the sidecar's workload log. Text that does not parse has none."""
    try:
        tree = parse(where)
    except InvalidInputError:
        return ()
    found = [
        condition.sql()
        for condition, operand in _comparisons(tree)
        if (key := _expression_key(operand, types)) is not None and key not in indexed
    ]
    return tuple(dict.fromkeys(found))


def condition_shapes(
    conditions: Sequence[str], types: Mapping[str, ColumnType], keep_literals: bool
) -> list[Shape]:
    """The shapes of `conditions` (`unindexed_conditions`' texts) over computed values; a text that
    does not parse or compares no computed value has none."""
    shapes: list[Shape] = []
    for text in conditions:
        try:
            tree = parse(text)
        except InvalidInputError:
            continue
        for condition, operand in _comparisons(tree):
            key = _expression_key(operand, types)
            if key is None:
                continue
            if isinstance(condition, exp.In):
                listed = [v.sql() for v in condition.expressions]
                shapes.append(
                    Shape(key, Operation.EQUAL, True, len(listed), 0, _literals(listed, keep_literals))
                )
            elif isinstance(condition, exp.EQ | exp.NullSafeEQ):
                other = condition.expression if operand is condition.this else condition.this
                shapes.append(
                    Shape(key, Operation.EQUAL, True, 1, 0, _literals((other.sql(),), keep_literals))
                )
            else:
                shapes.append(
                    Shape(key, Operation.RANGE, True, literals=_literals((condition.sql(),), keep_literals))
                )
    return shapes


def _comparisons(tree: exp.Expr) -> Iterable[tuple[exp.Expr, exp.Expr]]:
    """Each comparison in `tree` (=, <, ..., IN, BETWEEN) with each of its operands that is neither
    a column nor a literal."""
    for node in tree.find_all(*_COMPARISONS, exp.In, exp.Between):
        sides = [node.this] if isinstance(node, exp.In | exp.Between) else [node.this, node.expression]
        for side in sides:
            operand = unparen(side)
            if not is_column(operand) and not isinstance(operand, exp.Literal) and operand.find(exp.Column):
                yield node, operand


def _expression_key(node: exp.Expr, types: Mapping[str, ColumnType]) -> str | None:
    try:
        return bind(node, types, node.sql()).key()
    except InvalidInputError:
        return None


def _literals(values: Iterable[Value | str], keep: bool) -> tuple[str, ...]:
    if not keep:
        return ()
    out: list[str] = []
    for value in values:
        if len(out) == MAX_LITERALS:
            break
        out.append(str(value))
    return tuple(out)
