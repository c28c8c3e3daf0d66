"""lakeprune write side: PySpark jobs that write tables (insert / upsert / delete) and keep their
index partitions current in the same instant, plus the maintenance actions (rollback, compaction,
clean). `builder.LakepruneTable` is the Python API for notebooks and `spark-submit` scripts;
`builder.register(spark)` lets any SparkSession read `spark.read.format("lakeprune")`.

The API is imported lazily so that the maintenance modules (`builder.compaction`,
`builder.cleaner`, `builder.lock`) load without PySpark."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from builder.api import LakepruneTable, WriteResult
    from builder.spark_source import register

__all__ = ["LakepruneTable", "WriteResult", "register"]


def __getattr__(name: str) -> Any:
    if name == "register":
        from builder import spark_source

        return spark_source.register
    if name in __all__:
        from builder import api

        return getattr(api, name)
    raise AttributeError(f"module 'builder' has no attribute {name!r}")
