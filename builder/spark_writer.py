"""Spark's DataFrame writer for lakeprune tables, the Python half of
`df.write.format("lakeprune").mode(...).option("operation", ...).save(path)`: the JVM half
(`connector/spark`, `LakepruneSource` as a `CreatableRelationProvider`) hands the DataFrame, the
save mode and the options to `write_dataframe` through the same Py4J callback as the reads, so a
DataFrame write runs the very write path of `LakepruneTable` (record-index tagging, every index
maintained, one instant). The table is named as reads name it (`save(PATH)`, or
`option("warehouse", W).save(NAME)`); a table that does not exist is created from the DataFrame's
schema with the options `recordKey` (or Hudi's `primaryKey`), `partitionBy` (or the writer's own
`.partitionBy(...)`), `orderingField` (or `precombineField`). Save modes: `append` (create if
missing, then the operation: `insert`, the default, `upsert` or `delete`), `overwrite` (create if
missing, then replace every record with the DataFrame's in one instant; the table's schema, keys,
partitioning and indexes stay), `errorifexists` (the writer's default: only a new table), `ignore`
(nothing if the table exists). Spark SQL's INSERT, DELETE FROM, UPDATE and MERGE INTO of a
lakeprune catalog table arrive here too, planned by the JVM source's `LakepruneWrites` as writes
of the rows they compute (options `INSERTED_COLUMNS`, `STATEMENT`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from pyspark.sql import DataFrame

from builder.create import create_table
from builder.write.writer import WriteMode, WriteResult, write
from pruner.errors import InvalidInputError
from pruner.format.layout import TABLE_JSON
from pruner.storage import Storage
from pruner.table.table import table_location

SAVE_MODES = ("append", "errorifexists", "ignore", "overwrite")
OPERATIONS = ("insert", "upsert", "delete")  # of mode("append"); mode("overwrite") is its own
# Set by the JVM source's `LakepruneWrites` for Spark SQL's writes: on INSERT INTO / OVERWRITE, the
# table's names of the inserted columns, in order, separated by NUL; on DELETE FROM, UPDATE and
# MERGE INTO, the statement, whose rows (`RowLevelPlans`) are written as the write mode it maps to
INSERTED_COLUMNS = "__lakeprune_columns"
STATEMENT = "__lakeprune_statement"
_STATEMENT_MODES = {"delete": WriteMode.DELETE, "update": WriteMode.UPSERT, "merge": WriteMode.MERGE}
# Hudi's spellings of the same options
_SYNONYMS = {"primarykey": "recordkey", "precombinefield": "orderingfield"}


@dataclass(frozen=True)
class WriteOptions:
    """What a DataFrame write asks for, read from the writer's options (keys in any case)."""

    location: str
    operation: WriteMode
    record_key: tuple[str, ...]
    partition_by: tuple[str, ...]
    ordering_field: str | None
    sort_by: tuple[str, ...]

    @classmethod
    def read(cls, options: Mapping[str, str]) -> WriteOptions:
        given = {_SYNONYMS.get(k.lower(), k.lower()): v for k, v in options.items()}
        name = given.get("path") or given.get("table")
        if not name:
            raise InvalidInputError('no table: use save(PATH) or .option("warehouse", W).save(NAME)')
        operation = given.get("operation", "insert").strip().lower()
        if operation not in OPERATIONS:
            raise InvalidInputError(f"option operation must be insert, upsert or delete, got {operation!r}")
        return cls(
            table_location(name, given.get("warehouse") or None),
            WriteMode(operation),
            _names(given.get("recordkey", "")),
            _partition_columns(given),
            given.get("orderingfield") or None,
            _names(given.get("sortby", "")),
        )


def write_dataframe(df: DataFrame, mode: str, options: Mapping[str, str]) -> WriteResult | None:
    """Write `df` as the save mode `mode` and `options` say (module docstring); the write's result,
    None when nothing was written (`ignore` of an existing table). InvalidInputError, one line, for
    a user's mistake."""
    mode = mode.strip().lower()
    if mode not in SAVE_MODES:
        raise InvalidInputError(f"save mode must be one of {', '.join(SAVE_MODES)}, got {mode!r}")
    wanted = WriteOptions.read(options)
    inserted_as = options.get(INSERTED_COLUMNS)
    if inserted_as:  # Spark SQL's INSERT: the query's columns are the table's, in order
        df = df.toDF(*inserted_as.split("\x00"))
    exists = Storage.from_uri(wanted.location).exists(TABLE_JSON)
    operation = _STATEMENT_MODES.get(options.get(STATEMENT, ""), wanted.operation)
    if mode == "overwrite":
        if operation is not WriteMode.INSERT:
            raise InvalidInputError(
                f"option operation {operation.value!r} is for mode('append'): mode('overwrite') "
                "replaces every record of the table"
            )
        operation = WriteMode.OVERWRITE
    if exists and mode == "errorifexists":
        raise InvalidInputError(
            f"a lakeprune table already exists at {wanted.location}: use mode('append') to write to it"
        )
    if exists and mode == "ignore":
        return None
    if not exists:
        _create(df, wanted)
    return write(df.sparkSession, wanted.location, df, operation, wanted.sort_by)


def _create(df: DataFrame, wanted: WriteOptions) -> None:
    if not wanted.record_key:
        raise InvalidInputError(
            f"no lakeprune table at {wanted.location}: to create one, give its record key "
            "with .option('recordKey', 'id') (in Spark SQL: TBLPROPERTIES ('primaryKey' = 'id'))"
        )
    if wanted.operation is not WriteMode.INSERT:
        raise InvalidInputError(
            f"no lakeprune table at {wanted.location} to {wanted.operation.value}: insert creates one"
        )
    schema = ", ".join(f"`{field.name}` {field.dataType.simpleString()}" for field in df.schema.fields)
    create_table(
        wanted.location, schema, list(wanted.record_key), list(wanted.partition_by), wanted.ordering_field
    )


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


def _partition_columns(given: Mapping[str, str]) -> tuple[str, ...]:
    """`option("partitionBy", "a,b")`, or the writer's `.partitionBy("a", "b")` (a JSON list Spark
    passes as `__partition_columns`)."""
    listed = given.get("__partition_columns")
    if listed:
        try:
            columns = json.loads(listed)
        except json.JSONDecodeError:
            raise InvalidInputError(f"cannot read the writer's partition columns {listed!r}") from None
        return tuple(str(c) for c in columns)
    return _names(given.get("partitionby", ""))
