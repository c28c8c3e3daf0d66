"""One write (insert, upsert, delete or overwrite of a DataFrame) as one commit instant.

Steps, under the table lock: roll back what a crashed writer left; validate the input; encode keys
and resolve duplicates inside the batch (the row with the greatest ordering field wins, nulls
losing; on a tie, or without an ordering field, the row that comes later in the input wins; a
batch without repeated keys, found by counting the keys alone, skips that resolution); tag
keys with their current location through the record index; plan targets (updates stay in their
file group, new keys and keys whose partition path changed go to small or new file groups); then, as one
instant, rewrite every touched file group as a new file slice, write the record index's, `files`'
and the defined indexes' logs, and publish the completed instant. The driver collects only what is
proportional to the number of files (names, partitions, file groups, sizes, counts; the tombstones
of replaced files; the added files' column stats when partition stats must be re-aggregated): index
rows proportional to the data are written by executors, bucket by bucket (`builder.index_logs`).
Incoming records replace stored ones whatever their ordering
value. An insert of a key that already exists is refused (use upsert). An overwrite replaces every
record of the table in the one instant: an upsert of its input, plus the delete of every key the
record index holds that the input does not (an empty input empties the table). A merge (Spark
SQL's MERGE INTO) is an upsert and a delete in one instant: its input's rows flagged `MERGE_DELETE`
delete their keys, the others are upserted.

Partition paths come from the table's current partition fields. After partition evolution a record
stored in a file group of an earlier partitioning has another path than its update, so an update
moves it: it leaves the old group (rewritten in place, under its old path) and joins a file group
of the current partitioning. Old-layout groups therefore only ever shrink, and the table converges
to the current layout as old records are updated; deletes rewrite old groups in place."""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from builder import index_logs
from builder.compaction import compact_locked
from builder.index_logs import LogTarget, write_by_bucket
from builder.indexing import file_driven_chunks, log_targets, needs_added_stats
from builder.instants import rollback_pending, run_instant
from builder.intermediates import persist_chunks, persist_intermediate
from builder.lock import table_lock
from builder.session import job_session
from builder.task_batches import over_tasks
from builder.write import bulk, tasks
from builder.write.plan import InsertBin, plan_insert_bins
from builder.write.tasks import (
    ACTION,
    ACTION_ADD,
    ACTION_REMOVE,
    BUCKET,
    FILE_GROUP,
    KEY,
    OLD_FILE_GROUP,
    OLD_PARTITION,
    PARTITION,
    RECORD_OP,
)
from builder.write.validate import conform, count_and_check_nulls
from pruner.errors import IndexFileMissingError, InvalidInputError
from pruner.format.timeline import Action
from pruner.index.kinds import partition_of
from pruner.index.specs import from_ipc
from pruner.metadata import files_index
from pruner.metadata.files_index import DataFile
from pruner.metadata.index_partition import write_logs
from pruner.metadata.spec import OP_DELETE, OP_UPSERT
from pruner.table.table import LakeTable, Snapshot
from pruner.types import TableSchema

log = logging.getLogger(__name__)
SEQ = "_lp_seq"
MERGE_DELETE = "_lp_delete"  # a merge's input column: delete this row's key (else upsert the row)
ORDER = "_lp_order"  # a new row's (sort values, record key) as one struct
# Inserts of more new rows than this cut their file groups at boundaries found in a sample of about
# this many rows (`_Write._assign_bins`).
BOUNDARY_SAMPLE_ROWS = 250_000


class WriteMode(StrEnum):
    INSERT = "insert"
    UPSERT = "upsert"
    DELETE = "delete"
    OVERWRITE = "overwrite"
    MERGE = "merge"


@dataclass(frozen=True)
class WriteResult:
    """What one write did. `updated` includes `moved`: records whose partition path changed (a
    partition value changed, or the record moved out of an earlier partitioning's file group)."""

    operation: str
    instant: str | None
    input_rows: int = 0
    duplicates_dropped: int = 0
    inserted: int = 0
    updated: int = 0
    moved: int = 0
    deleted: int = 0
    not_found: int = 0
    files_added: int = 0
    files_removed: int = 0
    compaction_instant: str | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return asdict(self)


