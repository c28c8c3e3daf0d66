"""Decoding an engine's filter expressions (`EngineFilter` in `pruning_service.proto`) into the
trees `pruner.predicate.sql.trino` reads, one conjunct at a time: a conjunct that does not decode
(a column the table does not have, a constant its type cannot hold, a node with no kind or no type)
is left out with a note, which keeps more files; only a filter of an unknown engine, or one nested
deeper than `MAX_DEPTH`, is refused as a whole."""

from __future__ import annotations

from pruner.bounded import echo
from pruner.errors import InvalidInputError
from pruner.predicate.sql.trino import Call, ColumnRef, Constant, TrinoExpression
from pruner.service.codec import decode_column_type, decode_value, resolve_column
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.types import Column, TableSchema

MAX_DEPTH = 200  # Trino's own planner refuses far shallower trees


def decode_engine_filter(
    message: spb.EngineFilter, schema: TableSchema
) -> tuple[list[TrinoExpression], list[str]]:
    """The conjuncts of `message` over `schema` that decode, and a note for each that does not."""
    if message.engine != spb.FILTER_ENGINE_TRINO:
        raise InvalidInputError(
            f"an engine filter of engine {message.engine} is not read: only FILTER_ENGINE_TRINO"
        )
    conjuncts: list[TrinoExpression] = []
    notes: list[str] = []
    for index, conjunct in enumerate(message.conjuncts):
        try:
            conjuncts.append(_decode(conjunct, schema, 0))
        except InvalidInputError as exc:
            notes.append(f"engine filter conjunct {index + 1} left out: {exc}")
    return conjuncts, notes


def _decode(message: spb.Expression, schema: TableSchema, depth: int) -> TrinoExpression:
    if depth > MAX_DEPTH:
        raise InvalidInputError(f"an engine filter nested deeper than {MAX_DEPTH}")
    if not message.HasField("type"):
        raise InvalidInputError("an expression without a type")
    value_type = decode_column_type(message.type)
    kind = message.WhichOneof("kind")
    if kind == "column":
        column = resolve_column(schema, message.column)
        if column.type != value_type:
            raise InvalidInputError(
                f"column {echo(message.column)} is {column.type}, the expression says {value_type}"
            )
        return ColumnRef(column.name, column.type)
    if kind == "constant":
        if message.constant.WhichOneof("kind") is None:
            return Constant(None, value_type)
        return Constant(decode_value(message.constant, Column("constant", value_type)), value_type)
    if kind == "call":
        arguments = tuple(_decode(argument, schema, depth + 1) for argument in message.call.arguments)
        return Call(message.call.function, arguments, value_type)
    raise InvalidInputError("an expression with no kind set")
