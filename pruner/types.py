"""The one type model of lakeprune. A table column has a `ColumnType`: a `TypeKind` (boolean, the
integers, float, double, decimal, string, binary, date, timestamp), plus precision and scale for
decimal. The kinds are a closed set: what lakeprune knows about a kind (its integer range, its
floating-point width, the statistics family its min / max are stored in, the roles a column of it
may play, its Arrow type) is given once per kind, in `_traits` and the methods below, each an
exhaustive `match` that mypy checks with `assert_never`; wire modules map kinds the same way, so
a new kind cannot be forgotten anywhere. This module also parses and prints type names
(`decimal(10,2)`, aliases) and converts to and from Arrow and Spark type names, so the build side
(Spark DDL strings) and the query side (Arrow types) cannot disagree. `timestamp` is an instant in
UTC with microsecond precision (Parquet TIMESTAMP_MICROS, isAdjustedToUTC=true)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import assert_never

import pyarrow as pa
import pyarrow.types as pat

from pruner.bounded import echo
from pruner.errors import InvalidSchemaError
from pruner.identifiers import check_identifier
from pruner.numeric import Bits


class TypeKind(StrEnum):
    """The kind of a column type; the value is its type name (`table.json`, Spark DDL)."""

    BOOLEAN = "boolean"
    TINYINT = "tinyint"
    SMALLINT = "smallint"
    INT = "int"
    BIGINT = "bigint"
    FLOAT = "float"
    DOUBLE = "double"
    DECIMAL = "decimal"
    STRING = "string"
    BINARY = "binary"
    DATE = "date"
    TIMESTAMP = "timestamp"

    @property
    def integer_bounds(self) -> tuple[int, int] | None:
        """The inclusive range of an integer kind; None for the others."""
        return _TRAITS[self].integer_bounds

    @property
    def float_bits(self) -> Bits | None:
        """The width of a binary floating-point kind (32 for float, 64 for double); None else."""
        return _TRAITS[self].float_bits

    @property
    def stats_family(self) -> StatsFamily:
        """The pair of `min_<family>` / `max_<family>` statistics columns a column's bounds use."""
        return _TRAITS[self].stats_family

    @property
    def is_integer(self) -> bool:
        return self.integer_bounds is not None

    @property
    def is_floating(self) -> bool:
        return self.float_bits is not None

    @property
    def is_numeric(self) -> bool:
        return self.is_integer or self.is_floating or self is TypeKind.DECIMAL

    def allows(self, role: Role) -> bool:
        """Whether a column of this kind may play `role`."""
        return role in _TRAITS[self].roles

    def arrow_type(self, precision: int = 0, scale: int = 0) -> pa.DataType:
        """The Arrow type of a column of this kind (precision and scale for decimal only)."""
        match self:
            case TypeKind.BOOLEAN:
                return pa.bool_()
            case TypeKind.TINYINT:
                return pa.int8()
            case TypeKind.SMALLINT:
                return pa.int16()
            case TypeKind.INT:
                return pa.int32()
            case TypeKind.BIGINT:
                return pa.int64()
            case TypeKind.FLOAT:
                return pa.float32()
            case TypeKind.DOUBLE:
                return pa.float64()
            case TypeKind.DECIMAL:
                return pa.decimal128(precision, scale)
            case TypeKind.STRING:
                return pa.string()
            case TypeKind.BINARY:
                return pa.binary()
            case TypeKind.DATE:
                return pa.date32()
            case TypeKind.TIMESTAMP:
                return pa.timestamp("us", tz="UTC")
            case _:
                assert_never(self)

    def holds_arrow(self, dt: pa.DataType) -> bool:
        """Whether values of Arrow type `dt` (as found in a Parquet file or a Spark Arrow batch)
        are values of this kind."""
        match self:
            case (
                TypeKind.BOOLEAN
                | TypeKind.TINYINT
                | TypeKind.SMALLINT
                | TypeKind.INT
                | TypeKind.BIGINT
                | TypeKind.FLOAT
                | TypeKind.DOUBLE
            ):
                return bool(dt == self.arrow_type())
            case TypeKind.DECIMAL:
                return bool(pat.is_decimal(dt))
            case TypeKind.STRING:
                return bool(pat.is_string(dt) or pat.is_large_string(dt) or pat.is_string_view(dt))
            case TypeKind.BINARY:
                return bool(pat.is_binary(dt) or pat.is_large_binary(dt) or pat.is_binary_view(dt))
            case TypeKind.DATE:
                return bool(pat.is_date(dt))
            case TypeKind.TIMESTAMP:
                return bool(pat.is_timestamp(dt))
            case _:
                assert_never(self)


