"""Index statements in SQL, parsed with sqlglot:

    CREATE INDEX [IF NOT EXISTS] name ON table [USING type] [(column, ...)] [OPTIONS (key = value, ...)]
    DROP INDEX [IF EXISTS] name [ON table]
    SHOW INDEXES ON table          (also: SHOW INDEX FROM table)

`OPTIONS (...)` is accepted as a synonym of sqlglot's `WITH (...)`. Parsing only: executing a
statement is the builder's job (it needs the table lock, and Spark to build)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.tokenizer_core import Token, TokenType
from sqlglot.tokens import Tokenizer

from pruner.errors import InvalidInputError


@dataclass(frozen=True)
class CreateIndex:
    name: str
    table: str
    index_type: str | None
    columns: tuple[str, ...]
    options: dict[str, str] = field(default_factory=dict)
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropIndex:
    name: str
    table: str | None
    if_exists: bool = False


@dataclass(frozen=True)
class ShowIndexes:
    table: str


Statement = CreateIndex | DropIndex | ShowIndexes
_SUPPORTED = "CREATE INDEX, DROP INDEX and SHOW INDEXES"


def parse_statement(sql: str) -> Statement:
    text = sql.strip().rstrip(";").strip()
    if not text:
        raise InvalidInputError("empty SQL statement")
    try:
        tokens = Tokenizer().tokenize(text)
    except Exception as exc:  # sqlglot raises its own TokenError
        raise InvalidInputError(f"cannot read SQL: {exc}") from None
    if tokens[0].token_type == TokenType.SHOW:
        return _parse_show(text[tokens[0].end + 1 :])
    try:
        tree = sqlglot.parse_one(_options_as_with(text, tokens))
    except ParseError as exc:
        raise InvalidInputError(f"cannot parse SQL: {str(exc).splitlines()[0]}") from None
    if isinstance(tree, exp.Create) and str(tree.args.get("kind", "")).upper() == "INDEX":
        return _create(tree)
    if isinstance(tree, exp.Drop) and str(tree.args.get("kind", "")).upper() == "INDEX":
        return _drop(tree)
    raise InvalidInputError(f"unsupported statement (supported: {_SUPPORTED})")


def _options_as_with(text: str, tokens: list[Token]) -> str:
    for token, following in itertools.pairwise(tokens):
        if token.text.upper() == "OPTIONS" and following.token_type == TokenType.L_PAREN:
            return text[: token.start] + "WITH" + text[token.end + 1 :]
    return text


def _parse_show(rest: str) -> ShowIndexes:
    words = [t.text for t in Tokenizer().tokenize(rest)]
    if (
        len(words) == 3
        and words[0].upper() in ("INDEX", "INDEXES")
        and words[1].upper() in ("ON", "FROM", "IN")
    ):
        return ShowIndexes(words[2].strip('`"'))
    raise InvalidInputError("expected SHOW INDEXES ON table")


def _create(tree: exp.Create) -> CreateIndex:
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
    options = {}
    storage = params.args.get("with_storage") if params else None
    for prop in storage or []:
        key = prop.this.name if isinstance(prop.this, exp.Expression) else str(prop.this)
        value = prop.args.get("value")
        options[key.lower()] = value.name if isinstance(value, exp.Expression) else str(value)
    return CreateIndex(
        name=index.this.name,
        table=index.args["table"].name,
        index_type=using.name if using is not None else None,
        columns=tuple(columns),
        options=options,
        if_not_exists=bool(tree.args.get("exists")),
    )


def _drop(tree: exp.Drop) -> DropIndex:
    tables = tree.args.get("tables") or [tree.this]
    on = tree.args.get("cluster")
    table = on.this.name if isinstance(on, exp.OnProperty) else None
    return DropIndex(tables[0].name, table, bool(tree.args.get("exists")))
