"""Reading a WHERE clause: `parse` turns the text into a sqlglot tree, once (a syntax error, an
empty clause or a statement that is no condition is an `InvalidInputError` quoting a shortened,
one-line form of the input); `expressions_as_columns` then rewrites the parts that a functional
index indexes into the index's virtual column; and the small helpers over the tree (`unparen`,
`is_column`, `operands`, `sql_text` for notes and messages, the comparison operators,
`lookup_column`, `is_utc` for an engine's session zone) are shared by the literal reader, the
translator, the text conditions and the engines' readers."""

from __future__ import annotations

import re
from collections.abc import Mapping

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from pruner.bounded import echo
from pruner.errors import InvalidInputError
from pruner.functions.parsing import DIALECT, bind
from pruner.types import Column, ColumnType, TableSchema

# The spellings of UTC an engine's session may have (Spark's `spark.sql.session.timeZone`, Trino's
# TimeZoneKey id), upper-cased.
_UTC_ZONES = {"UTC", "GMT", "Z", "ETC/UTC", "ETC/GMT", "UCT", "ETC/UCT", "ZULU", "+00:00", "UTC+00:00"}

# The sqlglot nodes that may be an index expression (others are only looked into).
_EXPRESSION_NODES = (
    exp.Anonymous,
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Div,
    exp.IntDiv,
    exp.Mod,
    exp.Neg,
    exp.Cast,
    exp.Coalesce,
    exp.Case,
    exp.If,
)


def expressions_as_columns(tree: exp.Expr, schema: TableSchema, expressions: Mapping[str, str]) -> exp.Expr:
    """`tree` (a parsed WHERE clause) with each part that is an indexed expression (equal to an
    index's canonical tree: `Expression.key()`) replaced by the index's virtual column, outermost
    parts first; `tree` itself when nothing matched."""
    types = {c.name: c.type for c in schema.columns}

    def as_column(node: exp.Expr) -> exp.Expr:
        if not isinstance(node.unnest(), _EXPRESSION_NODES) or node.find(exp.Column) is None:
            return node  # (a parenthesised condition is only looked into)
        name = indexed_column(node, types, expressions)
        return node if name is None else exp.column(name)

    return tree.transform(as_column, copy=False)  # the tree is this translation's own


def indexed_column(
    node: exp.Expr, types: Mapping[str, ColumnType], expressions: Mapping[str, str]
) -> str | None:
    """The virtual column of the index whose expression `node` is (up to normalisation), if any."""
    try:
        return expressions.get(bind(node, types, "in the WHERE clause").key())
    except InvalidInputError:  # not an expression an index could hold
        return None


_ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
_MAX_TEXT = 80


def parse(where: str) -> exp.Expr:
    """The tree of a WHERE clause, read once by the dialect index expressions are read in (registry
    functions as plain calls, so that a part of it can be compared with an index's expression)."""
    text = where.strip()
    if not text:
        raise InvalidInputError("empty WHERE clause")
    try:
        tree = sqlglot.parse_one(text, read=DIALECT)
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


def sql_text(node: exp.Expr) -> str:
    text = _one_line(node.sql())
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 3] + "..."


def unparen(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def is_column(node: exp.Expr) -> bool:
    return isinstance(node, exp.Column) and isinstance(node.this, exp.Identifier)


# The comparison operators, as written with the column on the left, flipped (the column on the
# right) and negated (NOT of the comparison, where it is not NULL).
COMPARISONS: dict[type[exp.Expr], str] = {
    exp.EQ: "=",
    exp.NEQ: "<>",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
}
FLIPPED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
NEGATED = {"=": "<>", "<>": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def columns_by_name(schema: TableSchema) -> dict[str, Column]:
    """The columns of `schema` by lower-cased name, for `lookup_column`."""
    return {c.name.lower(): c for c in schema.columns}


def lookup_column(node: exp.Expr, columns: Mapping[str, Column], schema: TableSchema) -> Column:
    """The column a column reference names (case-insensitively), or an error naming the columns."""
    name = str(node.name).lower()
    if name not in columns:
        raise InvalidInputError(
            f"unknown column {echo(node.name)} in WHERE clause (columns: {', '.join(schema.names)})"
        )
    return columns[name]


def chain_operands(node: exp.Expr, kind: type[exp.Expr]) -> list[exp.Expr]:
    """The operands of a chain of one connective (`a AND (b AND c)` has three), left to right."""
    result: list[exp.Expr] = []
    stack = [node]
    while stack:
        current = stack.pop()
        inner = unparen(current)
        if isinstance(inner, kind):
            stack += [inner.expression, inner.this]
        else:
            result.append(current)
    return result


def is_utc(zone: str) -> bool:
    """Whether an engine's session time zone `zone` is UTC (under any of its names)."""
    return zone.strip().upper() in _UTC_ZONES