class StatsFamily(StrEnum):
    """A pair of typed min / max columns of the statistics partitions (the value is the suffix:
    `min_int`, `max_int`, ...); the member order is the column order of those files."""

    INT = "int"
    DOUBLE = "double"
    STRING = "string"
    BINARY = "binary"
    DATE = "date"
    TS = "ts"

    @property
    def arrow_type(self) -> pa.DataType:
        match self:
            case StatsFamily.INT:
                return pa.int64()
            case StatsFamily.DOUBLE:
                return pa.float64()
            case StatsFamily.STRING:
                return pa.string()
            case StatsFamily.BINARY:
                return pa.binary()
            case StatsFamily.DATE:
                return pa.date32()
            case StatsFamily.TS:
                return pa.timestamp("us", tz="UTC")
            case _:
                assert_never(self)


class Role(Enum):
    """What a column may be used as; the value names the role in messages."""

    RECORD_KEY = "record key"
    PARTITION = "partition"
    ORDERING = "ordering"
    SECONDARY_INDEX = "secondary index"  # exact equality is well defined on its values
    BLOOM_FILTER = "bloom filter"  # a filter can prune (a boolean column has two values)

    def kinds(self) -> list[TypeKind]:
        """The kinds whose columns may play this role, in declaration order."""
        return [kind for kind in TypeKind if kind.allows(self)]


@dataclass(frozen=True)
class _Traits:
    integer_bounds: tuple[int, int] | None
    float_bits: Bits | None
    stats_family: StatsFamily
    roles: frozenset[Role]


_KEY_ROLES = frozenset(
    {Role.RECORD_KEY, Role.PARTITION, Role.ORDERING, Role.SECONDARY_INDEX, Role.BLOOM_FILTER}
)


def _integer(bits: int) -> _Traits:
    return _Traits((-(2 ** (bits - 1)), 2 ** (bits - 1) - 1), None, StatsFamily.INT, _KEY_ROLES)


def _traits(kind: TypeKind) -> _Traits:
    """Everything lakeprune knows about a kind besides its Arrow type (docs/format.md, *Types*)."""
    match kind:
        case TypeKind.BOOLEAN:
            roles = {Role.PARTITION, Role.SECONDARY_INDEX}
            return _Traits(None, None, StatsFamily.INT, frozenset(roles))
        case TypeKind.TINYINT:
            return _integer(8)
        case TypeKind.SMALLINT:
            return _integer(16)
        case TypeKind.INT:
            return _integer(32)
        case TypeKind.BIGINT:
            return _integer(64)
        case TypeKind.FLOAT:
            return _Traits(None, 32, StatsFamily.DOUBLE, frozenset({Role.ORDERING, Role.BLOOM_FILTER}))
        case TypeKind.DOUBLE:
            return _Traits(None, 64, StatsFamily.DOUBLE, frozenset({Role.ORDERING, Role.BLOOM_FILTER}))
        case TypeKind.DECIMAL:
            return _Traits(None, None, StatsFamily.DOUBLE, _KEY_ROLES - {Role.PARTITION})
        case TypeKind.STRING:
            return _Traits(None, None, StatsFamily.STRING, _KEY_ROLES)
        case TypeKind.BINARY:
            return _Traits(None, None, StatsFamily.BINARY, frozenset({Role.BLOOM_FILTER}))
        case TypeKind.DATE:
            return _Traits(None, None, StatsFamily.DATE, _KEY_ROLES)
        case TypeKind.TIMESTAMP:
            return _Traits(None, None, StatsFamily.TS, _KEY_ROLES - {Role.PARTITION})
        case _:
            assert_never(kind)


_TRAITS = {kind: _traits(kind) for kind in TypeKind}
_SIMPLE_TYPES = tuple(kind.value for kind in TypeKind if kind is not TypeKind.DECIMAL)
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
_DECIMAL_RE = re.compile(r"(?:decimal|numeric)\s*\(\s*([0-9]+)\s*(?:,\s*([0-9]+)\s*)?\)")
_VARCHAR_RE = re.compile(r"(?:varchar|char)\s*\(\s*[0-9]+\s*\)")
MAX_DECIMAL_PRECISION = 38


