"""The Python API for notebooks and `spark-submit` scripts:

```python
from builder import LakepruneTable
trips = LakepruneTable.create("s3://lake/trips", "id bigint, city string, ts timestamp",
                              record_key="id", partition_by=["city"], ordering_field="ts")
trips.upsert(df)            # df: a Spark DataFrame
trips.read().show()         # the latest snapshot as a DataFrame
trips.read(snapshot="20261121120000000")
trips.alter_partitioning(["region"])  # partition evolution: future writes only
events = LakepruneTable.adopt("s3://lake/events", record_key="id", partition_by=["day"])  # in place
```
Every method opens the table afresh, so a handle never acts on a stale timeline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from builder import cleaner, compaction
from builder.adopt import adopt_table
from builder.create import SchemaLike, create_table
from builder.index_build import StatementResult, build_index, execute
from builder.object_stores import require_hadoop_file_system
from builder.partitioning import PartitioningChange, alter_partitioning
from builder.session import job_session, spark_session
from builder.spark_source import register
from builder.write.writer import WriteMode, WriteResult, write
from pruner.planner.prune import Predicate, prune
from pruner.planner.result import PruneResult
from pruner.table.describe import history as describe_history
from pruner.table.table import LakeTable, Snapshot, table_location

__all__ = ["LakepruneTable", "WriteResult"]


class LakepruneTable:
    """A handle on a lakeprune table at a path or URI."""

    def __init__(self, location: str, spark: SparkSession | None = None) -> None:
        self.location = LakeTable.open(location).storage.uri  # validates that the table exists
        self._spark = spark

    @classmethod
    def create(
        cls,
        location: str,
        schema: SchemaLike,
        record_key: str | Sequence[str],
        partition_by: Sequence[str] = (),
        ordering_field: str | None = None,
        properties: Mapping[str, Any] | None = None,
        name: str | None = None,
        spark: SparkSession | None = None,
    ) -> LakepruneTable:
        create_table(location, schema, record_key, partition_by, ordering_field, properties, name)
        return cls(location, spark)

    @classmethod
    def adopt(
        cls,
        location: str,
        record_key: str | Sequence[str],
        partition_by: Sequence[str] = (),
        ordering_field: str | None = None,
        properties: Mapping[str, Any] | None = None,
        name: str | None = None,
        spark: SparkSession | None = None,
        indexes: Sequence[str] = (),
    ) -> LakepruneTable:
        """Make an existing directory of Parquet files (flat or Hive-style `col=value/`) a table
        in place, without copying data (`builder.adopt`), and build the `CREATE INDEX` statements
        of `indexes` over it."""
        session = spark if spark is not None else spark_session()
        adopt_table(session, location, record_key, partition_by, ordering_field, properties, name, indexes)
        return cls(location, session)

    @classmethod
    def in_warehouse(cls, warehouse: str, name: str, spark: SparkSession | None = None) -> LakepruneTable:
        return cls(table_location(name, warehouse), spark)

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            self._spark = spark_session()
        return self._spark

    def table(self) -> LakeTable:
        return LakeTable.open(self.location)

    def snapshot(self, instant: str | None = None) -> Snapshot:
        return self.table().snapshot(instant)

    def alter_partitioning(self, partition_by: Sequence[str]) -> PartitioningChange:
        """Partition future writes by `partition_by` (empty: unpartitioned); existing file groups
        keep their partition paths (partition evolution, RFC-63 use case 2)."""
        return alter_partitioning(self.location, partition_by)

    # Writes ------------------------------------------------------------------------------------
    def write(self, df: DataFrame, mode: WriteMode | str, sort_by: Sequence[str] = ()) -> WriteResult:
        return write(self.spark, self.location, df, mode, sort_by)

    def insert(self, df: DataFrame, sort_by: Sequence[str] = ()) -> WriteResult:
        return self.write(df, WriteMode.INSERT, sort_by)

    def upsert(self, df: DataFrame, sort_by: Sequence[str] = ()) -> WriteResult:
        return self.write(df, WriteMode.UPSERT, sort_by)

    def delete(self, df: DataFrame) -> WriteResult:
        """Delete the records whose keys appear in `df` (only the key columns are used)."""
        return self.write(df, WriteMode.DELETE)

    def overwrite(self, df: DataFrame, sort_by: Sequence[str] = ()) -> WriteResult:
        """Replace every record of the table with `df`'s, in one instant (an empty `df` empties it)."""
        return self.write(df, WriteMode.OVERWRITE, sort_by)

    # Reads -------------------------------------------------------------------------------------
    def read(self, snapshot: str | None = None, where: str | None = None) -> DataFrame:
        """A snapshot's rows as a Spark DataFrame (time travel with `snapshot=instant`), read with
        `spark.read.format("lakeprune")`: with `where` (Spark SQL), only the files the indexes
        cannot rule out are read."""
        self.snapshot(snapshot)  # a bad snapshot is a one-line error here, before Spark
        spark = job_session(self.spark)
        register(spark)
        require_hadoop_file_system(spark, self.location)
        reader = spark.read.format("lakeprune")
        if snapshot is not None:
            reader = reader.option("snapshot", snapshot)
        df = reader.load(self.location)
        return df.where(where) if where is not None else df

    def to_arrow(
        self, snapshot: str | None = None, columns: list[str] | None = None, limit: int | None = None
    ) -> pa.Table:
        """A snapshot's rows as an Arrow table, read with pyarrow (no Spark)."""
        return self.snapshot(snapshot).read(columns, limit)

    def history(self) -> list[dict[str, Any]]:
        """Completed instants, oldest first, with what each did."""
        return describe_history(self.table())

    # Indexes and pruning -----------------------------------------------------------------------
    def sql(self, statement: str, build: bool = True) -> StatementResult:
        """CREATE INDEX / DROP INDEX / SHOW INDEXES on this table (a created index is built now
        for existing data unless `build=False`)."""
        return execute(self.location, statement, self._spark, build)

    def build_index(self, name: str) -> str | None:
        return build_index(self.location, name, self._spark)

    def prune(self, where: Predicate, snapshot: str | None = None) -> PruneResult:
        """The files of a snapshot that may hold rows matching a SQL predicate (or a TupleDomain)."""
        return prune(self.table(), where, snapshot=snapshot)

    # Maintenance -------------------------------------------------------------------------------
    def compact(self, force: bool = True) -> compaction.CompactionReport:
        return compaction.compact(self.location, force, self._spark)

    def clean(self) -> cleaner.CleanReport:
        return cleaner.clean(self.location)
