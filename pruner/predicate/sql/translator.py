"""The translation itself. Every sub-expression is translated with a polarity: the rows where it is
TRUE, or (under a NOT) the rows where it is FALSE. NULL is neither, so NOT never turns "unknown"
into a match, and De Morgan's laws apply exactly: AND is an intersection (exact), OR a column-wise
union (a widening when the operands constrain different columns; noted). Comparisons, BETWEEN, IN,
IS [NOT] NULL, IS [NOT] TRUE/FALSE, a bare boolean column, LIKE, `is_nan` and TRUE/FALSE/NULL are
understood; anything else (column against column, functions or arithmetic on columns, subqueries,
CASE, ...) becomes "every row" with a note, whatever its polarity. NaN: on float and double columns
NaN compares false, so comparisons, IN and BETWEEN exclude it, and `is_nan(x)` matches exactly it
(`x > 5 OR is_nan(x)` is what Spark's `x > 5` means); but every negation (`<>`, `NOT (x < v)`, NOT
IN, NOT BETWEEN) is TRUE for NaN, so their domains allow NaN; `NOT is_nan(x)` becomes
`x IS NOT NULL` (noted)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlglot import exp

from pruner.errors import InvalidInputError
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.sql.grids import (
    IDENTITY,
    Dates,
    Floats,
    Grid,
    candidates,
    compare_domain,
    numeric_grid,
)
from pruner.predicate.sql.literals import (
    Literal,
    LiteralError,
    NotLiteralError,
    error_reason,
    read_literal,
    to_decimal,
)
from pruner.predicate.sql.parsing import (
    COMPARISONS,
    FLIPPED,
    NEGATED,
    chain_operands,
    columns_by_name,
    expressions_as_columns,
    is_column,
    lookup_column,
    parse,
    sql_text,
    unparen,
)
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import is_nan, normalize
from pruner.types import Column, TableSchema, TypeKind


@dataclass(frozen=True)
class Translation:
    """A superset of the rows matching a WHERE clause, and how it was widened."""

    domain: TupleDomain
    widened: tuple[str, ...]


def translate(where: str, schema: TableSchema, expressions: Mapping[str, str] | None = None) -> Translation:
    """Translate the WHERE clause `where` (without the keyword) over the columns of `schema`.
    `expressions` maps indexed expressions (`Expression.key()`) to the virtual column named after
    their functional index; a part of `where` equal to one is read as that column (which `schema`
    must then include)."""
    tree = parse(where)
    if expressions:
        tree = expressions_as_columns(tree, schema, expressions)
    translator = _Translator(schema)
    try:
        domain = translator.predicate(tree, negated=False)
    except RecursionError:
        raise InvalidInputError("WHERE clause is nested too deeply to translate") from None
    return Translation(domain, tuple(translator.notes))


_WILDCARDS = re.compile(r"[%_\\]")


@dataclass
class _Translator:
    schema: TableSchema
    notes: list[str] = field(default_factory=list)
    texts: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.columns = columns_by_name(self.schema)

    def sql(self, node: exp.Expr) -> str:
        """The (shortened) SQL text of a node, generated once per node: a note about one item of a
        long IN list would otherwise print the whole list for every item."""
        key = id(node)
        if key not in self.texts:
            self.texts[key] = sql_text(node)
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
            operands = chain_operands(node, type(node))
            parts = [self.predicate(operand, negated) for operand in operands]
            return self.combine(parts, isinstance(node, exp.And) != negated, node, negated)
        if isinstance(node, exp.Boolean):
            return TupleDomain.all() if bool(node.this) != negated else TupleDomain.none()
        if isinstance(node, exp.Null):
            return TupleDomain.none()
        if is_column(node):
            return self.boolean_column(node, value=not negated)
        if type(node) in COMPARISONS:
            return self.comparison(node.this, COMPARISONS[type(node)], node.expression, negated, node)
        if isinstance(node, exp.Between):
            return self.between(node, negated)
        if isinstance(node, exp.In):
            return self.in_list(node, negated)
        if isinstance(node, exp.Is):
            return self.is_test(node, negated)
        if isinstance(node, exp.Escape | exp.Like | exp.ILike):
            return self.like(node, negated)
        if isinstance(node, exp.IsNan):
            return self.is_nan(node, negated)
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
            if is_column(column) and column.find_ancestor(exp.Query, exp.Lambda) is None:
                self.column(column)  # an unknown column is an error even where it is ignored
        self.note(note)
        return TupleDomain.all()

    def column(self, node: exp.Expr) -> Column:
        return lookup_column(node, self.columns, self.schema)

    # Atoms ---------------------------------------------------------------------------------

    def boolean_column(self, node: exp.Expr, value: bool) -> TupleDomain:
        column = self.column(node)
        if column.type.kind is not TypeKind.BOOLEAN:
            return self.unsupported(node, f"non-boolean column {column.name} used as a condition: ignored")
        return _single(column, Domain.single_value(value))

    def comparison(
        self, left: exp.Expr, op: str, right: exp.Expr, negated: bool, source: exp.Expr
    ) -> TupleDomain:
        left, right = unparen(left), unparen(right)
        if is_column(left) and is_column(right):
            return self.unsupported(source, f"comparison between columns {self.sql(source)}: ignored")
        if is_column(right):
            left, right, op = right, left, FLIPPED[op]
        if not is_column(left):
            return self.unsupported(source, _not_indexed(left, right, self.sql(source)))
        column = self.column(left)
        try:
            literal = read_literal(right)
        except NotLiteralError as exc:
            if any(is_column(c) for c in right.find_all(exp.Column)):
                return self.unsupported(source, _not_indexed(left, right, self.sql(source)))
            return self.unsupported(source, f"{exc}: {self.sql(source)} ignored")
        except LiteralError as exc:
            raise InvalidInputError(
                f"cannot compare column {column.name} with {exc.text}: {exc.reason}"
            ) from None
        return self.compare(column, op, literal, negated, source)

    def compare(
        self, column: Column, op: str, literal: Literal, negated: bool, source: exp.Expr
    ) -> TupleDomain:
        """`column op literal` is TRUE (or FALSE, if `negated`)."""
        value = literal.value
        if value is None:
            return TupleDomain.none()
        nan_matches = (op == "<>") != negated  # a NaN operand makes the comparison TRUE
        if is_nan(value) and column.type.kind.is_numeric:
            return _single(column, Domain.not_null()) if nan_matches else TupleDomain.none()
        op = NEGATED[op] if negated else op
        grid, reference, low, high = self.bounds(column, literal, op)
        domain = compare_domain(op, grid, low, high)
        if column.type.kind is TypeKind.BOOLEAN:  # `b <> FALSE` is `b = TRUE`
            domain = domain.intersect(Domain.multiple_values((False, True)))
        elif (low, high) != (reference, reference) and domain != compare_domain(
            op, grid, reference, reference
        ):
            self.note(
                f"{self.sql(source)}: literal {literal.sql} is inexact in {column.type}; "
                "widened to cover floating-point rounding"
            )
        if column.type.kind.is_floating and nan_matches:
            domain = Domain(domain.values, domain.null_allowed, nan_allowed=True)
        return _single(column, domain)

    def bounds(self, column: Column, literal: Literal, op: str) -> tuple[Grid, Any, Any, Any]:
        """The grid of the column, the value engines usually compare the literal as (its exact
        value, rounded for a floating column), and the range of the values it may be compared as."""
        value, column_type = literal.value, column.type
        if (
            column_type.kind.is_numeric
            and isinstance(value, int | float | Decimal)
            and not isinstance(value, bool)
        ):
            grid = numeric_grid(column_type)
            exact = to_decimal(value)
            values = candidates(grid, exact, literal.approximate, op)
            reference = exact
            if isinstance(grid, Floats) and exact.is_finite():
                reference = Decimal(grid.nearest(exact))
            return grid, reference, min(values), max(values)
        if column_type.kind is TypeKind.DATE and isinstance(value, datetime):
            return Dates(), value, value, value
        try:
            converted = normalize(value, column_type)
        except InvalidInputError as exc:
            raise InvalidInputError(
                f"cannot compare column {column.name} ({column_type}) with {literal.sql}: {error_reason(exc)}"
            ) from None
        return IDENTITY, converted, converted, converted

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
        subject, test = unparen(node.this), unparen(node.expression)
        if not is_column(subject):
            return self.unsupported(node, f"{self.sql(node)} not supported: ignored")
        column = self.column(subject)
        if isinstance(test, exp.Null):
            return _single(column, Domain.not_null() if negated else Domain.only_null())
        if isinstance(test, exp.Boolean) and column.type.kind is TypeKind.BOOLEAN:
            value = bool(test.this)
            if negated:  # x IS NOT TRUE: false or NULL
                return _single(column, Domain(SortedRangeSet.of_values(not value), True))
            return _single(column, Domain.single_value(value))
        return self.unsupported(node, f"{self.sql(node)} not supported: ignored")

    def is_nan(self, node: exp.IsNan, negated: bool) -> TupleDomain:
        """`is_nan(x)` on a float or double column: its NaN rows; negated, its non-null rows (NaN
        among them: the widening every negation on such a column takes, module docstring)."""
        subject = unparen(node.this)
        if not is_column(subject):
            return self.unsupported(node, f"{self.sql(node)} not supported: ignored")
        column = self.column(subject)
        if not column.type.kind.is_floating:
            return self.unsupported(node, f"{self.sql(node)} on {column.type} column {column.name}: ignored")
        if negated:
            self.note(f"NOT {self.sql(node)} keeps NaN: widened to {column.name} IS NOT NULL")
            return _single(column, Domain.not_null())
        return _single(column, Domain.only_nan())

    def like(self, node: exp.Expr, negated: bool) -> TupleDomain:
        escape = isinstance(node, exp.Escape)
        like = node.this if escape else node
        if escape and isinstance(like, exp.Like | exp.ILike) and like.args.get("negate"):
            negated = not negated
        if not isinstance(like, exp.Like | exp.ILike):
            return self.unsupported(node, f"{self.sql(node)} not supported: ignored")
        subject, pattern_node = unparen(like.this), unparen(like.expression)
        if not is_column(subject):
            return self.unsupported(node, f"{self.sql(node)} not supported: ignored")
        column = self.column(subject)
        if column.type.kind is not TypeKind.STRING:
            return self.unsupported(node, f"LIKE on {column.type} column {column.name}: ignored")
        try:
            pattern = read_literal(pattern_node).value
        except NotLiteralError:
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


def _not_indexed(left: exp.Expr, right: exp.Expr, source: str) -> str:
    for side in (left, right):
        if not is_column(side) and any(is_column(c) for c in side.find_all(exp.Column)):
            kind = "function" if isinstance(side, exp.Func) else "expression"
            return f"{kind} {sql_text(side)} not indexed: {source} ignored"
    return f"{source} has no column: ignored"


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