class _Timer:
    def __init__(self) -> None:
        self.phases: dict[str, float] = {}

    def phase(self, name: str, start: float) -> None:
        self.phases[name] = round((time.perf_counter() - start) * 1000, 1)


def write(
    spark: SparkSession,
    location: str,
    df: DataFrame,
    mode: WriteMode | str,
    sort_by: Sequence[str] = (),
) -> WriteResult:
    """One commit. `sort_by` (RFC-63 appendix): columns or registry expressions such as `hour(ts)`
    that decide which new records share a file: inserts are ranked by them (then by key) within
    their partition before being cut into files, so that files cover narrow ranges of the sort
    values and min / max indexes skip them. Rows inside a file stay in key order."""
    mode = WriteMode(mode)
    spark = job_session(spark)
    table = LakeTable.open(location)
    sort_columns = sort_expressions(table.config.schema, sort_by)
    with table_lock(table.storage, f"write ({mode})"):
        rolled_back = rollback_pending(table.storage)
        if rolled_back:
            log.warning(
                "rolled back incomplete instant(s) %s left by an earlier writer", ", ".join(rolled_back)
            )
        return _Write(spark, table.refresh(), mode, sort_columns).run(df)


def _record_op(op: int | None) -> Column:
    """The record index op a planned row carries (`tasks.RECORD_OP`)."""
    return F.lit(op).cast("tinyint")


class RecordsNotKeptError(RuntimeError):
    """The rewritten file groups do not hold every record exactly once: a bug, never a user's
    mistake. Raised before the instant is published, so the write is rolled back."""


def check_records_kept(written: list[tuple[str, int]], live: dict[str, DataFile], net_added: int) -> None:
    """Before a commit is published: the rewrite wrote each target file group once (`written`: file
    group and the rows of its new slice, 0 when it emptied), and its new slices hold the replaced
    slices' records plus the inserted minus the deleted ones (updates and moves keep the count).
    A planning or rewrite bug that would lose or duplicate records stops the write here."""
    groups = Counter(group for group, _ in written)
    repeated = sorted(group for group, times in groups.items() if times > 1)
    if repeated:
        raise RecordsNotKeptError(
            f"file group(s) {', '.join(repeated[:3])} were written by more than one task; nothing was "
            "committed (a bug in lakeprune: please report it)"
        )
    before = sum(live[group].rows for group in groups if group in live)
    after = sum(rows for _, rows in written)
    if after != before + net_added:
        raise RecordsNotKeptError(
            f"the rewritten file groups hold {after} record(s) where {before + net_added} were expected "
            f"({before} before, {net_added:+d} by this write); nothing was committed (a bug in "
            "lakeprune: please report it)"
        )


def sort_expressions(schema: TableSchema, sort_by: Sequence[str]) -> list[Column]:
    """Spark expressions for `--sort-by` items: a column, or an index expression over columns (same
    Spark implementation as everywhere else); inserts are ordered by them ascending, nulls first.
    Raises InvalidInputError for unknown columns / functions."""
    from pruner.functions import parse_expression

    types = {c.name: c.type for c in schema.columns}
    out = []
    for item in sort_by:
        text = item.strip()
        if text.lower() in types:
            out.append(F.col(text.lower()))
        elif "(" in text or any(c in text for c in "+-*/%"):
            out.append(parse_expression(text, types).spark(F.col))
        else:
            raise InvalidInputError(f"--sort-by: unknown column {text!r} (columns: {', '.join(types)})")
    return out


