"""lakeprune write side: PySpark jobs that write tables (insert / upsert / delete) and keep their
index partitions current in the same instant, plus the maintenance actions (rollback, compaction,
clean). `builder.LakepruneTable` is the Python API for notebooks and `spark-submit` scripts."""

from builder.api import LakepruneTable, WriteResult

__all__ = ["LakepruneTable", "WriteResult"]
