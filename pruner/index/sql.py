"""Index statements in SQL, parsed with sqlglot:

    CREATE INDEX [IF NOT EXISTS] name ON table [USING type] [(column, ...)] [OPTIONS (key = value, ...)]
    CREATE INDEX name ON table [USING column_stats | value_list] (expression)   (see pruner.functions)
    CREATE FUNCTION INDEX name ON table ...   (RFC-63's spelling: the same, over an expression)
    DROP INDEX [IF EXISTS] name [ON table]
    SHOW INDEXES ON table          (also: SHOW INDEX FROM table, SHOW INDEXES IN table)
    REFRESH INDEX name [ON table]  (build a defined index for the files written before it)

`OPTIONS (...)` is accepted as a synonym of sqlglot's `WITH (...)`, and `ON TABLE table` (Spark
SQL's and Hudi's spelling) as `ON table`. Identifiers are read in `dialect`'s quoting (sqlglot's
default: "double quotes"; Spark SQL's statements come with `dialect="spark"`: `backquotes`), and a
table may be named with its database (`db.t`): `table` is the last part. Parsing only: executing a
statement is the builder's job (it needs the table lock, and Spark to build)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError
from sqlglot.tokenizer_core import Token, TokenType

from pruner.errors import InvalidInputError


@dataclass(frozen=True)
class CreateIndex:
    name: str
    table: str
    index_type: str | None
    columns: tuple[str, ...]
    options: dict[str, str] = field(default_factory=dict)
    if_not_exists: bool = False
    expression: str | None = None  # a functional index: the call as written


@dataclass(frozen=True)
class DropIndex:
    name: str
    table: str | None
    if_exists: bool = False


@dataclass(frozen=True)
class ShowIndexes:
    table: str


@dataclass(frozen=True)
class RefreshIndex:
    name: str
    table: str | None


Statement = CreateIndex | DropIndex | ShowIndexes | RefreshIndex
_SUPPORTED = "CREATE INDEX, DROP INDEX, SHOW INDEXES and REFRESH INDEX"


def parse_statement(sql: str, dialect: str | None = None) -> Statement:
    text = sql.strip().rstrip(";").strip()
    if not text:
        raise InvalidInputError("empty SQL statement")
    tokenize = Dialect.get_or_raise(dialect).tokenize
    try:
        tokens = tokenize(text)
    except Exception as exc:  # sqlglot raises its own TokenError
        raise InvalidInputError(f"cannot read SQL: {exc}") from None
    if tokens[0].token_type == TokenType.SHOW:
        return _parse_show(tokenize(text[tokens[0].end + 1 :]))
    text = _without_on_table(text, tokens)
    tokens = tokenize(text)
    if tokens[0].text.upper() == "REFRESH":
        return _parse_refresh(tokens[1:])
    function_index = [t.text.upper() for t in tokens[:3]] == ["CREATE", "FUNCTION", "INDEX"]
    if function_index:  # RFC-63: CREATE FUNCTION INDEX is CREATE INDEX over an expression
        text = text[: tokens[1].start] + text[tokens[2].start :]
        tokens = tokenize(text)
    text, expression = _expression_as_placeholder(text, tokens)
    if function_index and expression is None:
        raise InvalidInputError("CREATE FUNCTION INDEX is over an expression: ... ON t (hour(ts))")
    tokens = tokenize(text)
    try:
        tree = sqlglot.parse_one(_options_as_with(text, tokens), read=dialect)
    except ParseError as exc:
        raise InvalidInputError(f"cannot parse SQL: {str(exc).splitlines()[0]}") from None
    if isinstance(tree, exp.Create) and str(tree.args.get("kind", "")).upper() == "INDEX":
        return _create(tree, expression)
    if isinstance(tree, exp.Drop) and str(tree.args.get("kind", "")).upper() == "INDEX":
        return _drop(tree)
    raise InvalidInputError(f"unsupported statement (supported: {_SUPPORTED})")


_PLACEHOLDER = "_lp_expression"
# Tokens that make the parenthesised part of CREATE INDEX an expression, not a list of columns.
_EXPRESSION_TOKENS = {
    TokenType.L_PAREN,
    TokenType.NUMBER,
    TokenType.PLUS,
    TokenType.DASH,
    TokenType.STAR,
    TokenType.SLASH,
    TokenType.PERCENT,
    TokenType.DIV,
    TokenType.CASE,
}


def _expression_as_placeholder(text: str, tokens: list[Token]) -> tuple[str, str | None]:
    """CREATE INDEX ... (expression): the expression text (`f(col, ...)`, `a + b * 2` ...), replaced
    by a placeholder column so that sqlglot (which would rewrite calls into its own dialect-neutral
    nodes) sees a column."""
    words = [t.text.upper() for t in tokens]
    if len(words) < 2 or words[0] != "CREATE" or "INDEX" not in words[:6] or "ON" not in words:
        return text, None
    start = next(
        (i for i in range(words.index("ON"), len(tokens)) if tokens[i].token_type == TokenType.L_PAREN), None
    )
    if start is None:
        return text, None
    depth, end = 0, None
    for i in range(start, len(tokens)):
        if tokens[i].token_type == TokenType.L_PAREN:
            depth += 1
        elif tokens[i].token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                end = i
                break
    inner = tokens[start + 1 : end] if end is not None else []
    if end is None or not any(t.token_type in _EXPRESSION_TOKENS for t in inner):
        return text, None  # a list of columns
    expression = text[inner[0].start : inner[-1].end + 1].strip()
    return text[: inner[0].start] + _PLACEHOLDER + text[inner[-1].end + 1 :], expression


def _options_as_with(text: str, tokens: list[Token]) -> str:
    for token, following in itertools.pairwise(tokens):
        if token.text.upper() == "OPTIONS" and following.token_type == TokenType.L_PAREN:
            return text[: token.start] + "WITH" + text[token.end + 1 :]
    return text


def _without_on_table(text: str, tokens: list[Token]) -> str:
    """`... ON TABLE t ...` as `... ON t ...`."""
    for token, following in itertools.pairwise(tokens):
        if token.token_type == TokenType.ON and following.token_type == TokenType.TABLE:
            return text[: following.start] + text[following.end + 1 :].lstrip()
    return text


def _parse_show(tokens: list[Token]) -> ShowIndexes:
    """What follows SHOW (which sqlglot reads as a command: the rest as one string, tokenized again)."""
    words = [t.text.upper() for t in tokens[:2]]
    table = _table_name(tokens[2:])
    if len(words) == 2 and words[0] in ("INDEX", "INDEXES") and words[1] in ("ON", "FROM", "IN") and table:
        return ShowIndexes(table)
    raise InvalidInputError("expected SHOW INDEXES ON table")


def _parse_refresh(tokens: list[Token]) -> RefreshIndex:
    words = [t.text.upper() for t in tokens[:3]]
    if len(tokens) == 2 and words[0] == "INDEX" and _is_name(tokens[1]):
        return RefreshIndex(tokens[1].text, None)
    table = _table_name(tokens[3:])
    if len(words) == 3 and words[0] == "INDEX" and _is_name(tokens[1]) and words[2] == "ON" and table:
        return RefreshIndex(tokens[1].text, table)
    raise InvalidInputError("expected REFRESH INDEX name [ON table]")


def _table_name(tokens: list[Token]) -> str | None:
    """The last part of a table name written as `t`, `db.t` or `catalog.db.t`; None for anything else."""
    names = tokens[::2]
    if not names or len(names) > 3 or len(tokens) % 2 == 0:
        return None
    if not all(_is_name(t) for t in names) or any(t.token_type != TokenType.DOT for t in tokens[1::2]):
        return None
    return names[-1].text


def _is_name(token: Token) -> bool:
    return token.token_type in (TokenType.VAR, TokenType.IDENTIFIER) or token.text.isidentifier()


def _create(tree: exp.Create, expression: str | None = None) -> CreateIndex:
    index = tree.this
    if not isinstance(index, exp.Index) or index.args.get("table") is None:
        raise InvalidInputError("expected CREATE INDEX name ON table ...")
    params = index.args.get("params")
    using = params.args.get("using") if params else None
    columns = []
    for item in (params.args.get("columns") or []) if params else []:
        target = item.this if isinstance(item, exp.Ordered) else item
        if not isinstance(target, exp.Column):
            raise InvalidInputError(
                f"index on expression {target.sql()!r}: functional indexes are not supported yet"
            )
        columns.append(target.name)
    if expression is not None:
        if columns != [_PLACEHOLDER]:
            raise InvalidInputError("a functional index is on exactly one expression")
        columns = []
    options = {}
    storage = params.args.get("with_storage") if params else None
    for prop in storage or []:
        key = (prop.this.name if isinstance(prop.this, exp.Expression) else str(prop.this)).lower()
        options[key] = _option_value(key, prop.args.get("value"))
    return CreateIndex(
        name=index.this.name,
        table=index.args["table"].name,
        index_type=using.name if using is not None else None,
        columns=tuple(columns),
        options=options,
        if_not_exists=bool(tree.args.get("exists")),
        expression=expression,
    )


def _option_value(key: str, value: object) -> str:
    """An option's value as written: a number (`-1`, `0.01`, `1e-3`), a string, a boolean or a bare
    word. Anything else (an expression, NULL, a typed literal) is refused rather than reduced to a
    part of it, as reading the node's `name` did (`-1` became `1`, `1 + 1` became `1`)."""
    if isinstance(value, exp.Literal):
        return str(value.this)
    if isinstance(value, exp.Neg) and isinstance(value.this, exp.Literal) and not value.this.is_string:
        return f"-{value.this.this}"
    if isinstance(value, exp.Boolean):
        return "true" if value.this else "false"
    if isinstance(value, exp.Var):
        return str(value.this)
    shown = value.sql() if isinstance(value, exp.Expression) else repr(value)
    raise InvalidInputError(f"option {key} must be a number, a string or a boolean, got {shown}")


def _drop(tree: exp.Drop) -> DropIndex:
    tables = tree.args.get("tables") or [tree.this]
    on = tree.args.get("cluster")
    table = on.this.name if isinstance(on, exp.OnProperty) else None
    return DropIndex(tables[0].name, table, bool(tree.args.get("exists")))
