"""A table's first insert (as Hudi's bulk insert: no index lookup).

The general write path sends every row through Python twice: annotated with its encoded key,
partition path and bucket (to resolve repeated keys and look keys up), then rewritten into its file
group by pyarrow. An insert into a table that holds no record yet needs neither the resolution nor
the lookup: no key can exist already, no file group is rewritten. Such an insert is planned here in
the JVM instead:

1. repeated keys: counted over the key columns alone; a batch with any goes the general way, which
   resolves them (partition columns are of types whose equal values Spark and the format agree on:
   integers, booleans, dates, strings);
2. partition paths: the distinct partition values are counted by Spark and their paths computed on
   the driver by the format's own function (`partition_paths`), then joined back (a broadcast join);
3. file groups: the same bins and the same ranking by (sort values, key) as the general path.

Then the files are written in one of two ways, to the same table:

- on a file system (a local disk, or one every executor mounts; `spark_writes`), by Spark's own
  Parquet writer, every row staying in the JVM until it is on disk: sorted by key within their file
  group, written `partitionBy` the file group (so that each group is one file) under the instant's
  staging directory; the executors then move each file to its partition under lakeprune's name,
  read back the columns the indexes need and compute its index rows (`tasks.FileIndexRows`, as
  the rewrite tasks do), shipped to the commit as the rewrite's are. The staging directory is
  removed before the commit is published, and by the rollback of an instant that failed
  (`builder.instants.rollback`). At 20M rows this took 93 s where the rewrite tasks took 118 s
  (`bench/notes/driver_bottleneck.md`);
- on object stores, where Spark's commit protocol would copy every file twice more (there is no
  rename), by the general path's rewrite tasks, which encode the keys the plan left out."""

from __future__ import annotations

import functools
import logging
import operator
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from builder.instants import delete_staged
from builder.intermediates import persist_chunks
from builder.task_batches import BatchFunction, over_tasks, string_columns
from builder.write.tasks import (
    FILE_GROUP,
    KEY,
    PARTITION,
    RECORD_OP,
    WRITTEN_STRUCT,
    FileIndexRows,
    record_index_rows,
    written_batches,
)
from pruner.format.config import TableConfig
from pruner.format.keys import encode_record_keys, partition_paths
from pruner.format.layout import DataFileName, data_file_path, staging_dir
from pruner.index.definitions import IndexDefinition
from pruner.metadata.spec import OP_UPSERT, IndexPartitionSpec
from pruner.storage import Storage
from pruner.table.data_files import read_data_file
from pruner.table.table import LakeTable, Snapshot

log = logging.getLogger(__name__)
_COUNT = "_lp_count"


def applies(snapshot: Snapshot, live_files: int) -> bool:
    """Whether an insert into the table at `snapshot` (with `live_files` live files, as the write
    has already read them) may skip resolving and looking up keys: the table holds no record (no
    live file, no record index)."""
    return not live_files and not snapshot.record_index().buckets


def spark_writes(storage: Storage) -> bool:
    """Whether Spark's Parquet writer writes the files (a file system), not the rewrite tasks."""
    return storage.is_local


def with_partition_paths(
    spark: SparkSession, conformed: DataFrame, config: TableConfig, rows: int
) -> tuple[DataFrame, dict[str, int]]:
    """The rows (`rows` of them, as validation counted) with their partition path, and the number
    of rows per path."""
    fields = config.partition_fields
    if not fields:
        return conformed.withColumn(PARTITION, F.lit("")), {"": rows}
    values = conformed.groupBy(*fields).agg(F.count(F.lit(1)).alias(_COUNT)).toArrow()
    paths = values.append_column(PARTITION, partition_paths(values, fields))
    counts: dict[str, int] = {}
    for path, count in zip(paths[PARTITION].to_pylist(), paths[_COUNT].to_pylist(), strict=True):
        counts[path] = counts.get(path, 0) + count
    lookup = spark.createDataFrame(paths.drop_columns([_COUNT])).select(
        *(F.col(name).alias(f"_lp_p{i}") for i, name in enumerate(fields)), PARTITION
    )
    matches = functools.reduce(
        operator.and_, (conformed[name].eqNullSafe(lookup[f"_lp_p{i}"]) for i, name in enumerate(fields))
    )
    joined = conformed.join(F.broadcast(lookup), matches, "inner")
    return joined.select(*conformed.columns, PARTITION), counts


def has_repeated_keys(conformed: DataFrame, key_fields: tuple[str, ...]) -> bool:
    """Whether two rows have the same record key (compared as Spark compares the key columns)."""
    repeated = conformed.groupBy(*key_fields).agg(F.count(F.lit(1)).alias(_COUNT)).where(F.col(_COUNT) > 1)
    return not repeated.isEmpty()


