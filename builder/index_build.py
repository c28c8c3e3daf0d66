"""Executing index statements and building indexes for existing data.

`CREATE INDEX` records the definition in state `building`; from then on every write maintains it
for the files it writes. `build` then covers the files that existed before: it computes their index
rows in Spark *without* holding the table lock (writers carry on), and in a short final step under
the lock keeps only the rows of files that are still live, writes them as a commit of its own
(operation `index_build`), and marks the index `ready` up to that instant. Partition stats are
aggregated from `column_stats`, which must be ready first. A secondary index's build scans every
live file for its `(value, record key)` pairs; writes during the build upsert every pair of the
files they write (not only changed ones), so dropping the pairs of replaced files loses nothing.
`analyze` rebuilds, the same way, the column stats rows of files indexed before those rows carried
what optimizers need (distinct-value sketches, data sizes, exact decimal bounds).
`DROP INDEX` removes the definition and the partition's files."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from builder.index_logs import CHUNK_STRUCT, ROWS, LogTarget, chunk_batch, chunks, write_by_bucket
from builder.indexing import partition_stats_changes
from builder.instants import rollback_pending, run_instant
from builder.intermediates import persist_chunks
from builder.lock import table_lock
from builder.task_batches import BatchFunction, over_tasks, string_columns
from pruner.errors import InvalidInputError
from pruner.format.config import TableConfig
from pruner.format.layout import metadata_partition_dir
from pruner.format.timeline import Action
from pruner.identifiers import abbreviate
from pruner.index.defining import define
from pruner.index.definitions import (
    IndexDefinition,
    IndexState,
    IndexType,
    save_definitions,
)
from pruner.index.kinds import Leftover, kind_of, partition_of, required_by
from pruner.index.sql import (
    CreateIndex,
    DropIndex,
    RefreshIndex,
    ShowIndexes,
    Statement,
    parse_statement,
)
from pruner.metadata.files_index import DataFile
from pruner.metadata.index_partition import write_logs
from pruner.metadata.merge import with_op
from pruner.metadata.spec import OP_UPSERT, IndexPartitionSpec
from pruner.storage import Storage
from pruner.table.data_files import read_data_file
from pruner.table.describe import index_summaries
from pruner.table.table import LakeTable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StatementResult:
    message: str
    rows: list[dict[str, Any]]


def execute(
    location: str,
    sql: str,
    spark: SparkSession | None = None,
    build: bool = True,
    dialect: str | None = None,
    named_by_caller: bool = False,
) -> StatementResult:
    """Run one index statement against the table at `location`. The table the statement names must
    be that table (its name or its directory's) unless `named_by_caller`: a caller that resolved
    the name itself (Spark's catalog) says so. `dialect`: how the statement quotes identifiers."""
    statement = parse_statement(sql, dialect)
    table = LakeTable.open(location)
    if not named_by_caller:
        _check_table_name(table, statement)
    if isinstance(statement, ShowIndexes):
        return StatementResult(f"{len(table.definitions)} index(es) defined", index_summaries(table))
    if isinstance(statement, DropIndex):
        return drop_index(table, statement)
    if isinstance(statement, RefreshIndex):
        instant = build_index(location, statement.name, spark)
        shown = abbreviate(statement.name)
        if instant is None:
            return StatementResult(f"index {shown} is ready (it already was)", [])
        return StatementResult(f"index {shown} is ready up to {instant}", [])
    return create_index(table, statement, spark, build)


def _check_table_name(table: LakeTable, statement: Statement) -> None:
    named = statement.table
    basename = table.storage.root.rstrip("/").rpartition("/")[2]
    if named is not None and named not in (table.config.name, basename):
        raise InvalidInputError(
            f"the statement names table {named!r} but the table at {table.storage.uri} is "
            f"{table.config.name!r}"
        )


def drop_index(table: LakeTable, statement: DropIndex) -> StatementResult:
    with table_lock(table.storage, "drop index"):
        table = table.refresh()
        if not any(d.name == statement.name for d in table.definitions):
            if statement.if_exists:
                return StatementResult(f"no index {abbreviate(statement.name)}; nothing dropped", [])
            table.definition(statement.name)  # raises with the list of indexes
        definition = table.definition(statement.name)
        save_definitions(table.storage, [d for d in table.definitions if d.name != statement.name])
        # Not `table.spec`: it refuses a definition whose name cannot be used, which must still be
        # droppable (its directory cannot exist, so it lists as empty).
        directory = metadata_partition_dir(partition_of(definition))
        deleted = table.storage.delete_many(e.rel for e in table.storage.list_files(directory))
    return StatementResult(
        f"dropped index {abbreviate(statement.name)} ({deleted} index file(s) deleted)", []
    )


def create_index(
    table: LakeTable, statement: CreateIndex, spark: SparkSession | None, build: bool
) -> StatementResult:
    with table_lock(table.storage, "create index"):
        rollback_pending(table.storage)
        table = table.refresh()
        if statement.if_not_exists and any(d.name == statement.name for d in table.definitions):
            return StatementResult(f"index {statement.name} already exists", [])
        definition = define(
            table.config,
            list(table.definitions),
            statement.name,
            statement.index_type,
            list(statement.columns),
            statement.options,
            statement.expression,
        )
        _require_covering(table, definition)
        definition = replace(definition, created_after=table.timeline.last_timestamp())
        snapshot = table.snapshot()
        if snapshot.instant is None:  # nothing written yet: every later write maintains it
            definition = replace(definition, state=IndexState.READY, complete_up_to=None)
        else:  # the build reads them: a damaged files index stops it before the definition is saved
            snapshot.files()
        save_definitions(table.storage, [*table.definitions, definition])
    if definition.state == IndexState.READY:
        return StatementResult(f"created index {definition.name} ({definition.index_type}); ready", [])
    if not build:
        return StatementResult(
            f"created index {definition.name} ({definition.index_type}); run "
            f"`lakeprune index build` to build it for existing data",
            [],
        )
    instant = build_index(table.storage.uri, definition.name, spark)
    return StatementResult(
        f"created index {definition.name} ({definition.index_type}); built up to {instant}", []
    )


def _require_covering(table: LakeTable, definition: IndexDefinition) -> None:
    """Refuse a definition whose kind aggregates another kind's rows (`IndexKind.requires`) unless
    an index of that kind covers its columns."""
    for required, found in required_by(definition, table.definitions).items():
        missing = set(definition.columns) - set(found.columns if found else ())
        if missing:
            raise InvalidInputError(
                f"{definition.index_type} aggregates {required}: create a {required} index covering "
                f"{', '.join(sorted(missing))} first"
            )


def _aggregated(definition: IndexDefinition) -> bool:
    """Whether the index is aggregated from other indexes' rows (built under the lock from them)
    rather than computed per data file in Spark tasks."""
    return kind_of(definition.index_type).leftover(definition) == Leftover.REAGGREGATE


def build_index(location: str, name: str, spark: SparkSession | None = None) -> str | None:
    """Build a defined index for the files written before it existed; returns the instant it is
    complete up to (None if it was already ready). The rows are computed by executors and kept
    there (persisted on their disks); under the lock, a Spark job keeps those of files still live
    and writes them bucket by bucket: the driver holds file names, never index rows."""
    table = LakeTable.open(location)
    definition = table.definition(name)
    if definition.state == IndexState.READY:
        log.info("index %s is already ready (up to %s)", name, definition.complete_up_to)
        return None
    computed: _Computed | None = None
    for required, found in required_by(definition, table.definitions).items():
        if found is None or found.state != IndexState.READY:
            raise InvalidInputError(
                f"build the {required} index first; {definition.index_type} aggregates it"
            )
    if not _aggregated(definition):
        computed = _compute_chunks(table, definition, spark)
    try:
        return _publish(table, name, computed)
    finally:
        if computed is not None:
            computed.rows.unpersist()


def analyze(location: str, spark: SparkSession | None = None) -> tuple[int, str | None]:
    """Recompute the `column_stats` rows of the live files whose rows lack what optimizers need
    (distinct-value sketches, data sizes, exact decimal bounds: files indexed before those
    existed), as an `index_build` commit of the column stats index, built as `build_index` builds.
    Returns the number of files recomputed and the instant (None: every file had them)."""
    table = LakeTable.open(location)
    definition = next((d for d in table.definitions if d.index_type == IndexType.COLUMN_STATS), None)
    if definition is None or definition.state != IndexState.READY:
        raise InvalidInputError(
            "analyze recomputes a ready column_stats index: create one first "
            "(lakeprune sql 'CREATE INDEX stats ON t USING column_stats (col, ...)')"
        )
    snapshot = table.snapshot()
    files = snapshot.files()
    rows = snapshot.index_partition(table.spec(definition)).read_all()
    complete = (
        rows.filter(pc.is_valid(rows["ndv_sketch"]))
        .group_by(["partition", "file_name"])
        .aggregate([("column", "count_distinct")])
    )
    analyzed = {
        (r["partition"], r["file_name"])
        for r in complete.to_pylist()
        if r["column_count_distinct"] == len(definition.columns)
    }
    missing = [f for f in files if (f.partition, f.file_name) not in analyzed]
    log.info("analyze: %d of %d live file(s) lack optimizer statistics", len(missing), len(files))
    if not missing:
        return 0, None
    computed = _compute_chunks(table, definition, spark, missing)
    try:
        return len(missing), _publish(table, definition.name, computed)
    finally:
        if computed is not None:
            computed.rows.unpersist()


@dataclass(frozen=True)
class _Computed:
    """An index's rows computed for some files (persisted log chunks, `source` their file's name)
    and the names of those files."""

    rows: DataFrame
    sources: frozenset[str]


def _publish(table: LakeTable, name: str, computed: _Computed | None) -> str:
    """Under the table lock: the `index_build` commit of the rows of files still live."""
    with table_lock(table.storage, f"build index {name}"):
        rollback_pending(table.storage)
        table = table.refresh()
        definition = table.definition(name)
        snapshot = table.snapshot()
        live = snapshot.files()
        spec = table.spec(definition)
        with run_instant(
            table.storage, Action.COMMIT, {"operation": "index_build", "index": name}
        ) as pending:
            pending.inflight([], [partition_of(definition)])
            if _aggregated(definition):  # a row per partition and column
                partitions = sorted({f.partition for f in live})
                changes = partition_stats_changes(table, definition, snapshot, partitions, {}, [], live)
                written = write_logs(table.storage, spec, pending.timestamp, changes)
            elif computed is None:  # no file was live when the build started
                written = []
            else:
                still_live = computed.rows
                if not computed.sources <= {f.file_name for f in live}:  # some were replaced since
                    session = still_live.sparkSession
                    names = session.createDataFrame([(f.file_name,) for f in live], "source string")
                    still_live = still_live.join(F.broadcast(names), on="source", how="left_semi")
                targets = {spec.name: LogTarget(spec)}
                written = write_by_bucket(still_live, table.storage, targets, pending.timestamp)
            pending.complete({"operation": "index_build", "index": name, "index_files": written, "stats": {}})
        save_definitions(
            table.storage, [d.ready(pending.timestamp) if d.name == name else d for d in table.definitions]
        )
    log.info("index %s built: %d log file(s), ready up to %s", name, len(written), pending.timestamp)
    return pending.timestamp


def _compute_chunks(
    table: LakeTable,
    definition: IndexDefinition,
    spark: SparkSession | None,
    files: list[DataFile] | None = None,
) -> _Computed | None:
    """The index rows of `files` (default: every live file), computed in Spark tasks as log chunks
    by bucket (source: the file's name, so that the final step keeps the files still live),
    persisted and counted so that the work is done before the lock is taken."""
    files = table.snapshot().files() if files is None else files
    spec = table.spec(definition)
    if not files:
        return None
    from builder.session import job_session

    session = job_session(spark)
    log.info("building index %s over %d file(s)", definition.name, len(files))
    listing = string_columns(files, ("partition", "file_name", "path"))
    parallelism = session.sparkContext.defaultParallelism * 4
    task = _index_files(table.storage, table.config, definition, spec)
    computed = persist_chunks(over_tasks(session, listing, parallelism, task, CHUNK_STRUCT))
    log.info("index %s: %d chunk(s) computed", definition.name, computed.count())
    return _Computed(computed, frozenset(f.file_name for f in files))


def _index_files(
    storage: Storage, config: TableConfig, definition: IndexDefinition, spec: IndexPartitionSpec
) -> BatchFunction:
    """Per file: its index rows for `definition` as upserts, in chunks by bucket beside the file's
    name: its per-file rows, or, for a kind keyed by value and record key, its pairs as those of a
    new file group (not tagged row by row)."""
    kind = kind_of(definition.index_type)
    record_key = config.record_key
    columns = list(kind.reads(definition, record_key))

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for item in batch.to_pylist():
                rows = read_data_file(storage, item["path"], config.schema, columns)
                built = kind.file_rows(rows, config.schema, definition, item["partition"], item["file_name"])
                if built is None:
                    built = kind.file_group_changes(None, rows, definition, record_key, spec, full=True)
                if built is None:
                    raise ValueError(f"index {definition.name}: {definition.index_type} has no rows per file")
                upserts = with_op(built.select(spec.schema.names).cast(spec.schema), OP_UPSERT)
                yield from chunk_batch(chunks(spec, upserts, ROWS, item["file_name"]))

    return run
