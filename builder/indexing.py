"""Keeping the defined data-skipping indexes current: given the index rows of the files a commit
added and the files it removed, the log rows each index partition gets in that commit.

Per-file indexes (`column_stats`, `bloom_filters`) upsert the added files' rows and tombstone
every (column, partition, file) of a removed file. `partition_stats` is re-aggregated for each
touched partition from the partition's file stats after the commit; a partition whose live files
are not all covered by file stats gets a tombstone instead (unknown, so never pruned).
Secondary indexes arrive as log rows already: the write tasks diffed each file group's old image
against its new rows (`pruner.index.secondary`); here they are only ordered tombstones first."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pyarrow.compute as pc

from pruner.index.definitions import IndexDefinition, IndexType
from pruner.index.secondary import order_for_commit
from pruner.index.stats import aggregate_by_partition
from pruner.metadata.files_index import DataFile
from pruner.metadata.merge import with_op
from pruner.metadata.spec import OP_DELETE, OP_UPSERT
from pruner.table.table import LakeTable, Snapshot


def _tombstones(table: LakeTable, definition: IndexDefinition, keys: list[dict[str, str]]) -> pa.Table:
    spec = table.spec(definition)
    names = (definition.name,) if definition.index_type == IndexType.FUNCTIONAL else definition.columns
    rows = [{**key, "column": column} for key in keys for column in names]
    columns = {name: [r.get(name) for r in rows] for name in spec.schema.names}
    return with_op(pa.table(columns, schema=spec.schema), OP_DELETE)


def _previous_rows(
    previous: Snapshot, definition: IndexDefinition, table: LakeTable, removed: list[DataFile]
) -> pa.Table:
    spec = table.spec(definition)
    if not removed or previous.instant is None:
        return spec.log_schema.empty_table()
    rows = previous.index_partition(spec).lookup(
        pa.array(sorted({f.partition for f in removed}), pa.string())
    )
    gone = pa.array([f.file_name for f in removed], pa.string())
    rows = rows.filter(pc.is_in(rows["file_name"], value_set=gone)).select(spec.schema.names)
    return with_op(rows.cast(spec.schema), OP_DELETE)


def index_changes(
    table: LakeTable,
    previous: Snapshot,
    added_rows: dict[str, pa.Table],
    added: list[DataFile],
    removed: list[DataFile],
    live_after: list[DataFile],
) -> dict[str, pa.Table]:
    """Log rows (with op) per index partition for one commit."""
    changes: dict[str, pa.Table] = {}
    removed_keys = [{"partition": f.partition, "file_name": f.file_name} for f in removed]
    for definition in table.definitions:
        if definition.index_type == IndexType.PARTITION_STATS:
            continue
        spec = table.spec(definition)
        if definition.index_type == IndexType.SECONDARY_INDEX:  # rows already carry their op
            shipped = added_rows.get(definition.index_partition, spec.log_schema.empty_table())
            changes[definition.index_partition] = order_for_commit(shipped.cast(spec.log_schema))
            continue
        upserts = added_rows.get(definition.index_partition, spec.schema.empty_table())
        if "value" in spec.key_fields:  # one row per value: tombstone the rows the files had
            tombstones = _previous_rows(previous, definition, table, removed)
        else:
            tombstones = _tombstones(table, definition, removed_keys)
        changes[definition.index_partition] = pa.concat_tables(
            [with_op(upserts.select(spec.schema.names).cast(spec.schema), OP_UPSERT), tombstones]
        )
    for definition in table.definitions:
        if definition.index_type == IndexType.PARTITION_STATS:
            touched = sorted({f.partition for f in [*added, *removed]})
            changes[definition.index_partition] = partition_stats_changes(
                table, definition, previous, touched, added_rows, removed, live_after
            )
    return changes


def partition_stats_changes(
    table: LakeTable,
    definition: IndexDefinition,
    previous: Snapshot,
    touched: list[str],
    added_rows: dict[str, pa.Table],
    removed: list[DataFile],
    live_after: list[DataFile],
) -> pa.Table:
    stats_definition = next(d for d in table.definitions if d.index_type == IndexType.COLUMN_STATS)
    stats_spec = table.spec(stats_definition)
    before = previous.index_partition(stats_spec).lookup(pa.array(touched, pa.string()))
    gone = pa.array([f.file_name for f in removed], pa.string())
    kept = before.filter(pc.invert(pc.is_in(before["file_name"], value_set=gone)))
    new = added_rows.get(stats_definition.index_partition, stats_spec.schema.empty_table())
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
