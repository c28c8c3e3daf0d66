"""The Thrift connector's method table: the `ConnectorService` protocol that the server calls, and for
each service method its generated argument and result structs and how its arguments become the
call. A method name on the wire carries the calling engine's prefix (`trino` or `presto`), which
`find_method` strips; a required argument the client left out is refused with `ThriftRequestError`
before the call, and an absent `Nullable*` argument arrives as its empty wrapper (= null). Nothing
here reads or writes bytes: decoding the argument struct and encoding the result are `dispatch`'s."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pruner.thrift import idl
from pruner.thrift.errors import ThriftRequestError

ENGINE_PREFIXES = ("trino", "presto")
"""The method-name prefixes of the engines served, which are also the engines' names."""


class ConnectorService(Protocol):
    """What the server calls, one method per Thrift method, with the decoded (generated) argument
    structs. A `Nullable*` argument absent on the wire arrives as its empty wrapper (= null); any
    other absent argument is refused before the call. Methods are called concurrently from the
    server's worker threads. Raise `LakepruneError` for a request that cannot be served (or the
    method's `ServiceException` to choose the answer); `get_rows` may return
    `blocks.encode_page_result` bytes."""

    def list_schema_names(self) -> list[str]: ...

    def list_tables(self, schema_or_none: idl.NullableSchemaName, /) -> list[idl.SchemaTableName]: ...

    def get_table_metadata(self, schema_table_name: idl.SchemaTableName, /) -> idl.NullableTableMetadata: ...

    def get_splits(
        self,
        schema_table_name: idl.SchemaTableName,
        desired_columns: idl.NullableColumnSet,
        output_constraint: idl.TupleDomain,
        max_split_count: int,
        next_token: idl.NullableToken,
        /,
    ) -> idl.SplitBatch: ...

    def get_index_splits(
        self,
        schema_table_name: idl.SchemaTableName,
        index_column_names: list[str],
        output_column_names: list[str],
        keys: idl.PageResult,
        output_constraint: idl.TupleDomain,
        max_split_count: int,
        next_token: idl.NullableToken,
        /,
    ) -> idl.SplitBatch: ...

    def get_rows(
        self, split_id: idl.Id, columns: list[str], max_bytes: int, next_token: idl.NullableToken, /
    ) -> idl.PageResult | bytes: ...


@dataclass(frozen=True)
class Method:
    """A service method: its generated argument and result structs and how to call the handler."""

    args: type
    result: type
    call: Callable[[ConnectorService, Any], object]
    returns_page: bool = False

    @property
    def success_field(self) -> int:
        return idl.field(self.result, "success").id


def _arg(args: Any, name: str) -> Any:
    """A required argument; `ThriftRequestError` when the client left it out."""
    value = getattr(args, name)
    if value is None:
        raise ThriftRequestError(f"missing argument {name}")
    return value


def _nullable(args: Any, name: str, empty: type) -> Any:
    """A `Nullable*` argument, the empty wrapper (= null) when absent."""
    value = getattr(args, name)
    return empty() if value is None else value


_S = idl.Service
_METHODS: dict[str, Method] = {
    "ListSchemaNames": Method(
        _S.trinoListSchemaNames_args, _S.trinoListSchemaNames_result, lambda h, a: h.list_schema_names()
    ),
    "ListTables": Method(
        _S.trinoListTables_args,
        _S.trinoListTables_result,
        lambda h, a: h.list_tables(_nullable(a, "schemaNameOrNull", idl.NullableSchemaName)),
    ),
    "GetTableMetadata": Method(
        _S.trinoGetTableMetadata_args,
        _S.trinoGetTableMetadata_result,
        lambda h, a: h.get_table_metadata(_arg(a, "schemaTableName")),
    ),
    "GetSplits": Method(
        _S.trinoGetSplits_args,
        _S.trinoGetSplits_result,
        lambda h, a: h.get_splits(
            _arg(a, "schemaTableName"),
            _nullable(a, "desiredColumns", idl.NullableColumnSet),
            _arg(a, "outputConstraint"),
            _arg(a, "maxSplitCount"),
            _nullable(a, "nextToken", idl.NullableToken),
        ),
    ),
    "GetIndexSplits": Method(
        _S.trinoGetIndexSplits_args,
        _S.trinoGetIndexSplits_result,
        lambda h, a: h.get_index_splits(
            _arg(a, "schemaTableName"),
            _arg(a, "indexColumnNames"),
            _arg(a, "outputColumnNames"),
            _arg(a, "keys"),
            _arg(a, "outputConstraint"),
            _arg(a, "maxSplitCount"),
            _nullable(a, "nextToken", idl.NullableToken),
        ),
    ),
    "GetRows": Method(
        _S.trinoGetRows_args,
        _S.trinoGetRows_result,
        lambda h, a: h.get_rows(
            _arg(a, "splitId"),
            _arg(a, "columns"),
            _arg(a, "maxBytes"),
            _nullable(a, "nextToken", idl.NullableToken),
        ),
        returns_page=True,
    ),
}


def find_method(name: str) -> tuple[str, Method] | None:
    """The calling engine (the name's prefix) and the method a name on the wire calls; None for a
    name without an engine's prefix or with an unknown method after it."""
    for engine in ENGINE_PREFIXES:
        if name.startswith(engine):
            method = _METHODS.get(name[len(engine) :])
            return None if method is None else (engine, method)
    return None
