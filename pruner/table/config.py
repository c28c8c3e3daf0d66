"""`table.json`: the table's definition — format version, name, schema, record key field(s),
partition fields, ordering field and typed properties. Loading validates everything, so the rest of
the code can rely on a `TableConfig` being consistent; a missing or corrupt file becomes a one-line
error naming the path."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any

from pruner.errors import (
    InvalidSchemaError,
    LakepruneError,
    TableCorruptError,
    TableNotFoundError,
)
from pruner.storage import Storage
from pruner.table.layout import TABLE_JSON
from pruner.types import TableSchema

FORMAT_VERSION = 1
RECORD_KEY_TYPES = frozenset(
    {"string", "tinyint", "smallint", "int", "bigint", "date", "decimal", "timestamp"}
)
PARTITION_TYPES = frozenset({"string", "tinyint", "smallint", "int", "bigint", "date", "boolean"})
ORDERING_TYPES = frozenset(
    {"tinyint", "smallint", "int", "bigint", "float", "double", "decimal", "date", "timestamp", "string"}
)
MiB = 1024 * 1024


@dataclass(frozen=True)
class TableProperties:
    """Tunables stored with the table. Names in `table.json` use dots: `write.target_file_size_bytes`."""

    write_target_file_size_bytes: int = 128 * MiB
    write_small_file_limit_bytes: int = 100 * MiB
    write_row_group_bytes: int = 16 * MiB
    index_record_index_buckets: int = 16
    index_files_buckets: int = 4
    index_column_stats_buckets: int = 4
    index_partition_stats_buckets: int = 2
    index_bloom_filters_buckets: int = 4
    index_secondary_index_buckets: int = 4
    index_compaction_max_log_files: int = 10
    clean_retain_commits: int = 10

    def __post_init__(self) -> None:
        for f in fields(self):
            if getattr(self, f.name) < 1:
                raise InvalidSchemaError(f"property {_dotted(f.name)} must be >= 1")
        if self.write_small_file_limit_bytes > self.write_target_file_size_bytes:
            raise InvalidSchemaError(
                "write.small_file_limit_bytes must not exceed write.target_file_size_bytes"
            )

    def to_json(self) -> dict[str, int]:
        return {_dotted(k): v for k, v in asdict(self).items()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TableProperties:
        if not isinstance(data, dict):
            raise InvalidSchemaError(f"table properties must be an object, got {type(data).__name__}")
        known = {_dotted(f.name): f.name for f in fields(cls)}
        values: dict[str, int] = {}
        for key, value in data.items():
            if key not in known:
                raise InvalidSchemaError(
                    f"unknown table property {key!r} (known: {', '.join(sorted(known))})"
                )
            try:
                values[known[key]] = int(value)
            except (TypeError, ValueError):
                raise InvalidSchemaError(f"property {key} must be an integer, got {value!r}") from None
        return cls(**values)

    def with_overrides(self, data: dict[str, Any]) -> TableProperties:
        return TableProperties.from_json({**self.to_json(), **data})


def _dotted(field_name: str) -> str:
    return field_name.replace("_", ".", 1)


@dataclass(frozen=True)
class TableConfig:
    name: str
    schema: TableSchema
    record_key: tuple[str, ...]
    partition_fields: tuple[str, ...] = ()
    ordering_field: str | None = None
    properties: TableProperties = TableProperties()
    format_version: int = FORMAT_VERSION

    def __post_init__(self) -> None:
        if not self.name:
            raise InvalidSchemaError("table name must not be empty")
        if not self.record_key:
            raise InvalidSchemaError("a record key column is required")
        _check_fields(self.schema, self.record_key, RECORD_KEY_TYPES, "record key")
        _check_fields(self.schema, self.partition_fields, PARTITION_TYPES, "partition")
        if self.ordering_field is not None:
            _check_fields(self.schema, (self.ordering_field,), ORDERING_TYPES, "ordering")
        if len(set(self.partition_fields)) != len(self.partition_fields):
            raise InvalidSchemaError("partition columns must be distinct")
        if len(set(self.record_key)) != len(self.record_key):
            raise InvalidSchemaError("record key columns must be distinct")

    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": self.format_version,
            "name": self.name,
            "schema": self.schema.to_json(),
            "record_key": list(self.record_key),
            "partition_fields": list(self.partition_fields),
            "ordering_field": self.ordering_field,
            "properties": self.properties.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TableConfig:
        version = data.get("format_version")
        if version != FORMAT_VERSION:
            raise InvalidSchemaError(f"unsupported format_version {version!r}")
        return cls(
            name=str(data["name"]),
            schema=TableSchema.from_json(data["schema"]),
            record_key=tuple(str(k) for k in data["record_key"]),
            partition_fields=tuple(str(p) for p in data.get("partition_fields") or ()),
            ordering_field=data.get("ordering_field"),
            properties=TableProperties.from_json(data.get("properties") or {}),
        )


def _check_fields(schema: TableSchema, names: tuple[str, ...], allowed: frozenset[str], role: str) -> None:
    for name in names:
        if not schema.has(name):
            raise InvalidSchemaError(
                f"{role} column {name!r} is not in the schema (columns: {', '.join(schema.names)})"
            )
        type_name = schema.column(name).type.name
        if type_name not in allowed:
            raise InvalidSchemaError(
                f"{role} column {name!r} has type {schema.column(name).type}, which cannot be "
                f"used as a {role} column (allowed: {', '.join(sorted(allowed))})"
            )


def load_config(storage: Storage) -> TableConfig:
    """Read and validate `table.json`."""
    if not storage.exists(TABLE_JSON):
        raise TableNotFoundError(f"no lakeprune table at {storage.uri} (missing {TABLE_JSON})")
    try:
        data = json.loads(storage.read_bytes(TABLE_JSON))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        return TableConfig.from_json(data)
    except (ValueError, KeyError, TypeError, LakepruneError) as exc:
        detail = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
        raise TableCorruptError(f"{storage.full_uri(TABLE_JSON)} is corrupt: {detail}") from exc


def save_config(storage: Storage, config: TableConfig) -> None:
    storage.publish(TABLE_JSON, json.dumps(config.to_json(), indent=2).encode())
