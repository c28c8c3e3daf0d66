"""The text side of a WHERE clause (issue 37): `text_condition(where, schema)` reads the same text as
`translate` and returns the `TextCondition` every matching row satisfies, a superset like the
TupleDomain beside it, and a note for every text atom it could not use. Polarity as in the
translator: AND is `all_of`, OR `any_of`, NOT flips; a text atom that must be FALSE (NOT LIKE, a
NOT over `contains`) requires nothing, but a position comparison is negated exactly (`NOT
(strpos(col, 'x') = 0)` requires `x`); a NULL atom or FALSE matches no row. Subjects are STRING
columns or string expressions of the registry (`substring(msg, 1, 80)`), or `lower` / `upper` of
one (the engine's case mapping, simple per code point or full: the index keeps both forms;
`pruner.predicate.text_subjects`). Atoms, each read by `pruner.predicate.text_atoms`: `LIKE` /
`ILIKE` with an optional `ESCAPE`, `strpos` / `position` / `locate` / `instr` compared so that 0
fails, `contains`, `starts_with`, `ends_with`, `regexp_like` / `RLIKE`, and `text_match(col, 'a
b')`. Pure: sqlglot trees in, conditions out."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal

from sqlglot import exp

from pruner.errors import InvalidInputError
from pruner.predicate import text_atoms
from pruner.predicate.sql.literals import LiteralError, NotLiteralError, read_literal
from pruner.predicate.sql.parsing import (
    COMPARISONS,
    FLIPPED,
    NEGATED,
    chain_operands,
    columns_by_name,
    is_column,
    lookup_column,
    parse,
    sql_text,
    unparen,
)
from pruner.predicate.text import (
    TEXT_TRUE,
    Case,
    TextCondition,
    TextPredicate,
    TextSubject,
    all_of,
    any_of,
)
from pruner.predicate.text_atoms import UnusedTextAtom, unused_note
from pruner.predicate.text_subjects import expression_subject
from pruner.types import Column, TableSchema, TypeKind


def text_condition(where: str, schema: TableSchema) -> TextPredicate:
    """The text condition of the WHERE clause `where` (without the keyword) over `schema`."""
    tree = parse(where)
    reader = _TextReader(schema)
    reader.check_columns(tree)
    try:
        condition = reader.predicate(tree, negated=False)
    except RecursionError:
        raise InvalidInputError("WHERE clause is nested too deeply to translate") from None
    return TextPredicate(TEXT_TRUE if condition is None else condition, tuple(reader.notes))


# A condition, or None: no row (FALSE or NULL), which a TextCondition cannot say.
_Result = TextCondition | None

_REGEX_CALLS = {"rlike", "regexp_like", "regexp"}
_TEXT_CALLS = _REGEX_CALLS | {"text_match", "strpos", "position", "locate", "instr", "contains"}
_TEXT_NODES: tuple[type[exp.Expr], ...] = (exp.Like, exp.ILike, exp.Escape, exp.StrPosition, exp.Contains)
_TEXT_NODES += (exp.StartsWith, exp.EndsWith, exp.RegexpLike, exp.SimilarTo, exp.RegexpILike)


class _NoRowError(Exception):
    """The atom is NULL (or FALSE) for every row: a NULL pattern, search string or escape."""


@dataclass
class _TextReader:
    schema: TableSchema
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.columns = columns_by_name(self.schema)
        self.types = {c.name: c.type for c in self.schema.columns}

    def column(self, node: exp.Expr) -> Column:
        return lookup_column(node, self.columns, self.schema)

    def check_columns(self, tree: exp.Expr) -> None:
        """An unknown column is an error wherever it stands, as in the translator."""
        for column in tree.find_all(exp.Column):
            if is_column(column) and column.find_ancestor(exp.Query, exp.Lambda) is None:
                self.column(column)

    # Connectives ---------------------------------------------------------------------------

    def predicate(self, node: exp.Expr, negated: bool) -> _Result:
        """What every row where `node` is TRUE (or FALSE, if `negated`) contains."""
        if isinstance(node, exp.Paren):
            return self.predicate(node.this, negated)
        if isinstance(node, exp.Not):
            return self.predicate(node.this, not negated)
        if isinstance(node, exp.And | exp.Or):
            parts = [self.predicate(operand, negated) for operand in chain_operands(node, type(node))]
            if isinstance(node, exp.And) != negated:
                return None if any(p is None for p in parts) else all_of([p for p in parts if p is not None])
            rows = [p for p in parts if p is not None]
            return any_of(rows) if rows else None
        if isinstance(node, exp.Boolean):
            return TEXT_TRUE if bool(node.this) != negated else None
        if isinstance(node, exp.Null):
            return None
        try:
            return self.atom(node, negated)
        except _NoRowError:
            return None
        except UnusedTextAtom as exc:
            note = unused_note(f"{sql_text(node)}{' under NOT' if negated else ''}", str(exc))
            if note not in self.notes:
                self.notes.append(note)
            return TEXT_TRUE

    def atom(self, node: exp.Expr, negated: bool) -> TextCondition:
        if type(node) in COMPARISONS:
            return self.comparison(node, negated)
        if not _is_text_atom(node):
            return TEXT_TRUE
        like = node.this if isinstance(node, exp.Escape) else node
        if negated or (isinstance(like, exp.Like | exp.ILike) and like.args.get("negate")):
            raise UnusedTextAtom("must be FALSE")
        if isinstance(like, exp.Like | exp.ILike):
            return self.like(node, like)
        if isinstance(node, exp.Contains | exp.StartsWith | exp.EndsWith):
            start, end = isinstance(node, exp.StartsWith), isinstance(node, exp.EndsWith)
            return self.contains(node, node.this, node.expression, start, end)
        if isinstance(node, exp.RegexpLike) and not node.args.get("flag"):
            return self.regex(node, node.this, node.expression)
        if isinstance(node, exp.Anonymous) and len(node.expressions) == 2:
            subject, argument = node.expressions
            name = str(node.name).lower()
            if name in _REGEX_CALLS:
                return self.regex(node, subject, argument)
            if name == "text_match":
                return self.text_match(node, subject, argument)
        raise UnusedTextAtom("is not a form the text index reads")

    # Atoms ---------------------------------------------------------------------------------

    def subject(self, node: exp.Expr) -> TextSubject:
        node, case = unparen(node), Case.AS_IS
        if isinstance(node, exp.Lower | exp.Upper):
            node, case = unparen(node.this), Case.LOWER if isinstance(node, exp.Lower) else Case.UPPER
        elif (called := _case_call(node)) is not None:
            # as the WHERE clause is parsed (`parse`: registry functions as plain calls)
            node, case = unparen(node.expressions[0]), called
        if not is_column(node):
            return self.expression_subject(node, case)
        column = self.column(node)
        if column.type.kind is not TypeKind.STRING:
            raise UnusedTextAtom(f"is over {column.type} column {column.name}")
        return TextSubject(column.name, case)

    def expression_subject(self, node: exp.Expr, case: Case) -> TextSubject:
        """A string expression's subject, bound as a text index's expression is."""
        try:
            return expression_subject(node, self.types, sql_text(node), case)
        except InvalidInputError as exc:
            raise UnusedTextAtom(f"is not over a string column or expression ({exc})") from None

    def string(self, node: exp.Expr, what: str) -> str:
        try:
            value = read_literal(node).value
        except (NotLiteralError, LiteralError):
            raise UnusedTextAtom(f"has a {what} that is not a literal") from None
        if value is None:
            raise _NoRowError
        if not isinstance(value, str):
            raise UnusedTextAtom(f"has a {what} that is not a string")
        return value

    def like(self, node: exp.Expr, like: exp.Like | exp.ILike) -> TextCondition:
        subject = self.subject(like.this)
        pattern = self.string(like.expression, "pattern")
        escape = self.string(node.expression, "escape") if isinstance(node, exp.Escape) else None
        read = text_atoms.like if isinstance(like, exp.Like) else text_atoms.ilike
        return read(subject, pattern, escape or None, sql_text(node))

    def contains(
        self, node: exp.Expr, subject_node: exp.Expr, text_node: exp.Expr, at_start: bool, at_end: bool
    ) -> TextCondition:
        subject = self.subject(subject_node)
        text = self.string(text_node, "search string")
        return text_atoms.contains(subject, text, at_start, at_end, sql_text(node))

    def comparison(self, node: exp.Expr, negated: bool) -> TextCondition:
        """`strpos(col, 'x') op k`: the value contains `x` when the position cannot be 0."""
        left, right, op = unparen(node.this), unparen(node.expression), COMPARISONS[type(node)]
        if isinstance(right, exp.StrPosition):
            left, right, op = right, left, FLIPPED[op]
        if not isinstance(left, exp.StrPosition):
            return TEXT_TRUE
        # NOT (p op k) is (p negated-op k) where it is not NULL, so NOT (p = 0) still requires x.
        op = NEGATED[op] if negated else op
        try:
            bound = read_literal(right).value
        except (NotLiteralError, LiteralError):
            raise UnusedTextAtom("compares the position with no number literal") from None
        if bound is None:
            raise _NoRowError
        if isinstance(bound, bool) or not isinstance(bound, int | float | Decimal):
            raise UnusedTextAtom("compares the position with no number")
        if not math.isfinite(bound):
            raise UnusedTextAtom("compares the position with no finite number")
        if not _excludes_zero(op, bound):
            raise UnusedTextAtom("holds where the position is 0")
        return self.contains(node, left.this, left.args["substr"], at_start=False, at_end=False)

    def regex(self, node: exp.Expr, subject_node: exp.Expr, regex_node: exp.Expr) -> TextCondition:
        subject = self.subject(subject_node)
        return text_atoms.regex(subject, self.string(regex_node, "regex"), sql_text(node))

    def text_match(self, node: exp.Expr, subject_node: exp.Expr, query_node: exp.Expr) -> TextCondition:
        subject = self.subject(subject_node)
        return text_atoms.words(subject, self.string(query_node, "query"), sql_text(node))


def _is_text_atom(node: exp.Expr) -> bool:
    if isinstance(node, _TEXT_NODES):
        return True
    return isinstance(node, exp.Anonymous) and str(node.name).lower() in _TEXT_CALLS


def _excludes_zero(op: str, bound: int | float | Decimal) -> bool:
    """Whether `position op bound` fails for position 0 (positions are 0 or from 1 up)."""
    return {
        ">": bound >= 0,
        ">=": bound > 0,
        "=": bound != 0,
        "<>": bound == 0,
        "<": bound <= 0,
        "<=": bound < 0,
    }[op]


def _case_call(node: exp.Expr) -> Case | None:
    """The case mapping of a plain `lower(x)` / `upper(x)` call, None for anything else."""
    if not isinstance(node, exp.Anonymous) or len(node.expressions) != 1:
        return None
    return {"lower": Case.LOWER, "upper": Case.UPPER}.get(str(node.name).lower())
