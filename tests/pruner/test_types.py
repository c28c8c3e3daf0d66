"""pruner.types: type names, the Arrow mapping, write widening and schema parsing."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pruner.errors import InvalidSchemaError
from pruner.identifiers import MAX_IDENTIFIER_LENGTH
from pruner.types import (
    MAX_DECIMAL_PRECISION,
    Column,
    ColumnType,
    TableSchema,
    can_write,
    from_arrow,
    from_spark,
    parse_type,
)

SIMPLE = ["boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string", "binary", "date"]
ALL_TYPES = [
    *(ColumnType(name) for name in [*SIMPLE, "timestamp"]),
    ColumnType("decimal", 1, 0),
    ColumnType("decimal", 10, 2),
    ColumnType("decimal", 38, 38),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bool", "boolean"),
        ("byte", "tinyint"),
        ("int8", "tinyint"),
        ("short", "smallint"),
        ("int16", "smallint"),
        ("integer", "int"),
        ("int32", "int"),
        ("long", "bigint"),
        ("int64", "bigint"),
        ("real", "float"),
        ("float32", "float"),
        ("float64", "double"),
        ("varchar", "string"),
        ("text", "string"),
        ("varchar(20)", "string"),
        ("CHAR( 3 )", "string"),
        ("varbinary", "binary"),
        ("bytes", "binary"),
        ("timestamp_ltz", "timestamp"),
        ("  BigInt  ", "bigint"),
        ("decimal", "decimal(10,0)"),
        ("numeric(5)", "decimal(5,0)"),
        ("DECIMAL( 12 , 3 )", "decimal(12,3)"),
        ("numeric(38,38)", "decimal(38,38)"),
    ],
)
def test_parse_type_aliases(text: str, expected: str) -> None:
    assert str(parse_type(text)) == expected


@pytest.mark.parametrize(
    "text", ["uuid", "array<int>", "decimal(10,2,1)", "decimal()", "varchar(x)", "int unsigned", ""]
)
def test_parse_type_rejects_unknown_types(text: str) -> None:
    with pytest.raises(InvalidSchemaError, match="unsupported column type"):
        parse_type(text)


@pytest.mark.parametrize(
    ("precision", "scale", "message"),
    [
        (0, 0, "precision"),
        (MAX_DECIMAL_PRECISION + 1, 0, "precision"),
        (5, 6, "scale"),
    ],
)
def test_decimal_bounds_are_enforced(precision: int, scale: int, message: str) -> None:
    with pytest.raises(InvalidSchemaError, match=message):
        ColumnType("decimal", precision, scale)
    with pytest.raises(InvalidSchemaError, match=message):
        parse_type(f"decimal({precision},{scale})")


def test_decimal_bounds_are_inclusive() -> None:
    assert parse_type("decimal(1,0)") == ColumnType("decimal", 1, 0)
    assert parse_type("decimal(38,0)").precision == MAX_DECIMAL_PRECISION
    assert parse_type("decimal(38,38)").scale == 38
    # Arrow can hold wider decimals; they are not a lakeprune type.
    with pytest.raises(InvalidSchemaError, match="precision"):
        from_arrow(pa.decimal256(40, 5))


@pytest.mark.parametrize("column_type", ALL_TYPES, ids=str)
def test_arrow_round_trip(column_type: ColumnType) -> None:
    assert from_arrow(column_type.to_arrow()) == column_type
    assert parse_type(str(column_type)) == column_type
    assert from_spark(column_type.to_spark_ddl()) == column_type


def test_to_arrow_uses_utc_microsecond_timestamps_and_decimal128() -> None:
    assert ColumnType("timestamp").to_arrow() == pa.timestamp("us", tz="UTC")
    assert ColumnType("decimal", 10, 2).to_arrow() == pa.decimal128(10, 2)
    assert ColumnType("date").to_arrow() == pa.date32()


@pytest.mark.parametrize(
    ("arrow_type", "expected"),
    [
        (pa.large_string(), "string"),
        (pa.string_view(), "string"),
        (pa.large_binary(), "binary"),
        (pa.binary_view(), "binary"),
        (pa.date64(), "date"),
        (pa.timestamp("ns"), "timestamp"),
        (pa.timestamp("ms", tz="Europe/Amsterdam"), "timestamp"),
        (pa.decimal256(20, 5), "decimal(20,5)"),
    ],
)
def test_from_arrow_accepts_equivalent_physical_types(arrow_type: pa.DataType, expected: str) -> None:
    assert str(from_arrow(arrow_type)) == expected


@pytest.mark.parametrize(
    "arrow_type",
    [pa.uint8(), pa.uint64(), pa.float16(), pa.list_(pa.int32()), pa.struct([("a", pa.int32())]), pa.null()],
    ids=str,
)
def test_from_arrow_rejects_unsupported_types(arrow_type: pa.DataType) -> None:
    with pytest.raises(InvalidSchemaError, match="unsupported column type"):
        from_arrow(arrow_type)


def test_from_spark_reads_timestamp_ntz_as_timestamp() -> None:
    assert from_spark("timestamp_ntz") == ColumnType("timestamp")
    assert from_spark("decimal(10,2)") == ColumnType("decimal", 10, 2)


@pytest.mark.parametrize(
    ("source", "target", "allowed"),
    [
        ("tinyint", "smallint", True),
        ("tinyint", "bigint", True),
        ("smallint", "int", True),
        ("int", "bigint", True),
        ("bigint", "int", False),
        ("int", "smallint", False),
        ("smallint", "tinyint", False),
        ("float", "double", True),
        ("double", "float", False),
        ("int", "double", False),
        ("bigint", "decimal(38,0)", False),
        ("decimal(10,2)", "decimal(12,2)", True),
        ("decimal(10,2)", "decimal(12,4)", True),
        ("decimal(10,2)", "decimal(10,3)", False),  # loses an integer digit
        ("decimal(10,2)", "decimal(11,1)", False),  # loses a fraction digit
        ("decimal(10,2)", "decimal(9,2)", False),
        ("decimal(10,2)", "double", False),
        ("string", "binary", False),
        ("binary", "string", False),
        ("date", "timestamp", False),
        ("timestamp", "date", False),
        ("boolean", "tinyint", False),
    ],
)
def test_can_write_widening_rules(source: str, target: str, allowed: bool) -> None:
    assert can_write(parse_type(source), parse_type(target)) is allowed


column_types = st.one_of(
    st.sampled_from([ColumnType(name) for name in [*SIMPLE, "timestamp"]]),
    st.integers(1, MAX_DECIMAL_PRECISION).flatmap(
        lambda p: st.integers(0, p).map(lambda s: ColumnType("decimal", p, s))
    ),
)


@given(column_types, column_types, column_types)
def test_can_write_is_a_partial_order(a: ColumnType, b: ColumnType, c: ColumnType) -> None:
    assert can_write(a, a)
    if can_write(a, b) and can_write(b, a):
        assert a == b
    if can_write(a, b) and can_write(b, c):
        assert can_write(a, c)


def test_schema_parse() -> None:
    schema = TableSchema.parse("id bigint, `name` string NOT NULL, price decimal(10, 2) not null, day date")
    assert schema.columns == (
        Column("id", ColumnType("bigint")),
        Column("name", ColumnType("string"), nullable=False),
        Column("price", ColumnType("decimal", 10, 2), nullable=False),
        Column("day", ColumnType("date")),
    )
    assert schema.names == ["id", "name", "price", "day"]
    assert schema.to_spark_ddl() == "`id` bigint, `name` string, `price` decimal(10,2), `day` date"


def test_schema_round_trips_through_json_and_arrow() -> None:
    schema = TableSchema.parse(
        "a boolean, b tinyint not null, c float, d binary, e timestamp, f decimal(38,10), g varchar(3)"
    )
    assert TableSchema.from_json(schema.to_json()) == schema
    arrow = schema.to_arrow()
    assert arrow.field("b").nullable is False
    assert arrow.field("a").nullable is True
    assert TableSchema.from_arrow(arrow) == schema


def test_schema_lookup() -> None:
    schema = TableSchema.parse("id bigint, city string")
    assert schema.column("city").type == ColumnType("string")
    assert schema.has("id")
    assert not schema.has("ID")
    with pytest.raises(InvalidSchemaError, match=r"unknown column 'nope' \(columns: id, city\)"):
        schema.column("nope")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Id bigint", "lowercase"),
        ("1a bigint", "not starting with a digit"),
        ("a-b int", "is not allowed"),
        ("é int", "is not allowed"),
        ("_lp_op int", "reserved prefix"),
        ("\uff43ity string", "non-ASCII"),  # full-width 'c': a valid Python identifier
        (f"{'c' * (MAX_IDENTIFIER_LENGTH + 1)} int", "too long: at most 128 characters"),
        ("a int, b string, a string", "duplicate column 'a'"),
        ("", "empty schema"),
        (" , ", "empty schema"),
        ("id", "expected 'name type'"),
        ("id bigint, price decimal(10,2", "unsupported column type"),
        ("id not null", "unsupported column type"),
        ("id map<string,int>", "unsupported column type"),
    ],
)
def test_schema_parse_errors(text: str, message: str) -> None:
    with pytest.raises(InvalidSchemaError, match=message):
        TableSchema.parse(text)


@pytest.mark.parametrize("text", ["decimal(\uff11\uff10,2)", "decimal(10,\u0662)", "varchar(\uff12\uff10)"])
def test_type_parameters_are_ascii_digits(text: str) -> None:
    """`\\d` and int() accept other scripts' digits; a type name must not."""
    with pytest.raises(InvalidSchemaError, match="unsupported column type"):
        parse_type(text)


def test_column_names_up_to_the_limit_and_from_arrow() -> None:
    longest = "c" * MAX_IDENTIFIER_LENGTH
    assert TableSchema.parse(f"{longest} int").names == [longest]
    with pytest.raises(InvalidSchemaError, match="non-ASCII"):
        TableSchema.from_arrow(pa.schema([pa.field("c\u0456ty", pa.string())]))
    with pytest.raises(InvalidSchemaError, match="too long"):
        TableSchema.from_arrow(pa.schema([pa.field(longest + "c", pa.string())]))


@pytest.mark.parametrize(
    "data",
    [
        {"name": "a", "type": "int"},
        [["a", "int"]],
        [{"name": "_lp_x", "type": "int"}],
        [{"name": "a", "type": "uuid"}],
        [],
    ],
)
def test_schema_from_json_errors(data: object) -> None:
    with pytest.raises(InvalidSchemaError):
        TableSchema.from_json(data)