@dataclass(frozen=True)
class ColumnType:
    """A column type: a kind, with precision and scale for decimal. `ColumnType("bigint")` (a
    type name for the kind) is accepted too and reads as `ColumnType(TypeKind.BIGINT)`."""

    kind: TypeKind
    precision: int = 0
    scale: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.kind, TypeKind):
            try:
                object.__setattr__(self, "kind", TypeKind(self.kind))
            except ValueError:
                raise InvalidSchemaError(f"unsupported column type {self.kind!r}") from None
        if self.kind is TypeKind.DECIMAL:
            if not 1 <= self.precision <= MAX_DECIMAL_PRECISION:
                raise InvalidSchemaError(
                    f"decimal precision must be 1..{MAX_DECIMAL_PRECISION}, got {self.precision}"
                )
            if not 0 <= self.scale <= self.precision:
                raise InvalidSchemaError(
                    f"decimal scale must be 0..precision, got decimal({self.precision},{self.scale})"
                )

    def __str__(self) -> str:
        if self.kind is TypeKind.DECIMAL:
            return f"decimal({self.precision},{self.scale})"
        return self.kind.value

    @property
    def name(self) -> str:
        """The kind's type name (without precision and scale); dispatch on `kind`, not on this."""
        return self.kind.value

    @property
    def is_integer(self) -> bool:
        return self.kind.is_integer

    def to_arrow(self) -> pa.DataType:
        return self.kind.arrow_type(self.precision, self.scale)

    def to_spark_ddl(self) -> str:
        """Spark SQL type name; every lakeprune type name is also a Spark type name."""
        return str(self)


def parse_type(text: str) -> ColumnType:
    """Parse a type name such as `bigint`, `decimal(10,2)` or `varchar(20)`."""
    name = text.strip().lower()
    match = _DECIMAL_RE.fullmatch(name)
    if match:
        return ColumnType(TypeKind.DECIMAL, int(match.group(1)), int(match.group(2) or 0))
    if _VARCHAR_RE.fullmatch(name):
        return ColumnType(TypeKind.STRING)
    name = _ALIASES.get(name, name)
    if name == TypeKind.DECIMAL:
        return ColumnType(TypeKind.DECIMAL, 10, 0)
    if name not in _SIMPLE_TYPES:
        supported = ", ".join((*_SIMPLE_TYPES, "decimal(p,s)"))
        raise InvalidSchemaError(f"unsupported column type {text.strip()!r} (supported: {supported})")
    return ColumnType(TypeKind(name))


def from_arrow(dt: pa.DataType) -> ColumnType:
    """The column type for an Arrow type (as found in a Parquet file or a Spark Arrow batch)."""
    for kind in TypeKind:
        if kind.holds_arrow(dt):
            if kind is TypeKind.DECIMAL:
                return ColumnType(kind, dt.precision, dt.scale)
            return ColumnType(kind)
    raise InvalidSchemaError(f"unsupported column type {dt} (nested and unsigned types are not supported)")


def from_spark(simple_string: str) -> ColumnType:
    """The column type for a Spark `DataType.simpleString()` (timestamp_ntz is read as UTC)."""
    name = simple_string.strip().lower()
    if name == "timestamp_ntz":
        return ColumnType(TypeKind.TIMESTAMP)
    return parse_type(name)


def can_write(source: ColumnType, target: ColumnType) -> bool:
    """Whether values of `source` fit a `target` column without loss (identity or widening)."""
    if source == target:
        return True
    source_range, target_range = source.kind.integer_bounds, target.kind.integer_bounds
    if source_range is not None and target_range is not None:
        return target_range[0] <= source_range[0] and source_range[1] <= target_range[1]
    source_bits, target_bits = source.kind.float_bits, target.kind.float_bits
    if source_bits is not None and target_bits is not None:
        return source_bits <= target_bits
    if source.kind is TypeKind.DECIMAL and target.kind is TypeKind.DECIMAL:
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
        raise InvalidSchemaError(f"unknown column {echo(name)} (columns: {', '.join(self.names)})")

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