@dataclass(frozen=True)
class StagedFile:
    """A file Spark wrote for one file group, and the name it is moved to."""

    staged: str
    partition: str
    file_group: str
    file_name: str


def stage(
    assigned: DataFrame, storage: Storage, config: TableConfig, instant: str, partitions: dict[str, str]
) -> list[StagedFile]:
    """Write the rows (table columns and `FILE_GROUP`) with Spark, one file per file group, sorted by
    key, under the instant's staging directory; `partitions`: each file group's partition path."""
    directory = staging_dir(instant)
    spark = assigned.sparkSession
    # A task per file group up to 8 per core: each task sorts less (at 20M rows into 16 groups on 2
    # cores, 16 tasks wrote in 39-41 s where 4 took 45-46 s, their sorts spilling to disk).
    parallelism = max(1, min(len(partitions), spark.sparkContext.defaultParallelism * 8))
    (
        assigned.select(*config.schema.names, FILE_GROUP)
        .repartition(parallelism, FILE_GROUP)
        .sortWithinPartitions(FILE_GROUP, *config.record_key)
        .write.partitionBy(FILE_GROUP)
        .option("compression", "zstd")
        .option("parquet.block.size", str(config.properties.write_row_group_bytes))
        .option("maxRecordsPerFile", "0")
        .mode("errorifexists")
        .parquet(f"file://{storage.path(directory)}")
    )
    files = [  # not Spark's _SUCCESS marker and checksum files
        entry.rel
        for entry in storage.list_files(directory, recursive=True)
        if entry.rel.endswith(".parquet") and not entry.rel.rpartition("/")[2].startswith((".", "_"))
    ]
    staged = []
    for number, rel in enumerate(files):
        folder = rel.split("/")[-2]
        file_group = folder.removeprefix(f"{FILE_GROUP}=")
        final = DataFileName(file_group, f"{number}-{uuid.uuid4().hex[:8]}", instant)
        staged.append(StagedFile(rel, partitions[file_group], file_group, str(final)))
    return staged


def index_staged_files(
    storage: Storage,
    config: TableConfig,
    definitions: list[IndexDefinition],
    record_index: IndexPartitionSpec,
) -> BatchFunction:
    """Per staged file: move it to its partition under its name (a retried task finds it moved),
    read it back and return its `tasks.WRITTEN_SCHEMA` rows: the file, then its index chunks (every
    key's record index upsert, every secondary index pair, the per-file indexes' rows)."""
    indexer = FileIndexRows(config, tuple(definitions), record_index)

    def index(item: dict[str, str]) -> list[dict[str, object]]:
        partition, file_group = item["partition"], item["file_group"]
        name = DataFileName.parse(item["file_name"])
        assert name is not None  # made by `stage`
        rel = data_file_path(partition, name)
        if storage.exists(item["staged"]):
            storage.move(item["staged"], rel)
        rows = read_data_file(storage, rel, config.schema, indexer.columns)  # not the unindexed ones
        n = rows.num_rows
        keys = pa.table(
            {
                KEY: encode_record_keys(rows, config.record_key),
                PARTITION: pa.repeat(partition, n),
                FILE_GROUP: pa.repeat(file_group, n),
                RECORD_OP: pa.repeat(pa.scalar(OP_UPSERT, pa.int8()), n),
            }
        )
        log_rows = {
            record_index.name: record_index_rows(keys),
            **indexer.pair_changes(None, rows),
            **indexer.per_file(rows, partition, str(name)),
        }
        result = {
            "partition": partition,
            "file_name": str(name),
            "file_group": file_group,
            "size": int(storage.fs.get_file_info(storage.path(rel)).size),
            "rows": n,
        }
        return [result, *indexer.chunks(log_rows, file_group)]

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for item in batch.to_pylist():
                yield from written_batches(index(item))

    return run


def write_files(
    assigned: DataFrame,
    table: LakeTable,
    instant: str,
    partitions: dict[str, str],
) -> DataFrame:
    """Stage the rows with Spark, then move and index the files in Spark tasks: the written files'
    rows and index chunks (`tasks.WRITTEN_STRUCT`), persisted and computed, so that the staging
    directory can go before the commit is published."""
    storage, config = table.storage, table.config
    start = time.perf_counter()
    staged = stage(assigned, storage, config, instant, partitions)
    log.info(
        "Spark wrote %d file(s) in %.1f s; moving and indexing them", len(staged), time.perf_counter() - start
    )
    spark = assigned.sparkSession
    listing = string_columns(staged, ("staged", "partition", "file_group", "file_name"))
    parallelism = spark.sparkContext.defaultParallelism * 2
    task = index_staged_files(storage, config, list(table.definitions), table.record_index_spec)
    written = persist_chunks(over_tasks(spark, listing, parallelism, task, WRITTEN_STRUCT))
    written.count()
    delete_staged(storage, instant)
    return written
