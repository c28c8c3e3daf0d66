"""Input validation for writes: the DataFrame must carry the table's columns (names matched
case-insensitively) with types that widen into the column types; record key columns and NOT NULL
columns must hold no nulls. Deletes need only the key columns. Violations raise
`SchemaMismatchError` / `InvalidInputError` before anything is written."""

from __future__ import annotations

from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pruner.errors import InvalidInputError, InvalidSchemaError, SchemaMismatchError
from pruner.format.config import TableConfig
from pruner.types import can_write, from_spark


def conform(df: DataFrame, config: TableConfig, key_only: bool, flag: str | None = None) -> DataFrame:
    """The input with the table's column names and types, in table order (or just the key), and
    the boolean column `flag` when one is given (a merge's), last."""
    by_lower = {}
    for field in df.schema.fields:
        if field.name == flag:
            continue
        if field.name.lower() in by_lower:
            raise SchemaMismatchError(f"input has column {field.name!r} twice (names are case-insensitive)")
        by_lower[field.name.lower()] = field
    wanted = [config.schema.column(k) for k in config.record_key] if key_only else list(config.schema.columns)
    missing = [c.name for c in wanted if c.name not in by_lower]
    if missing:
        what = "record key column" if key_only else "column"
        raise SchemaMismatchError(
            f"input is missing {what}(s) {', '.join(missing)}; input columns: "
            f"{', '.join(f.name for f in df.schema.fields) or '(none)'}"
        )
    if not key_only:
        extra = sorted(set(by_lower) - {c.name for c in wanted})
        if extra:
            raise SchemaMismatchError(
                f"input has column(s) {', '.join(extra)} that the table does not have "
                f"(table columns: {', '.join(config.schema.names)})"
            )
    selected: list[SparkColumn] = []
    for column in wanted:
        field = by_lower[column.name]
        try:
            source = from_spark(field.dataType.simpleString())
        except InvalidSchemaError:
            raise SchemaMismatchError(
                f"input column {field.name!r} has unsupported type {field.dataType.simpleString()}"
            ) from None
        if not can_write(source, column.type):
            raise SchemaMismatchError(
                f"input column {field.name!r} has type {source}, which cannot be written to "
                f"column {column.name!r} of type {column.type}"
            )
        selected.append(F.col(f"`{field.name}`").cast(column.type.to_spark_ddl()).alias(column.name))
    if flag is not None:
        if flag not in df.columns:
            raise SchemaMismatchError(f"input is missing column {flag!r}")
        selected.append(F.col(flag).cast("boolean").alias(flag))
    return df.select(*selected)


def count_and_check_nulls(df: DataFrame, config: TableConfig, key_only: bool) -> int:
    """Row count of the (conformed) input; raises if a key or NOT NULL column holds a null."""
    required = list(config.record_key)
    if not key_only:
        required += [c.name for c in config.schema.columns if not c.nullable and c.name not in required]
    aggregates = [F.count(F.lit(1)).alias("_lp_rows")]
    aggregates += [F.sum(F.when(F.col(name).isNull(), 1).otherwise(0)).alias(name) for name in required]
    row = df.agg(*aggregates).first()
    assert row is not None
    for name in required:
        nulls = row[name] or 0
        if nulls:
            role = "record key column" if name in config.record_key else "NOT NULL column"
            raise InvalidInputError(f"{role} {name!r} is null in {nulls} input row(s)")
    return int(row["_lp_rows"])