class _Write:
    def __init__(
        self, spark: SparkSession, table: LakeTable, mode: WriteMode, sort_by: Sequence[Column] = ()
    ) -> None:
        self.spark = spark
        self.sort_by = list(sort_by)
        self.table = table
        self.config = table.config
        # Resolved first: an index that cannot be used stops the write before any work is done.
        self.index_specs = [(d, table.spec(d)) for d in table.definitions]
        self.mode = mode
        self.timer = _Timer()
        self.cached: list[DataFrame] = []

    def _keep(self, persisted: DataFrame) -> DataFrame:
        """`persisted`, unpersisted when the write ends."""
        self.cached.append(persisted)
        return persisted

    def run(self, df: DataFrame) -> WriteResult:
        try:
            return self._run(df)
        finally:
            for cached in self.cached:
                cached.unpersist()

    def _run(self, df: DataFrame) -> WriteResult:
        key_only = self.mode == WriteMode.DELETE
        merge = self.mode == WriteMode.MERGE
        start = time.perf_counter()
        conformed = conform(df, self.config, key_only, MERGE_DELETE if merge else None)
        input_rows = count_and_check_nulls(conformed, self.config, key_only)
        self.timer.phase("validate", start)
        overwrite = self.mode == WriteMode.OVERWRITE
        if input_rows == 0 and not overwrite:
            log.info("input is empty: nothing to %s", self.mode)
            return WriteResult(str(self.mode), None, timings_ms=self.timer.phases)

        snapshot = self.table.snapshot()
        live = {f.file_group: f for f in snapshot.files()}
        missing = snapshot.record_index().missing()
        if missing:  # tagging without them would insert keys the table already holds
            raise IndexFileMissingError(
                f"record index file {snapshot.table.storage.full_uri(missing[0])} is missing "
                f"({len(missing)} in all); the table cannot be written until it is restored"
            )

        first_insert = self.mode == WriteMode.INSERT or (overwrite and input_rows > 0)
        if first_insert and bulk.applies(snapshot, len(live)):
            bulk_result = self._bulk_insert(conformed, input_rows)
            if bulk_result is not None:
                return bulk_result

        start = time.perf_counter()
        unique, unique_rows = self._deduplicate(self._keep(persist_intermediate(self._annotate(conformed))))
        self.timer.phase("prepare", start)
        log.info("%s of %d record(s) (%d after resolving duplicate keys)", self.mode, input_rows, unique_rows)

        start = time.perf_counter()
        tagged, found, moved = self._tag(unique, unique_rows, snapshot)
        self.timer.phase("tag", start)
        if self.mode == WriteMode.INSERT and found:
            existing = tagged.where(F.col(OLD_FILE_GROUP).isNotNull()).select(KEY).limit(5).collect()
            sample = [r[KEY] for r in existing]
            raise InvalidInputError(
                f"{found} record key(s) already exist in the table (e.g. {', '.join(map(repr, sample))}); "
                "write them as an upsert to update them (the CLI's --mode upsert, the DataFrame "
                "writer's option operation=upsert, or Spark SQL's MERGE INTO / UPDATE)"
            )

        start = time.perf_counter()
        result = WriteResult(
            operation=str(self.mode),
            instant=None,
            input_rows=input_rows,
            duplicates_dropped=input_rows - unique_rows,
            inserted=0 if key_only else unique_rows - found,
            updated=0 if key_only else found,
            moved=0 if key_only else moved,
            deleted=found if key_only else 0,
            not_found=unique_rows - found if key_only else 0,
        )
        upserts, gone = tagged, None
        if overwrite:
            gone, deleted = self._not_kept(unique, snapshot)
            result = replace(result, deleted=deleted)
        elif merge:
            upserts, gone, result = self._split_merge(tagged, result)
        work, bins = self._plan(upserts, list(live.values()), gone)
        targets = self._targets(tagged, found, bins, gone if result.deleted else None)
        self.timer.phase("plan", start)
        if not targets:
            log.info("nothing to change")
            return replace(result, timings_ms=self.timer.phases)
        return self._commit(targets, live, result, lambda at: self._rewrite(work, targets, live, at))

    def _bulk_insert(self, conformed: DataFrame, input_rows: int) -> WriteResult | None:
        """A table's first insert, planned without resolving or looking up keys, its files written
        by Spark or by the rewrite tasks (`builder.write.bulk`); None when the input repeats a key
        (the general path resolves them)."""
        start = time.perf_counter()
        if bulk.has_repeated_keys(conformed, self.config.record_key):
            log.info("the input repeats record keys: resolving them on the general path")
            return None
        with_paths, counts = bulk.with_partition_paths(self.spark, conformed, self.config, input_rows)
        self.timer.phase("prepare", start)
        start = time.perf_counter()
        bins = plan_insert_bins(counts, [], self.config.properties)
        assigned = self._assign_bins(with_paths, bins)
        targets = sorted({(b.file_group, b.partition) for b in bins})
        self.timer.phase("plan", start)
        result = WriteResult(str(self.mode), None, input_rows=input_rows, inserted=input_rows)
        if bulk.spark_writes(self.table.storage):
            log.info("first insert of %d record(s): written by Spark's Parquet writer", input_rows)
            partitions = dict(targets)
            return self._commit(
                targets, {}, result, lambda at: bulk.write_files(assigned, self.table, at, partitions)
            )
        log.info("first insert of %d record(s): no key lookup", input_rows)
        work = assigned.select(*self.config.schema.names, PARTITION, FILE_GROUP, ACTION, RECORD_OP)
        return self._commit(targets, {}, result, lambda at: self._rewrite(work, targets, {}, at))

    def _annotate(self, conformed: DataFrame) -> DataFrame:
        keyed = conformed.withColumn(SEQ, F.monotonically_increasing_id())
        schema = (
            T.StructType(list(keyed.schema.fields))
            .add(KEY, T.StringType())
            .add(PARTITION, T.StringType())
            .add(BUCKET, T.IntegerType())
        )
        # A delete's input has only the key; its rows' partitions come from the record index.
        partition_fields = () if self.mode == WriteMode.DELETE else self.config.partition_fields
        fn = tasks.annotate(
            self.config.record_key, partition_fields, self.config.properties.index_record_index_buckets
        )
        return keyed.mapInArrow(fn, schema)

    def _deduplicate(self, annotated: DataFrame) -> tuple[DataFrame, int]:
        """The batch with one row per key, and its number of rows. Whether any key repeats is
        counted over the keys alone (a shuffle of the key column, no sort); only a batch that has
        repeated keys pays for the window that picks each key's winning row, a shuffle and sort of
        whole rows (most batches have none, and their first load is often the largest)."""
        counts = annotated.groupBy(KEY).count()
        totals = counts.agg(F.count(F.lit(1)).alias("keys"), F.sum("count").alias("rows")).first()
        assert totals is not None
        keys = int(totals["keys"])
        if keys == int(totals["rows"] or 0):
            return annotated.drop(SEQ), keys
        order = [F.col(SEQ).desc()]
        if self.config.ordering_field and self.mode != WriteMode.DELETE:
            order.insert(0, F.col(self.config.ordering_field).desc_nulls_last())
        window = Window.partitionBy(KEY).orderBy(*order)
        winners = (
            annotated.withColumn("_lp_rank", F.row_number().over(window))
            .where(F.col("_lp_rank") == 1)
            .drop("_lp_rank", SEQ)
        )
        return self._keep(persist_intermediate(winners)), keys

    def _tag(self, unique: DataFrame, keys: int, snapshot: Snapshot) -> tuple[DataFrame, int, int]:
        """Join each of the `keys` keys with its current location from the record index (null for
        new keys); with the number of keys found, and of those found in another partition than
        their new one. The lookup runs a task per group of buckets, never more tasks than keys (an
        upsert of a few rows into a table of many buckets would start a Python task per bucket).
        A table that nothing was written to yet has no record index: every key is new, so nothing
        is looked up, persisted again or counted (the first load of a table is often its largest)."""
        view = snapshot.record_index()
        if not view.buckets:
            tagged = unique.withColumn(OLD_PARTITION, F.lit(None).cast("string")).withColumn(
                OLD_FILE_GROUP, F.lit(None).cast("string")
            )
            return tagged, 0, 0
        schema = T.StructType(
            [T.StructField(n, T.StringType()) for n in (KEY, OLD_PARTITION, OLD_FILE_GROUP)]
        )
        found = (
            unique.select(KEY, BUCKET)
            .repartition(max(1, min(len(view.buckets), 64, keys)), BUCKET)
            .mapInArrow(tasks.lookup_locations(view), schema)
        )
        tagged = self._keep(persist_intermediate(unique.join(found, on=KEY, how="left")))
        located = F.col(OLD_FILE_GROUP).isNotNull()
        moved = located & (F.col(OLD_PARTITION) != F.col(PARTITION))
        counts = tagged.agg(
            F.sum(F.when(located, 1).otherwise(0)).alias("found"),
            F.sum(F.when(moved, 1).otherwise(0)).alias("moved"),
        ).first()
        assert counts is not None
        return tagged, int(counts["found"] or 0), int(counts["moved"] or 0)

    def _not_kept(self, unique: DataFrame, snapshot: Snapshot) -> tuple[DataFrame | None, int]:
        """An overwrite's deletes: every key the record index holds that its input (`unique`) does
        not, with its location and bucket, and their number; None when the table holds no key."""
        view = snapshot.record_index()
        if not view.buckets:
            return None, 0
        buckets = pa.table({"bucket": pa.array(sorted(view.buckets), pa.int32())})
        held = over_tasks(self.spark, buckets, 64, tasks.held_locations(view), tasks.HELD_STRUCT)
        gone = self._keep(persist_intermediate(held.join(unique.select(KEY), on=KEY, how="left_anti")))
        return gone, gone.count()

    def _split_merge(
        self, tagged: DataFrame, result: WriteResult
    ) -> tuple[DataFrame, DataFrame, WriteResult]:
        """A merge's tagged rows to upsert, the keys it deletes that the table holds (as
        `_not_kept`'s), and the result counting each."""
        deleting = F.col(MERGE_DELETE)
        exists = F.col(OLD_FILE_GROUP).isNotNull()
        moves = exists & (F.col(OLD_PARTITION) != F.col(PARTITION))
        cases = {
            "inserted": ~deleting & ~exists,
            "updated": ~deleting & exists,
            "moved": ~deleting & moves,
            "deleted": deleting & exists,
            "not_found": deleting & ~exists,
        }
        sums = [F.sum(F.when(case, 1).otherwise(0)).alias(name) for name, case in cases.items()]
        row = tagged.agg(*sums).first()
        assert row is not None
        count = {name: int(row[name] or 0) for name in cases}
        counted = replace(
            result,
            inserted=count["inserted"],
            updated=count["updated"],
            moved=count["moved"],
            deleted=count["deleted"],
            not_found=count["not_found"],
        )
        gone = tagged.where(deleting & exists).select(KEY, OLD_PARTITION, OLD_FILE_GROUP, BUCKET)
        return tagged.where(~deleting), gone, counted

    def _plan(
        self, tagged: DataFrame, live_files: list[DataFile], gone: DataFrame | None = None
    ) -> tuple[DataFrame, list[InsertBin]]:
        """Rows to add to (action 0) or keys to remove from (action 1) each target file group, and
        the bins the new rows were cut into; `gone`: keys an overwrite deletes."""
        exists = F.col(OLD_FILE_GROUP).isNotNull()
        if self.mode == WriteMode.DELETE:
            return self._removals(tagged.where(exists), OP_DELETE), []
        same_partition = F.col(OLD_PARTITION) == F.col(PARTITION)
        updates = (
            tagged.where(exists & same_partition)
            .withColumn(FILE_GROUP, F.col(OLD_FILE_GROUP))
            .withColumn(ACTION, F.lit(ACTION_ADD))
            .withColumn(RECORD_OP, _record_op(None))
        )
        new_rows = tagged.where(~exists | ~same_partition)
        counts = {r[PARTITION]: int(r["count"]) for r in new_rows.groupBy(PARTITION).count().collect()}
        bins = plan_insert_bins(counts, live_files, self.config.properties)
        inserts = self._assign_bins(new_rows, bins)
        columns = self._work_columns()
        work = (
            updates.select(*columns)
            .unionByName(inserts.select(*columns))
            .unionByName(self._removals(tagged.where(exists & ~same_partition), None))
        )
        if gone is not None:
            work = work.unionByName(self._removals(gone, OP_DELETE))
        return work, bins

    def _targets(
        self, tagged: DataFrame, found: int, bins: list[InsertBin], gone: DataFrame | None = None
    ) -> list[tuple[str, str]]:
        """(file group, partition) of every group the write may change: each insert bin's, the
        group each found key is in now (updated in place, left by a move, deleted from), and the
        group of each key an overwrite deletes (`gone`, None when there is none). Read from
        the found keys' locations only when there are any (never for a table's first write), not
        from the planned rows. A bin left without rows (equal order values at its boundary, see
        `_assign_bins`) is a target that no task rewrites: it only widens the inflight record."""
        targets = {(b.file_group, b.partition) for b in bins}
        if found:
            located = tagged.where(F.col(OLD_FILE_GROUP).isNotNull()).select(OLD_FILE_GROUP, OLD_PARTITION)
            targets |= {(r[OLD_FILE_GROUP], r[OLD_PARTITION]) for r in located.distinct().collect()}
        if gone is not None:
            left = gone.select(OLD_FILE_GROUP, OLD_PARTITION).distinct().collect()
            targets |= {(r[OLD_FILE_GROUP], r[OLD_PARTITION]) for r in left}
        return sorted(targets)

    def _work_columns(self) -> list[str]:
        return [*self.config.schema.names, KEY, PARTITION, FILE_GROUP, ACTION, RECORD_OP, BUCKET]

    def _removals(self, located: DataFrame, op: int | None) -> DataFrame:
        """Remove-rows for keys leaving their current file group: deleted (`op` OP_DELETE: the
        record index drops them), or moved to another partition (`op` None: their new location is
        the upsert of their added row)."""
        empty_values = [
            F.lit(None).cast(c.type.to_spark_ddl()).alias(c.name) for c in self.config.schema.columns
        ]
        return located.select(
            *empty_values,
            KEY,
            F.col(OLD_PARTITION).alias(PARTITION),
            F.col(OLD_FILE_GROUP).alias(FILE_GROUP),
            F.lit(ACTION_REMOVE).alias(ACTION),
            _record_op(op).alias(RECORD_OP),
            BUCKET,
        )

    def _assign_bins(self, new_rows: DataFrame, bins: list[InsertBin]) -> DataFrame:
        """Give each new row the file group of its bin. A bin is a range of ranks of its partition's
        new rows in order of (sort values, typed record key) — typed, so that numeric keys cluster
        numerically. Keys are unique, so that order is total and a bin is equally the range of order
        values from its first row's (inclusive) to the next bin's first row's (exclusive); a
        partition's first bin is open below and its last open above, so that every row has exactly
        one bin whatever the boundaries. Those boundaries are found by ranking only the order
        values (a window over a narrow struct, not over whole rows) — all of them when the insert
        has at most `BOUNDARY_SAMPLE_ROWS` new rows (exact bins), else a random sample of about
        that many, each bin starting at the sampled row of the same relative rank (bins then hold
        their planned number of rows to within a few percent, and ranking 20M rows costs what
        ranking 250K does). Whole rows are then given their bin by comparing their order value
        with the boundaries, in a broadcast join: no shuffle or sort of whole rows. The ranking
        sorts the same struct the join compares, and Spark orders structs field by field as it
        compares them (nulls first, NaN last, -0.0 = 0.0), so the ranges are exactly the ranking's;
        equal order values (keys that differ where Spark's ordering does not) stay in one bin, whose
        neighbour may then get fewer rows. A bin whose boundary the sample lacks gets no rows (its
        neighbour below takes its range). `check_records_kept` guards the outcome before any
        commit."""
        order = [*self.sort_by, *(F.col(k) for k in self.config.record_key)]
        keyed = new_rows.withColumn(ORDER, F.struct(*(c.alias(f"o{i}") for i, c in enumerate(order))))
        counts: dict[str, int] = {}
        for b in bins:
            counts[b.partition] = max(counts.get(b.partition, 0), b.end)
        starts = self.spark.createDataFrame(
            [(b.partition, b.file_group, b.start, counts[b.partition]) for b in bins],
            "b_partition string, b_file_group string, b_start bigint, b_count bigint",
        )
        ranked = keyed.select(PARTITION, ORDER)
        total = sum(counts.values())
        if total > BOUNDARY_SAMPLE_ROWS:
            ranked = ranked.sample(fraction=BOUNDARY_SAMPLE_ROWS / total, seed=0)
        by_partition = Window.partitionBy(PARTITION)
        ranked = ranked.withColumn(
            "_lp_rank", F.row_number().over(by_partition.orderBy(F.col(ORDER).asc())) - 1
        ).withColumn("_lp_ranked", F.count(F.lit(1)).over(by_partition))
        low = F.lit(None).cast(keyed.schema[ORDER].dataType)
        first = starts.where(F.col("b_start") == 0).withColumn("b_low", low)
        later_starts = F.broadcast(starts.where(F.col("b_start") > 0))
        # The sampled row at the bin's relative rank (exactly its first row when nothing is sampled).
        at_rank = F.expr("b_start * _lp_ranked div b_count")
        later = ranked.join(
            later_starts,
            (ranked[PARTITION] == later_starts["b_partition"]) & (F.col("_lp_rank") == at_rank),
        ).select("b_partition", "b_file_group", "b_start", "b_count", F.col(ORDER).alias("b_low"))
        following = Window.partitionBy("b_partition").orderBy("b_start")
        boundaries = first.unionByName(later).withColumn("b_high", F.lead("b_low").over(following))
        condition = (
            (keyed[PARTITION] == boundaries["b_partition"])
            & (boundaries["b_low"].isNull() | (keyed[ORDER] >= boundaries["b_low"]))
            & (boundaries["b_high"].isNull() | (keyed[ORDER] < boundaries["b_high"]))
        )
        return (
            keyed.join(F.broadcast(boundaries), condition, "inner")
            .withColumn(FILE_GROUP, F.col("b_file_group"))
            .withColumn(ACTION, F.lit(ACTION_ADD))
            .withColumn(RECORD_OP, _record_op(OP_UPSERT))
        )

    def _rewrite(
        self, work: DataFrame, targets: list[tuple[str, str]], live: dict[str, DataFile], instant: str
    ) -> DataFrame:
        """The rewrite of every target file group by Spark tasks (`tasks.rewrite_file_groups`): the
        written files' rows and index chunks, persisted: the index chunks are read again (by the
        log-writing job) after the file rows are collected, and the rewrite (which writes the data
        files) must not run twice. The planned rows are read once, by the rewrite: they are not
        persisted."""
        rewrite = tasks.rewrite_file_groups(
            self.table.storage,
            self.config,
            list(self.table.definitions),
            self.table.record_index_spec,
            live,
            instant,
        )
        parallelism = max(1, min(len(targets), self.spark.sparkContext.defaultParallelism * 2))
        return persist_chunks(
            work.repartition(parallelism, FILE_GROUP)
            .sortWithinPartitions(FILE_GROUP)
            .mapInArrow(rewrite, tasks.WRITTEN_STRUCT)
        )

    def _commit(
        self,
        targets: list[tuple[str, str]],
        live: dict[str, DataFile],
        result: WriteResult,
        write_files: Callable[[str], DataFrame],
    ) -> WriteResult:
        """Write the target file groups (`write_files`: given the instant, the written files' rows
        and index chunks, persisted), their index logs, and publish the instant."""
        storage = self.table.storage
        files_spec = self.table.files_spec
        partitions = sorted({partition for _, partition in targets})
        with run_instant(storage, Action.COMMIT, {"operation": str(self.mode)}) as pending:
            instant = pending.timestamp
            defined = [partition_of(d) for d in self.table.definitions]
            pending.inflight(partitions, [files_spec.name, self.table.record_index_spec.name, *defined])

            start = time.perf_counter()
            log.info("writing %d file group(s) in %d partition(s)", len(targets), len(partitions))
            rewritten = self._keep(write_files(instant))
            is_file = F.col(index_logs.INDEX_PARTITION).isNull()
            written = rewritten.where(is_file).select(*tasks.FILE_FIELDS).collect()
            self.timer.phase("write_files", start)

            check_records_kept(
                [(r["file_group"], int(r["rows"])) for r in written], live, result.inserted - result.deleted
            )
            added = [
                DataFile(r["partition"], r["file_name"], r["file_group"], instant, r["size"], r["rows"])
                for r in written
                if r["file_name"]
            ]
            removed = [live[r["file_group"]] for r in written if r["file_group"] in live]

            start = time.perf_counter()
            files_logs = write_logs(storage, files_spec, instant, files_index.changes(added, removed))
            self.timer.phase("files_index", start)

            start = time.perf_counter()
            gone = {f.file_group for f in removed}
            live_after = [f for f in live.values() if f.file_group not in gone] + added
            files_logs += self._write_index_logs(
                rewritten.where(~is_file), instant, added, removed, live_after
            )
            self.timer.phase("indexes", start)

            final = replace(
                result,
                instant=instant,
                files_added=len(added),
                files_removed=len(removed),
                timings_ms=self.timer.phases,
            )
            pending.complete(
                {
                    "operation": str(self.mode),
                    "added": [f.to_json() for f in added],
                    "removed": [f.to_json() for f in removed],
                    "index_files": sorted(files_logs),
                    "stats": {k: v for k, v in final.to_json().items() if isinstance(v, int)},
                    "timings_ms": self.timer.phases,
                }
            )
        log.info(
            "committed %s: %d inserted, %d updated, %d deleted; %d file(s) added, %d replaced",
            instant,
            final.inserted,
            final.updated,
            final.deleted,
            final.files_added,
            final.files_removed,
        )
        try:
            compaction = compact_locked(self.table.refresh(), force=False, spark=self.spark).instant
        except Exception:  # the commit stands; the compaction instant rolled itself back
            log.warning(
                "index compaction after commit %s failed; run `lakeprune compact`", instant, exc_info=True
            )
            compaction = None
        return replace(final, compaction_instant=compaction)

    def _write_index_logs(
        self,
        shipped: DataFrame,
        instant: str,
        added: list[DataFile],
        removed: list[DataFile],
        live_after: list[DataFile],
    ) -> list[str]:
        """The record index's and the defined indexes' logs of this commit, written by executors
        bucket by bucket from the chunks the rewrite tasks shipped and the few rows (proportional to
        files) the driver adds."""
        chunks = shipped.select(
            index_logs.INDEX_PARTITION,
            "bucket",
            "order",
            F.col("file_group").alias("source"),
            "piece",
            "data",
        )
        stats_partition = needs_added_stats(self.table)
        added_stats = None
        if stats_partition is not None:
            collected = chunks.where(F.col(index_logs.INDEX_PARTITION) == stats_partition).select("data")
            tables = [from_ipc(r["data"]) for r in collected.collect()]
            added_stats = pa.concat_tables(tables) if tables else None
        previous = self.table.snapshot()
        extra = file_driven_chunks(self.table, previous, added_stats, added, removed, live_after)
        record_index = self.table.record_index_spec
        return write_by_bucket(
            chunks.unionByName(index_logs.as_chunk_frame(self.spark, extra)),
            self.table.storage,
            {record_index.name: LogTarget(record_index), **log_targets(self.table, previous)},
            instant,
        )
