"""The IDL agrees, field by field, with Trino 368's drift annotations
(plugin/trino-thrift-api/.../TrinoThrift*.java) and PrestoDB's presto-thrift-api: every struct's
field ids, names and wire types, and every method's arguments, result and exception. The expected
tables are transcribed from the Java sources; the actual ones are read from the generated specs."""

from __future__ import annotations

from typing import Any

import pytest

from pruner.thrift import idl

T = idl.TType
_PRIMITIVES = {T.BOOL: "bool", T.I32: "i32", T.I64: "i64", T.DOUBLE: "double"}

NULLS = (1, "nulls", "list<bool>")
STRUCTS: dict[str, list[tuple[int, str, str]]] = {
    "Integer": [NULLS, (2, "ints", "list<i32>")],
    "Bigint": [NULLS, (2, "longs", "list<i64>")],
    "Double": [NULLS, (2, "doubles", "list<double>")],
    "Varchar": [NULLS, (2, "sizes", "list<i32>"), (3, "bytes", "binary")],
    "Boolean": [NULLS, (2, "booleans", "list<bool>")],
    "Date": [NULLS, (2, "dates", "list<i32>")],
    "Timestamp": [NULLS, (2, "timestamps", "list<i64>")],
    "Json": [NULLS, (2, "sizes", "list<i32>"), (3, "bytes", "binary")],
    "HyperLogLog": [NULLS, (2, "sizes", "list<i32>"), (3, "bytes", "binary")],
    "BigintArray": [NULLS, (2, "sizes", "list<i32>"), (3, "values", "Bigint")],
    "Block": [
        (1, "integerData", "Integer"),
        (2, "bigintData", "Bigint"),
        (3, "doubleData", "Double"),
        (4, "varcharData", "Varchar"),
        (5, "booleanData", "Boolean"),
        (6, "dateData", "Date"),
        (7, "timestampData", "Timestamp"),
        (8, "jsonData", "Json"),
        (9, "hyperLogLogData", "HyperLogLog"),
        (10, "bigintArrayData", "BigintArray"),
    ],
    "SchemaTableName": [(1, "schemaName", "string"), (2, "tableName", "string")],
    "NullableSchemaName": [(1, "schemaName", "string")],
    "ColumnMetadata": [
        (1, "name", "string"),
        (2, "type", "string"),
        (3, "comment", "string"),
        (4, "hidden", "bool"),
    ],
    "TableMetadata": [
        (1, "schemaTableName", "SchemaTableName"),
        (2, "columns", "list<ColumnMetadata>"),
        (3, "comment", "string"),
        (4, "indexableKeys", "list<set<string>>"),
    ],
    "NullableTableMetadata": [(1, "tableMetadata", "TableMetadata")],
    "NullableColumnSet": [(1, "columns", "set<string>")],
    "Id": [(1, "id", "binary")],
    "NullableToken": [(1, "token", "Id")],
    "Marker": [(1, "value", "Block"), (2, "bound", "i32")],
    "Range": [(1, "low", "Marker"), (2, "high", "Marker")],
    "AllOrNoneValueSet": [(1, "all", "bool")],
    "EquatableValueSet": [(1, "inclusive", "bool"), (2, "values", "list<Block>")],
    "RangeValueSet": [(1, "ranges", "list<Range>")],
    "ValueSet": [
        (1, "allOrNoneValueSet", "AllOrNoneValueSet"),
        (2, "equatableValueSet", "EquatableValueSet"),
        (3, "rangeValueSet", "RangeValueSet"),
    ],
    "Domain": [(1, "valueSet", "ValueSet"), (2, "nullAllowed", "bool")],
    "TupleDomain": [(1, "domains", "map<string,Domain>")],
    "HostAddress": [(1, "host", "string"), (2, "port", "i32")],
    "Split": [(1, "splitId", "Id"), (2, "hosts", "list<HostAddress>")],
    "SplitBatch": [(1, "splits", "list<Split>"), (2, "nextToken", "Id")],
    "PageResult": [(1, "columnBlocks", "list<Block>"), (2, "rowCount", "i32"), (3, "nextToken", "Id")],
    "ServiceException": [(1, "message", "string"), (2, "retryable", "bool")],
}
SCHEMA_TABLE = (1, "schemaTableName", "SchemaTableName")
METHODS: dict[str, tuple[list[tuple[int, str, str]], str]] = {
    "trinoListSchemaNames": ([], "list<string>"),
    "trinoListTables": ([(1, "schemaNameOrNull", "NullableSchemaName")], "list<SchemaTableName>"),
    "trinoGetTableMetadata": ([SCHEMA_TABLE], "NullableTableMetadata"),
    "trinoGetSplits": (
        [
            SCHEMA_TABLE,
            (2, "desiredColumns", "NullableColumnSet"),
            (3, "outputConstraint", "TupleDomain"),
            (4, "maxSplitCount", "i32"),
            (5, "nextToken", "NullableToken"),
        ],
        "SplitBatch",
    ),
    "trinoGetIndexSplits": (
        [
            SCHEMA_TABLE,
            (2, "indexColumnNames", "list<string>"),
            (3, "outputColumnNames", "list<string>"),
            (4, "keys", "PageResult"),
            (5, "outputConstraint", "TupleDomain"),
            (6, "maxSplitCount", "i32"),
            (7, "nextToken", "NullableToken"),
        ],
        "SplitBatch",
    ),
    "trinoGetRows": (
        [
            (1, "splitId", "Id"),
            (2, "columns", "list<string>"),
            (3, "maxBytes", "i64"),
            (4, "nextToken", "NullableToken"),
        ],
        "PageResult",
    ),
}


def describe(ttype: int, args: Any) -> str:
    if ttype == T.STRUCT:
        return str(args[0].__name__).removeprefix("TrinoThrift")
    if ttype == T.STRING:
        return "binary" if args == "BINARY" else "string"
    if ttype in (T.LIST, T.SET):
        return f"{'list' if ttype == T.LIST else 'set'}<{describe(args[0], args[1])}>"
    if ttype == T.MAP:
        return f"map<{describe(args[0], args[1])},{describe(args[2], args[3])}>"
    return _PRIMITIVES[ttype]


def fields(struct: type) -> list[tuple[int, str, str]]:
    return [(e[0], e[2], describe(e[1], e[3])) for e in vars(struct)["thrift_spec"] if e is not None]


@pytest.mark.parametrize("name", sorted(STRUCTS))
def test_struct_fields_match_trino(name: str) -> None:
    assert fields(getattr(idl, name)) == STRUCTS[name]


@pytest.mark.parametrize("method", sorted(METHODS))
def test_method_signature_matches_trino(method: str) -> None:
    args, returns = METHODS[method]
    assert fields(getattr(idl.Service, f"{method}_args")) == args
    result = fields(getattr(idl.Service, f"{method}_result"))
    assert result == [(0, "success", returns), (1, "ex1", "ServiceException")]


def test_bound_values_match_trino() -> None:
    assert (idl.Bound.BELOW, idl.Bound.EXACTLY, idl.Bound.ABOVE) == (1, 2, 3)


def test_service_has_exactly_the_connector_methods() -> None:
    methods = {name for name in vars(idl.Service.Iface) if not name.startswith("_")}
    assert methods == set(METHODS)


def test_field_reads_the_generated_spec() -> None:
    spec = idl.field(idl.Block, "timestampData")
    assert (spec.id, spec.ttype, spec.type_args[0]) == (7, T.STRUCT, idl.Timestamp)
    with pytest.raises(KeyError):
        idl.field(idl.Block, "decimalData")
