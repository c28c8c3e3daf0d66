"""The one type mapping of lakeprune. A table column has a `ColumnType` (boolean, the integers,
float, double, decimal(p,s), string, binary, date, timestamp); this module parses type names,
converts to and from Arrow and Spark type names, and says which input types a write may widen into
a column type. The build side (Spark DDL strings) and the query side (Arrow types) both come from
here, so they cannot disagree. `timestamp` is an instant in UTC with microsecond precision
(Parquet TIMESTAMP_MICROS, isAdjustedToUTC=true)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.types as pat

from pruner.errors import InvalidSchemaError
from pruner.identifiers import check_identifier

_SIMPLE_TYPES = (
    "boolean",
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "float",
    "double",
    "string",
    "binary",
    "date",
    "timestamp",
)
_ALIASES = {
    "bool": "boolean",
    "byte": "tinyint",
    "int8": "tinyint",
    "short": "smallint",
    "int16": "smallint",
    "integer": "int",
    "int32": "int",
    "long": "bigint",
    "int64": "bigint",
    "real": "float",
    "float32": "float",
    "float64": "double",
    "varchar": "string",
    "text": "string",
    "varbinary": "binary",
    "bytes": "binary",
    "timestamp_ltz": "timestamp",
}
_INTEGER_RANK = {"tinyint": 1, "smallint": 2, "int": 3, "bigint": 4}
_DECIMAL_RE = re.compile(r"(?:decimal|numeric)\s*\(\s*([0-9]+)\s*(?:,\s*([0-9]+)\s*)?\)")
_VARCHAR_RE = re.compile(r"(?:varchar|char)\s*\(\s*[0-9]+\s*\)")
MAX_DECIMAL_PRECISION = 38


@dataclass(frozen=True)
class ColumnType:
    """A column type: a simple type name, or `decimal` with precision and scale."""

    name: str
    precision: int = 0
    scale: int = 0

    def __post_init__(self) -> None:
        if self.name == "decimal":
            if not 1 <= self.precision <= MAX_DECIMAL_PRECISION:
                raise InvalidSchemaError(
                    f"decimal precision must be 1..{MAX_DECIMAL_PRECISION}, got {self.precision}"
                )
            if not 0 <= self.scale <= self.precision:
                raise InvalidSchemaError(
                    f"decimal scale must be 0..precision, got decimal({self.precision},{self.scale})"
                )
        elif self.name not in _SIMPLE_TYPES:
            raise InvalidSchemaError(f"unsupported column type {self.name!r}")

    def __str__(self) -> str:
        if self.name == "decimal":
            return f"decimal({self.precision},{self.scale})"
        return self.name

    @property
    def is_integer(self) -> bool:
        return self.name in _INTEGER_RANK

    def to_arrow(self) -> pa.DataType:
        return _to_arrow(self)

    def to_spark_ddl(self) -> str:
        """Spark SQL type name; every lakeprune type name is also a Spark type name."""
        return str(self)


def parse_type(text: str) -> ColumnType:
    """Parse a type name such as `bigint`, `decimal(10,2)` or `varchar(20)`."""
    name = text.strip().lower()
    match = _DECIMAL_RE.fullmatch(name)
    if match:
        return ColumnType("decimal", int(match.group(1)), int(match.group(2) or 0))
    if _VARCHAR_RE.fullmatch(name):
        return ColumnType("string")
    name = _ALIASES.get(name, name)
    if name == "decimal":
        return ColumnType("decimal", 10, 0)
    if name not in _SIMPLE_TYPES:
        supported = ", ".join((*_SIMPLE_TYPES, "decimal(p,s)"))
        raise InvalidSchemaError(f"unsupported column type {text.strip()!r} (supported: {supported})")
    return ColumnType(name)


def _to_arrow(t: ColumnType) -> pa.DataType:
    simple: dict[str, pa.DataType] = {
        "boolean": pa.bool_(),
        "tinyint": pa.int8(),
        "smallint": pa.int16(),
        "int": pa.int32(),
        "bigint": pa.int64(),
        "float": pa.float32(),
        "double": pa.float64(),
        "string": pa.string(),
        "binary": pa.binary(),
        "date": pa.date32(),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }
    if t.name == "decimal":
        return pa.decimal128(t.precision, t.scale)
    return simple[t.name]


def from_arrow(dt: pa.DataType) -> ColumnType:
    """The column type for an Arrow type (as found in a Parquet file or a Spark Arrow batch)."""
    checks: list[tuple[bool, str]] = [
        (pat.is_boolean(dt), "boolean"),
        (pat.is_int8(dt), "tinyint"),
        (pat.is_int16(dt), "smallint"),
        (pat.is_int32(dt), "int"),
        (pat.is_int64(dt), "bigint"),
        (pat.is_float32(dt), "float"),
        (pat.is_float64(dt), "double"),
        (pat.is_string(dt) or pat.is_large_string(dt) or pat.is_string_view(dt), "string"),
        (pat.is_binary(dt) or pat.is_large_binary(dt) or pat.is_binary_view(dt), "binary"),
        (pat.is_date(dt), "date"),
        (pat.is_timestamp(dt), "timestamp"),
    ]
    for matched, name in checks:
        if matched:
            return ColumnType(name)
    if pat.is_decimal(dt):
        return ColumnType("decimal", dt.precision, dt.scale)
    raise InvalidSchemaError(f"unsupported column type {dt} (nested and unsigned types are not supported)")


def from_spark(simple_string: str) -> ColumnType:
    """The column type for a Spark `DataType.simpleString()` (timestamp_ntz is read as UTC)."""
    name = simple_string.strip().lower()
    if name == "timestamp_ntz":
        return ColumnType("timestamp")
    return parse_type(name)


def can_write(source: ColumnType, target: ColumnType) -> bool:
    """Whether values of `source` fit a `target` column without loss (identity or widening)."""
    if source == target:
        return True
    if source.is_integer and target.is_integer:
        return _INTEGER_RANK[source.name] <= _INTEGER_RANK[target.name]
    if source.name == "float" and target.name == "double":
        return True
    if source.name == "decimal" and target.name == "decimal":
        return (
            target.scale >= source.scale
            and target.precision - target.scale >= source.precision - source.scale
        )
    return False


@dataclass(frozen=True)
class Column:
    name: str
    type: ColumnType
    nullable: bool = True

    def __post_init__(self) -> None:
        check_identifier(self.name, "column")


@dataclass(frozen=True)
class TableSchema:
    """An ordered list of uniquely named columns."""

    columns: tuple[Column, ...]

    def __post_init__(self) -> None:
        if not self.columns:
            raise InvalidSchemaError("a table needs at least one column")
        seen: set[str] = set()
        for column in self.columns:
            if column.name in seen:
                raise InvalidSchemaError(f"duplicate column {column.name!r}")
            seen.add(column.name)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise InvalidSchemaError(f"unknown column {name!r} (columns: {', '.join(self.names)})")

    def has(self, name: str) -> bool:
        return any(c.name == name for c in self.columns)

    def to_arrow(self) -> pa.Schema:
        return pa.schema([pa.field(c.name, c.type.to_arrow(), nullable=c.nullable) for c in self.columns])

    def to_spark_ddl(self) -> str:
        return ", ".join(f"`{c.name}` {c.type.to_spark_ddl()}" for c in self.columns)

    @classmethod
    def from_arrow(cls, schema: pa.Schema) -> TableSchema:
        return cls(tuple(Column(f.name, from_arrow(f.type), f.nullable) for f in schema))

    @classmethod
    def parse(cls, text: str) -> TableSchema:
        """Parse `"id bigint, name string not null, price decimal(10,2)"`."""
        columns = []
        for part in _split_top_level(text):
            tokens = part.split(None, 1)
            if len(tokens) != 2:
                raise InvalidSchemaError(f"expected 'name type' in schema, got {part!r}")
            name, type_text = tokens[0].strip('`"'), tokens[1].strip()
            nullable = True
            if re.search(r"\s+not\s+null$", type_text, flags=re.IGNORECASE):
                nullable = False
                type_text = re.sub(r"\s+not\s+null$", "", type_text, flags=re.IGNORECASE)
            columns.append(Column(name, parse_type(type_text), nullable))
        return cls(tuple(columns))

    def to_json(self) -> list[dict[str, object]]:
        return [{"name": c.name, "type": str(c.type), "nullable": c.nullable} for c in self.columns]

    @classmethod
    def from_json(cls, data: object) -> TableSchema:
        if not isinstance(data, list):
            raise InvalidSchemaError("schema must be a list of columns")
        columns = []
        for item in data:
            if not isinstance(item, dict):
                raise InvalidSchemaError("schema column must be an object")
            columns.append(
                Column(str(item["name"]), parse_type(str(item["type"])), bool(item.get("nullable", True)))
            )
        return cls(tuple(columns))


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside parentheses (decimal(10,2))."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    parts.append("".join(current).strip())
    parts = [p for p in parts if p]
    if not parts:
        raise InvalidSchemaError("empty schema")
    return parts
