"""Creating a table: validate the definition, refuse to overwrite anything, create `table.json`
only if absent (of two creators at once, one gets `TableExistsError`). No Spark needed; the first
write creates the first snapshot.

A table's name follows the naming rule of `pruner.identifiers`. A name given explicitly must; without
one, the name is derived from the directory's name (its last path component), which may hold
characters the rule refuses (`trips-2024`): it is lowercased, every run of other characters
becomes `_`, a name that would start with a digit or the reserved prefix gets `t_` in front, and
the result is cut to the maximum length (`trips-2024` -> `trips_2024`). Names in `table.json`
written before the rule existed are not re-checked when a table is opened: the name is only a
label (statements and messages), never part of a path."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

import pyarrow as pa

from pruner.errors import InvalidInputError, TableExistsError
from pruner.format.config import TableConfig, TableProperties, create_config
from pruner.format.layout import TABLE_JSON
from pruner.identifiers import MAX_IDENTIFIER_LENGTH, RESERVED_PREFIX, check_identifier
from pruner.storage import Storage, cannot_exist
from pruner.types import TableSchema

# A TableSchema, a DDL string ("id bigint, name string"), a pyarrow Schema or a Spark StructType.
SchemaLike: TypeAlias = TableSchema | str | Any


def to_table_schema(schema: SchemaLike) -> TableSchema:
    """A TableSchema from a DDL string, an Arrow schema or a Spark StructType."""
    if isinstance(schema, TableSchema):
        return schema
    if isinstance(schema, str):
        return TableSchema.parse(schema)
    if isinstance(schema, pa.Schema):
        return TableSchema.from_arrow(schema)
    if hasattr(schema, "fields") and hasattr(schema, "simpleString"):
        return TableSchema.parse(
            ", ".join(
                f"{f.name} {f.dataType.simpleString().replace('timestamp_ntz', 'timestamp')}"
                + ("" if f.nullable else " not null")
                for f in schema.fields
            )
        )
    raise TypeError(f"cannot make a table schema from {type(schema).__name__}")


def default_name(directory: str) -> str:
    """A valid table name for a table in `directory` (its last path component): see the module."""
    name = re.sub(r"[^a-z0-9_]+", "_", directory.lower())
    if not name:
        return "table"
    if name[0].isdigit() or name.startswith(RESERVED_PREFIX):
        name = f"t_{name}"
    name = name[:MAX_IDENTIFIER_LENGTH]
    check_identifier(name, "table")
    return name


def new_config(
    storage: Storage,
    schema: SchemaLike,
    record_key: str | Sequence[str],
    partition_by: Sequence[str] = (),
    ordering_field: str | None = None,
    properties: Mapping[str, Any] | None = None,
    name: str | None = None,
    path_columns_in_files: bool = True,
) -> TableConfig:
    """A validated definition of a new table at `storage` (see the module for the default name)."""
    if name is not None:
        check_identifier(name, "table")
    keys = (record_key,) if isinstance(record_key, str) else tuple(record_key)
    return TableConfig(
        name=name if name is not None else default_name(os.path.basename(storage.root.rstrip("/"))),
        schema=to_table_schema(schema),
        record_key=tuple(k.strip() for k in keys),
        partition_fields=tuple(p.strip() for p in partition_by),
        ordering_field=ordering_field,
        properties=TableProperties().with_overrides(dict(properties or {})),
        path_columns_in_files=path_columns_in_files,
    )


def create_table(
    location: str,
    schema: SchemaLike,
    record_key: str | Sequence[str],
    partition_by: Sequence[str] = (),
    ordering_field: str | None = None,
    properties: Mapping[str, Any] | None = None,
    name: str | None = None,
) -> TableConfig:
    storage = Storage.from_uri(location)
    if storage.exists(TABLE_JSON):
        raise TableExistsError(f"a lakeprune table already exists at {storage.uri}")
    if storage.exists("") and not storage.is_dir(""):
        raise TableExistsError(f"{storage.uri} is a file, not a directory")
    if storage.list_files("", recursive=True):
        raise TableExistsError(f"{storage.uri} is not empty; tables are created in a new or empty directory")
    config = new_config(storage, schema, record_key, partition_by, ordering_field, properties, name)
    try:
        created = create_config(storage, config)
    except OSError as exc:
        if not cannot_exist(exc):
            raise
        raise InvalidInputError(f"cannot create a table at {storage.uri}: {exc.strerror or exc}") from None
    if not created:  # another creator got there between the checks above and now
        raise TableExistsError(f"a lakeprune table already exists at {storage.uri}")
    return config
