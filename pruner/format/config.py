"""`table.json`: the table's definition — format version, name, schema, record key field(s),
partition fields (with the earlier partitionings, once the partitioning evolved), ordering field and
typed properties. Loading validates everything, so the rest of the code can rely on a `TableConfig`
being consistent; a missing or corrupt file becomes a one-line error naming the path. A table whose
partitioning evolved is written as format version 2: a reader that predates evolution would take
the current partition fields for those of every file, so it must refuse such a table. An adopted
table (`builder.adopt`) whose files may lack their partition columns (Hive-style directories keep
them only in the path) is written as format version 3, for the same reason: a reader that does not
fill those columns from the path (`pruner.format.path_columns`) would read them as NULL."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from pruner.errors import (
    InvalidInputError,
    InvalidSchemaError,
    LakepruneError,
    TableCorruptError,
    TableNotFoundError,
)
from pruner.format.layout import TABLE_JSON
from pruner.storage import Storage
from pruner.types import Role, TableSchema

FORMAT_VERSION = 1
EVOLVED_FORMAT_VERSION = 2  # the partitioning evolved: `partition_history` lists earlier ones
ADOPTED_FORMAT_VERSION = 3  # files may lack partition columns: `path_columns_in_files` is false
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
    # A partition whose buckets to compact hold this many bytes is compacted by a Spark job.
    index_compaction_spark_threshold_bytes: int = 256 * MiB
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
class EarlierPartitioning:
    """Partition fields that new records were written with up to instant `until` (the latest
    completed instant when the partitioning changed; None: changed before the first commit). Files
    written then keep their partition paths."""

    fields: tuple[str, ...]
    until: str | None

    def to_json(self) -> dict[str, Any]:
        return {"fields": list(self.fields), "until": self.until}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EarlierPartitioning:
        until = data.get("until")
        return cls(tuple(str(f) for f in data["fields"]), None if until is None else str(until))


@dataclass(frozen=True)
class TableConfig:
    name: str  # follows `pruner.identifiers` from creation on (`builder.create`); not re-checked here
    schema: TableSchema
    record_key: tuple[str, ...]
    partition_fields: tuple[str, ...] = ()  # the current partitioning, for new records
    ordering_field: str | None = None
    properties: TableProperties = TableProperties()
    partition_history: tuple[EarlierPartitioning, ...] = ()  # oldest first
    # False for an adopted table: a file may lack a partition column; readers take it from the path.
    path_columns_in_files: bool = True

    def __post_init__(self) -> None:
        if not self.name:
            raise InvalidSchemaError("table name must not be empty")
        if not self.record_key:
            raise InvalidSchemaError("a record key column is required")
        _check_fields(self.schema, self.record_key, Role.RECORD_KEY)
        for partitioning in (*(e.fields for e in self.partition_history), self.partition_fields):
            _check_partitioning(self.schema, partitioning)
        if self.ordering_field is not None:
            _check_fields(self.schema, (self.ordering_field,), Role.ORDERING)
        if len(set(self.record_key)) != len(self.record_key):
            raise InvalidSchemaError("record key columns must be distinct")
        if self.partition_history and not self.path_columns_in_files:
            raise InvalidSchemaError("an adopted table's partitioning cannot evolve")

    @property
    def format_version(self) -> int:
        if not self.path_columns_in_files:
            return ADOPTED_FORMAT_VERSION
        return EVOLVED_FORMAT_VERSION if self.partition_history else FORMAT_VERSION

    @property
    def all_partition_fields(self) -> tuple[str, ...]:
        """Every column that some file's partition path may carry: the current partition fields,
        then those only earlier partitionings had. A file's path names its own columns."""
        seen = dict.fromkeys(self.partition_fields)
        for earlier in reversed(self.partition_history):
            seen.update(dict.fromkeys(earlier.fields))
        return tuple(seen)

    def with_partitioning(self, fields: tuple[str, ...], until: str | None) -> TableConfig:
        """The config with new partition fields for future writes; the current ones join the
        history as written up to `until`. Raises for invalid fields or no change."""
        if not self.path_columns_in_files:
            raise InvalidInputError(
                f"table {self.name} was adopted and its files may keep partition values only in their "
                "paths; its partitioning cannot change (write a new table instead)"
            )
        if fields == self.partition_fields:
            current = f"partitioned by {', '.join(fields)}" if fields else "unpartitioned"
            raise InvalidInputError(f"table {self.name} is already {current}; nothing to change")
        earlier = EarlierPartitioning(self.partition_fields, until)
        return replace(self, partition_fields=fields, partition_history=(*self.partition_history, earlier))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format_version": self.format_version,
            "name": self.name,
            "schema": self.schema.to_json(),
            "record_key": list(self.record_key),
            "partition_fields": list(self.partition_fields),
            "ordering_field": self.ordering_field,
            "properties": self.properties.to_json(),
        }
        if self.partition_history:
            data["partition_history"] = [e.to_json() for e in self.partition_history]
        if not self.path_columns_in_files:
            data["path_columns_in_files"] = False
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TableConfig:
        version = data.get("format_version")
        if version not in (FORMAT_VERSION, EVOLVED_FORMAT_VERSION, ADOPTED_FORMAT_VERSION):
            raise InvalidSchemaError(f"unsupported format_version {version!r}")
        in_files = data.get("path_columns_in_files", True)
        if in_files is not True and in_files is not False:
            raise InvalidSchemaError(f"path_columns_in_files must be true or false, got {in_files!r}")
        if (not in_files) != (version == ADOPTED_FORMAT_VERSION):
            raise InvalidSchemaError(
                f"format_version {version} does not match path_columns_in_files {str(in_files).lower()}"
            )
        history = tuple(EarlierPartitioning.from_json(e) for e in data.get("partition_history") or ())
        if version != ADOPTED_FORMAT_VERSION and bool(history) != (version == EVOLVED_FORMAT_VERSION):
            raise InvalidSchemaError(
                f"format_version {version} does not match the partition history ({len(history)} entries)"
            )
        return cls(
            name=str(data["name"]),
            schema=TableSchema.from_json(data["schema"]),
            record_key=tuple(str(k) for k in data["record_key"]),
            partition_fields=tuple(str(p) for p in data.get("partition_fields") or ()),
            ordering_field=data.get("ordering_field"),
            properties=TableProperties.from_json(data.get("properties") or {}),
            partition_history=history,
            path_columns_in_files=in_files,
        )


