"""Every `TypeKind` has every mapping: its traits in `pruner.types`, its gRPC value fields and proto
`TypeKind`, its Thrift connector type, and a path through each per-kind conversion (normalising,
the codec, the connector arrays, bloom hashing, column statistics). mypy already refuses a `match`
over the kinds that misses one; these tests check that each mapping is also right, one sample
value per kind (a new kind must bring its own sample)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from pruner.index import bloom
from pruner.index.stats import FILE_STATS_SCHEMA, family, file_stats
from pruner.predicate.values import Value, normalize
from pruner.service import codec
from pruner.service.gen.lakeprune.v1 import predicate_pb2 as ppb
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.thrift import connector_types
from pruner.types import (
    Column,
    ColumnType,
    Role,
    StatsFamily,
    TableSchema,
    TypeKind,
    from_arrow,
    parse_type,
)

SAMPLES: dict[TypeKind, Value] = {
    TypeKind.BOOLEAN: True,
    TypeKind.TINYINT: -7,
    TypeKind.SMALLINT: 300,
    TypeKind.INT: -70_000,
    TypeKind.BIGINT: 2**40,
    TypeKind.FLOAT: 1.5,
    TypeKind.DOUBLE: 0.1,
    TypeKind.DECIMAL: Decimal("12.34"),
    TypeKind.STRING: "ab'c",
    TypeKind.BINARY: b"\x00\xff",
    TypeKind.DATE: date(2026, 1, 2),
    TypeKind.TIMESTAMP: datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
}
# The *Types* table of docs/format.md: the roles a column of each kind may play.
KEY, PART, ORDER = Role.RECORD_KEY, Role.PARTITION, Role.ORDERING
SECONDARY, BLOOM = Role.SECONDARY_INDEX, Role.BLOOM_FILTER
ROLES: dict[str, set[Role]] = {
    "boolean": {PART, SECONDARY},
    "tinyint": {KEY, PART, ORDER, SECONDARY, BLOOM},
    "smallint": {KEY, PART, ORDER, SECONDARY, BLOOM},
    "int": {KEY, PART, ORDER, SECONDARY, BLOOM},
    "bigint": {KEY, PART, ORDER, SECONDARY, BLOOM},
    "float": {ORDER, BLOOM},
    "double": {ORDER, BLOOM},
    "decimal": {KEY, ORDER, SECONDARY, BLOOM},
    "string": {KEY, PART, ORDER, SECONDARY, BLOOM},
    "binary": {BLOOM},
    "date": {KEY, PART, ORDER, SECONDARY, BLOOM},
    "timestamp": {KEY, ORDER, SECONDARY, BLOOM},
}
KINDS = list(TypeKind)


def column_type(kind: TypeKind) -> ColumnType:
    return ColumnType(kind, 10, 2) if kind is TypeKind.DECIMAL else ColumnType(kind)


def sample_array(kind: TypeKind) -> pa.Array:
    return pa.array([SAMPLES[kind], None], column_type(kind).to_arrow())


def test_every_kind_has_a_sample_and_a_row_in_the_roles_table() -> None:
    assert set(SAMPLES) == set(TypeKind)
    assert set(ROLES) == {kind.value for kind in TypeKind}


# pruner.types -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_names_parse_back_to_their_kind(kind: TypeKind) -> None:
    expected = column_type(kind)
    assert ColumnType(kind.value, expected.precision, expected.scale) == expected  # a name reads as its kind
    assert parse_type(str(column_type(kind))) == column_type(kind)
    assert column_type(kind).name == kind.value


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_arrow_type_and_traits_agree_with_arrow(kind: TypeKind) -> None:
    arrow_type = column_type(kind).to_arrow()
    assert kind.holds_arrow(arrow_type)
    assert [k for k in TypeKind if k.holds_arrow(arrow_type)] == [kind]
    assert from_arrow(arrow_type) == column_type(kind)
    if kind.integer_bounds is not None:
        info = np.iinfo(arrow_type.to_pandas_dtype())
        assert kind.integer_bounds == (int(info.min), int(info.max))
    else:
        assert not pa.types.is_integer(arrow_type)
    expected_bits = {pa.float32(): 32, pa.float64(): 64}.get(arrow_type)
    assert kind.float_bits == expected_bits
    assert kind.is_numeric == (kind.is_integer or kind.is_floating or pa.types.is_decimal(arrow_type))


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_roles_are_the_readme_table(kind: TypeKind) -> None:
    assert {role for role in Role if kind.allows(role)} == ROLES[kind.value]
    for role in Role:
        assert (kind in role.kinds()) == kind.allows(role)


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_statistics_family_holds_the_values(kind: TypeKind) -> None:
    fam = family(column_type(kind))
    assert fam is kind.stats_family and fam in StatsFamily
    schema = TableSchema((Column("c", column_type(kind)),))
    stats = file_stats(pa.table({"c": sample_array(kind)}), schema, ("c",), "", "f")
    assert stats.schema == FILE_STATS_SCHEMA
    low, high = stats.column(f"min_{fam}")[0].as_py(), stats.column(f"max_{fam}")[0].as_py()
    sample = SAMPLES[kind]
    if isinstance(sample, Decimal):  # stored as doubles rounded outward
        assert Decimal(low) <= sample <= Decimal(high)
    else:
        assert low == high == sample


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_normalize_and_bloom_hashing_take_every_kind(kind: TypeKind) -> None:
    sample = SAMPLES[kind]
    assert normalize(sample, column_type(kind)) == sample
    by_python = bloom.hash_python_values([sample], column_type(kind))
    assert by_python.tolist() == bloom.hash_values(sample_array(kind)).tolist()


# gRPC -------------------------------------------------------------------------------------------

VALUE_FIELDS = {field.name for field in ppb.Value.DESCRIPTOR.oneofs_by_name["kind"].fields}


def test_proto_kinds_are_distinct_and_cover_the_proto_enum() -> None:
    kinds = [codec.proto_kind(kind) for kind in TypeKind]
    assert len(set(kinds)) == len(kinds)
    assert set(kinds) == set(spb.TypeKind.values()) - {spb.TYPE_KIND_UNSPECIFIED}


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_every_kind_has_its_grpc_mappings(kind: TypeKind) -> None:
    fields = codec.value_fields(kind)
    assert fields and set(fields) <= VALUE_FIELDS
    message = codec.encode_column_type(column_type(kind))
    assert message.kind == codec.proto_kind(kind) and message.name == str(column_type(kind))
    assert codec.decode_column_type(message) == column_type(kind)
    encoded = codec.encode_value(SAMPLES[kind])
    assert encoded.WhichOneof("kind") in fields
    assert codec.decode_value(encoded, Column("c", column_type(kind))) == SAMPLES[kind]


# Thrift -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_every_kind_has_its_thrift_mappings(kind: TypeKind) -> None:
    target = connector_types.connector_type(column_type(kind))
    assert target in connector_types.ConnectorType
    assert connector_types.sql_type(column_type(kind)) == target.sql
    comment = connector_types.comment(column_type(kind))
    assert comment is None or str(column_type(kind)) in comment
    sent = connector_types.to_connector_array(sample_array(kind), column_type(kind))
    assert sent.type == target.arrow_type and sent.null_count == 1
    if connector_types.is_exact(column_type(kind)):
        back = connector_types.from_connector_array(sent, column_type(kind))
        assert back.to_pylist() == [SAMPLES[kind], None]
    else:
        assert kind in (TypeKind.DECIMAL, TypeKind.TIMESTAMP)
