"""Keeping the defined data-skipping indexes current: what the driver adds to a commit's index
logs beside the rows the write tasks computed (`builder.write.tasks`), and where the logs go.

The tasks ship, chunked by bucket, the upserts of the added files' per-file index rows and each
secondary index's pair changes (diffed per file group from the old image). The driver adds only
rows proportional to the number of files: per-file indexes (`column_stats`, `bloom_filters`,
functional indexes) tombstone every (column, partition, file) of a removed file, after the upserts;
an index keyed by value asks the task of each bucket to tombstone the previous rows of the removed
files (`builder.index_logs.PREVIOUS`); `partition_stats` is re-aggregated for each touched partition
from the partition's file stats after the commit (one row per file and column: the added files'
column stats are collected for it), and a partition whose live files are not all covered by file
stats gets a tombstone instead (unknown, so never pruned)."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pyarrow.compute as pc

from builder import index_logs
from builder.index_logs import LogTarget
from pruner.index.definitions import IndexDefinition
from pruner.index.kinds import Leftover, kind_of, partition_of, required_by
from pruner.index.stats import aggregate_by_partition
from pruner.metadata.files_index import DataFile
from pruner.metadata.merge import with_op
from pruner.metadata.spec import OP_DELETE, OP_UPSERT
from pruner.table.table import LakeTable, Snapshot


def _tombstones(table: LakeTable, definition: IndexDefinition, keys: list[dict[str, str]]) -> pa.Table:
    spec = table.spec(definition)
    names = kind_of(definition.index_type).column_keys(definition)
    rows = [{**key, "column": column} for key in keys for column in names]
    columns = {name: [r.get(name) for r in rows] for name in spec.schema.names}
    return with_op(pa.table(columns, schema=spec.schema), OP_DELETE)


def log_targets(table: LakeTable, previous: Snapshot) -> dict[str, LogTarget]:
    """Every defined index partition a commit writes logs into."""
    targets = {}
    for definition in table.definitions:
        spec = table.spec(definition)
        leftover = kind_of(definition.index_type).leftover(definition)
        by_value = leftover == Leftover.PREVIOUS and previous.instant is not None
        targets[spec.name] = LogTarget(
            spec,
            pairs=leftover == Leftover.NOTHING,
            previous=previous.index_partition(spec) if by_value else None,
        )
    return targets


def file_driven_chunks(
    table: LakeTable,
    previous: Snapshot,
    added_stats: pa.Table | None,
    added: list[DataFile],
    removed: list[DataFile],
    live_after: list[DataFile],
) -> list[dict[str, object]]:
    """The commit's index log rows that the driver derives, as chunks for `builder.index_logs`.
    `added_stats`: the `column_stats` rows of the added files (needed with `partition_stats` only)."""
    out: list[dict[str, object]] = []
    removed_keys = [{"partition": f.partition, "file_name": f.file_name} for f in removed]
    for definition in table.definitions:
        spec = table.spec(definition)
        leftover = kind_of(definition.index_type).leftover(definition)
        if leftover == Leftover.REAGGREGATE:
            touched = sorted({f.partition for f in [*added, *removed]})
            source = partition_of(_aggregated_from(table, definition))
            added_rows = {} if added_stats is None else {source: added_stats}
            rows = partition_stats_changes(
                table, definition, previous, touched, added_rows, removed, live_after
            )
            out += index_logs.chunks(spec, rows, index_logs.ROWS, "")
        elif leftover == Leftover.NOTHING or not removed:
            continue
        elif leftover == Leftover.PREVIOUS:  # one row per value: tombstone the rows the files had
            out += index_logs.previous_chunks(
                spec, pa.Table.from_pylist(removed_keys, index_logs.REMOVED_SCHEMA)
            )
        else:
            out += index_logs.chunks(
                spec, _tombstones(table, definition, removed_keys), index_logs.TOMBSTONES, ""
            )
    return out


def _aggregated_from(table: LakeTable, definition: IndexDefinition) -> IndexDefinition:
    """The index whose rows a re-aggregated index (`Leftover.REAGGREGATE`) aggregates: the one of
    the kind it requires (`partition_stats` aggregates `column_stats`)."""
    found = next((d for d in required_by(definition, table.definitions).values() if d is not None), None)
    if found is None:  # CREATE INDEX and index build refuse it without
        raise ValueError(f"index {definition.name} aggregates an index the table does not define")
    return found


def needs_added_stats(table: LakeTable) -> str | None:
    """The partition whose rows of the added files the driver needs, to re-aggregate an index
    from them (`column_stats`, for `partition_stats`); None if no index is re-aggregated."""
    for definition in table.definitions:
        if kind_of(definition.index_type).leftover(definition) == Leftover.REAGGREGATE:
            return partition_of(_aggregated_from(table, definition))
    return None


def partition_stats_changes(
    table: LakeTable,
    definition: IndexDefinition,
    previous: Snapshot,
    touched: list[str],
    added_rows: dict[str, pa.Table],
    removed: list[DataFile],
    live_after: list[DataFile],
) -> pa.Table:
    stats_definition = _aggregated_from(table, definition)
    stats_spec = table.spec(stats_definition)
    before = previous.index_partition(stats_spec).lookup(pa.array(touched, pa.string()))
    gone = pa.array([f.file_name for f in removed], pa.string())
    kept = before.filter(pc.invert(pc.is_in(before["file_name"], value_set=gone)))
    new = added_rows.get(partition_of(stats_definition), stats_spec.schema.empty_table())
    current = pa.concat_tables([kept, new.select(stats_spec.schema.names).cast(stats_spec.schema)])
    current = current.filter(pc.is_in(current["column"], value_set=pa.array(list(definition.columns))))
    live_counts = Counter(f.partition for f in live_after if f.partition in set(touched))
    aggregated = aggregate_by_partition(current, dict(live_counts))
    present = {(r["column"], r["partition"]) for r in aggregated.select(["column", "partition"]).to_pylist()}
    unknown = [{"partition": p} for p in touched]
    tombstones = _tombstones(table, definition, unknown)
    keep = [
        (c, p) not in present
        for c, p in zip(tombstones["column"].to_pylist(), tombstones["partition"].to_pylist(), strict=True)
    ]
    return pa.concat_tables([with_op(aggregated, OP_UPSERT), tombstones.filter(pa.array(keep, pa.bool_()))])