def _check_fields(schema: TableSchema, names: tuple[str, ...], role: Role) -> None:
    for name in names:
        if not schema.has(name):
            raise InvalidSchemaError(
                f"{role.value} column {name!r} is not in the schema (columns: {', '.join(schema.names)})"
            )
        column_type = schema.column(name).type
        if not column_type.kind.allows(role):
            allowed = ", ".join(sorted(role.kinds()))
            raise InvalidSchemaError(
                f"{role.value} column {name!r} has type {column_type}, which cannot be "
                f"used as a {role.value} column (allowed: {allowed})"
            )


def _check_partitioning(schema: TableSchema, fields: tuple[str, ...]) -> None:
    _check_fields(schema, fields, Role.PARTITION)
    if len(set(fields)) != len(fields):
        raise InvalidSchemaError("partition columns must be distinct")


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
    """Replace `table.json` atomically (a change of an existing table's definition)."""
    storage.publish(TABLE_JSON, _encode(config))


def create_config(storage: Storage, config: TableConfig) -> bool:
    """Write a new table's `table.json` only if absent; False when another creator was first."""
    return storage.put_if_absent(TABLE_JSON, _encode(config))


def _encode(config: TableConfig) -> bytes:
    return json.dumps(config.to_json(), indent=2).encode()
