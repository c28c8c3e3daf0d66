"""The generated Thrift code under the names hand-written code uses. `gen/` is produced by
`scripts/generate.sh` from `proto/trino/trino_thrift.thrift`; everything else in `pruner.thrift`
imports the structs from here, so that the `TrinoThrift` prefix and the generated package layout
appear in one place. The aliases are the generated classes themselves (construct them with keyword
arguments named as in the IDL); `Service` is the generated service module, with its `*_args` and
`*_result` structs and the `Client` that tests use. `field` reads a field's id and type from a
generated `thrift_spec`, for the hand-written fast encoder in `blocks`, which must never hard-code
a field id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from thrift.Thrift import TApplicationException, TMessageType, TType

from pruner.thrift.gen.trino_thrift import TrinoThriftService as Service
from pruner.thrift.gen.trino_thrift import ttypes

__all__ = [
    "AllOrNoneValueSet",
    "Bigint",
    "BigintArray",
    "Block",
    "Boolean",
    "Bound",
    "ColumnMetadata",
    "Date",
    "Domain",
    "Double",
    "EquatableValueSet",
    "FieldSpec",
    "HostAddress",
    "HyperLogLog",
    "Id",
    "Integer",
    "Json",
    "Marker",
    "NullableColumnSet",
    "NullableSchemaName",
    "NullableTableMetadata",
    "NullableToken",
    "PageResult",
    "Range",
    "RangeValueSet",
    "SchemaTableName",
    "Service",
    "ServiceException",
    "Split",
    "SplitBatch",
    "TApplicationException",
    "TMessageType",
    "TType",
    "TableMetadata",
    "Timestamp",
    "TupleDomain",
    "ValueSet",
    "Varchar",
    "field",
]

Integer = ttypes.TrinoThriftInteger
Bigint = ttypes.TrinoThriftBigint
Double = ttypes.TrinoThriftDouble
Varchar = ttypes.TrinoThriftVarchar
Boolean = ttypes.TrinoThriftBoolean
Date = ttypes.TrinoThriftDate
Timestamp = ttypes.TrinoThriftTimestamp
Json = ttypes.TrinoThriftJson
HyperLogLog = ttypes.TrinoThriftHyperLogLog
BigintArray = ttypes.TrinoThriftBigintArray
Block = ttypes.TrinoThriftBlock

SchemaTableName = ttypes.TrinoThriftSchemaTableName
NullableSchemaName = ttypes.TrinoThriftNullableSchemaName
ColumnMetadata = ttypes.TrinoThriftColumnMetadata
TableMetadata = ttypes.TrinoThriftTableMetadata
NullableTableMetadata = ttypes.TrinoThriftNullableTableMetadata
NullableColumnSet = ttypes.TrinoThriftNullableColumnSet
Id = ttypes.TrinoThriftId
NullableToken = ttypes.TrinoThriftNullableToken

Bound = ttypes.TrinoThriftBound
Marker = ttypes.TrinoThriftMarker
Range = ttypes.TrinoThriftRange
AllOrNoneValueSet = ttypes.TrinoThriftAllOrNoneValueSet
EquatableValueSet = ttypes.TrinoThriftEquatableValueSet
RangeValueSet = ttypes.TrinoThriftRangeValueSet
ValueSet = ttypes.TrinoThriftValueSet
Domain = ttypes.TrinoThriftDomain
TupleDomain = ttypes.TrinoThriftTupleDomain

HostAddress = ttypes.TrinoThriftHostAddress
Split = ttypes.TrinoThriftSplit
SplitBatch = ttypes.TrinoThriftSplitBatch
PageResult = ttypes.TrinoThriftPageResult
ServiceException = ttypes.TrinoThriftServiceException


@dataclass(frozen=True)
class FieldSpec:
    """One field of a generated struct: its id, its `TType`, and the type arguments of the spec
    (for a list: `(element TType, element args, False)`; for a struct: `[class, spec]`)."""

    id: int
    ttype: int
    type_args: Any


def field(struct: type, name: str) -> FieldSpec:
    """The spec of field `name` of a generated struct class; `KeyError` if it has no such field."""
    spec: tuple[Any, ...] = vars(struct)["thrift_spec"]
    for entry in spec:
        if entry is not None and entry[2] == name:
            return FieldSpec(int(entry[0]), int(entry[1]), entry[3])
    raise KeyError(f"{struct.__name__} has no field {name!r}")
