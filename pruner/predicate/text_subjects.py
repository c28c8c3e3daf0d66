"""Which text a text index, or a text atom of a predicate, is about: `text_subject` binds a sqlglot
node over a table's columns (`msg`, `lower(msg)`, `substring(msg, 1, 80)`,
`upper(regexp_extract(url, '^https?://([a-z.]+)', 1))`) to its `TextSubject`, the same way for
both, so that an index answers exactly the atoms over its own subject. A subject is a string
column or a string expression of the function registry (its canonical text), perhaps under one
outermost `lower` / `upper`: an engine's case mapping differs from the registry's on some letters,
and the index holds the terms of both mappings only of the text it cases last (`case_forms`), so a
case mapping inside an expression is refused."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlglot import exp

from pruner.bounded import echo
from pruner.errors import InvalidInputError
from pruner.functions.expression import Call, ColumnRef, Expression
from pruner.functions.parsing import bind
from pruner.predicate.text import Case, TextSubject
from pruner.types import ColumnType, TypeKind

_CASES = {"lower": Case.LOWER, "upper": Case.UPPER}


@dataclass(frozen=True)
class BoundSubject:
    """A subject and the expression whose values it cases (a `ColumnRef` for a column)."""

    subject: TextSubject
    values: Expression


def text_subject(node: exp.Expr, types: Mapping[str, ColumnType], text: str) -> BoundSubject:
    """The subject of `node` (written as `text`, for messages); InvalidInputError, saying why, for
    anything but a string column or expression, or `lower` / `upper` of one."""
    expression = bind(node, types, text)
    case = Case.AS_IS
    if isinstance(expression, Call) and expression.function.name in _CASES:
        case, expression = _CASES[expression.function.name], expression.argument
    if expression.type.kind is not TypeKind.STRING:
        raise InvalidInputError(f"{echo(text)} is {expression.type}, not a string")
    if not expression.columns:
        raise InvalidInputError(f"{echo(text)} names no column")
    if isinstance(expression, ColumnRef):
        return BoundSubject(TextSubject(expression.name, case), expression)
    inner = [n for n in expression.walk() if isinstance(n, Call) and n.function.name in _CASES]
    if inner:
        raise InvalidInputError(
            f"{echo(text)} cases text inside an expression: only an outermost lower / upper "
            "(engines case some letters differently from the index)"
        )
    return BoundSubject(TextSubject(expression.key(), case, expression=True), expression)


def expression_subject(node: exp.Expr, types: Mapping[str, ColumnType], text: str, case: Case) -> TextSubject:
    """The subject of a text atom over the string expression `node` (not a column), cased by `case`
    (the atom's own `lower` / `upper` around it); InvalidInputError as `text_subject`."""
    bound = text_subject(node, types, text)
    if bound.subject.case is not Case.AS_IS:
        raise InvalidInputError(f"{echo(text)} cases its text twice")
    return TextSubject(bound.subject.source, case, expression=True)
