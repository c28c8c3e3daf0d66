"""Defining an index (`CREATE INDEX`): the checks every definition passes (its name, its type,
its columns), then those of its kind (`pruner.index.kinds`: how many a table may have, the columns
it can cover, the options it accepts, the expressions it may be over), giving a new definition in
state `building`. Functional indexes (RFC-63) are defined by an expression instead of a type and
columns (`USING column_stats | value_list | bloom_filters` or no `USING`); an index of another type over an
expression (`USING text (lower(msg))`) is bound by its kind. The RFCs' spellings of the types are
accepted too (`SYNONYMS`: RFC-63's `col_stats`)."""

from __future__ import annotations

from collections.abc import Mapping

from pruner.bounded import echo
from pruner.errors import InvalidInputError
from pruner.format.config import TableConfig
from pruner.identifiers import check_identifier
from pruner.index.definitions import BUILT_IN, FunctionalKind, IndexDefinition, IndexType
from pruner.index.kinds import kind_of
from pruner.index.kinds.base import fpp_option
from pruner.types import Role

# Other spellings of index types, as the RFCs write them.
SYNONYMS = {"col_stats": IndexType.COLUMN_STATS.value}


def define(
    config: TableConfig,
    existing: list[IndexDefinition],
    name: str,
    index_type: str | None,
    columns: list[str],
    options: Mapping[str, str],
    expression: str | None = None,
) -> IndexDefinition:
    """A validated new definition (state building). Raises InvalidNameError for a name that breaks
    the naming rule (`pruner.identifiers`), InvalidInputError for any other problem."""
    check_identifier(name, "index")
    if name in BUILT_IN or any(d.name == name for d in existing):
        raise InvalidInputError(f"an index named {name!r} already exists on table {config.name}")
    if index_type is not None:
        index_type = SYNONYMS.get(index_type.lower(), index_type)
    if expression is not None and (index_type is None or index_type.lower() in set(FunctionalKind)):
        return _define_functional(config, name, index_type, expression, options)
    if index_type is None:
        if len(columns) == 1 and columns[0] not in config.record_key:
            index_type = IndexType.SECONDARY_INDEX.value  # RFC-77: CREATE INDEX name ON t (col)
        else:
            raise InvalidInputError(
                "give the index type with USING (column_stats, partition_stats, bloom_filters or "
                "secondary_index), one non-key column for a secondary index, or an expression for "
                "a functional index"
            )
    try:
        kind = IndexType(index_type.lower())
    except ValueError:
        known = ", ".join(t.value for t in IndexType)
        raise InvalidInputError(f"unknown index type {index_type!r} (known: {known})") from None
    behaviour = kind_of(kind)
    if expression is not None and kind == IndexType.SECONDARY_INDEX and config.schema.has(name):
        raise InvalidInputError(
            f"secondary index {name!r} over an expression would hide column {name!r}: "
            "its name is also the name of its virtual column"
        )
    if expression is not None:  # an index of a kind over an expression (a text index on lower(col))
        columns, expression = behaviour.bind_expression(config, expression)
    same = [d.name for d in existing if d.index_type == kind]
    if same and not behaviour.many_per_table:
        raise InvalidInputError(
            f"table {config.name} already has a {kind} index ({same[0]}); "
            f"drop it first to redefine its columns"
        )
    for column in columns:
        if not config.schema.has(column):
            names = ", ".join(config.schema.names)
            raise InvalidInputError(f"unknown column {echo(column)} (columns: {names})")
    if len(set(columns)) != len(columns):
        raise InvalidInputError("index columns must be distinct")
    behaviour.check_columns(config, columns, expression)
    allowed = behaviour.options
    normalised = {}
    for key, value in options.items():
        if key not in allowed:
            raise InvalidInputError(
                f"unknown option {key!r} for {kind} (known: {', '.join(allowed) or 'none'})"
            )
        normalised[key] = allowed[key](value)
    behaviour.check_options(normalised)
    return IndexDefinition(
        name, kind, tuple(columns) or tuple(config.schema.names), normalised, expression=expression
    )


def _define_functional(
    config: TableConfig, name: str, index_type: str | None, expression: str, options: Mapping[str, str]
) -> IndexDefinition:
    from pruner.functions import parse_expression

    if config.schema.has(name):
        raise InvalidInputError(
            f"functional index {name!r} would hide column {name!r}: its name is also a virtual column"
        )
    try:
        kind = FunctionalKind((index_type or FunctionalKind.COLUMN_STATS).lower())
    except ValueError:
        known = ", ".join(k.value for k in FunctionalKind)
        raise InvalidInputError(f"a functional index is USING {known}, not {index_type!r}") from None
    allowed = {"fpp": fpp_option} if kind == FunctionalKind.BLOOM_FILTERS else {}
    unknown = [key for key in options if key not in allowed]
    if unknown:
        known = ", ".join(allowed) or "none"
        raise InvalidInputError(
            f"unknown option {unknown[0]!r} for a functional {kind} index (known: {known})"
        )
    tree = parse_expression(expression, {c.name: c.type for c in config.schema.columns})
    if kind == FunctionalKind.BLOOM_FILTERS and not tree.type.kind.allows(Role.BLOOM_FILTER):
        raise InvalidInputError(f"a bloom filter on {tree.type} values ({tree.sql()}) cannot prune")
    return IndexDefinition(
        name,
        IndexType.FUNCTIONAL,
        tuple(sorted(tree.columns)),
        {key: allowed[key](value) for key, value in options.items()},
        expression=tree.sql(),
        kind=kind,
    )
