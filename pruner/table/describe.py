"""A table's description for `lakeprune table show` and for API users: definition, latest snapshot,
file and row counts, pending instants and the state of its index partitions."""

from __future__ import annotations

from typing import Any

from pruner.format.timeline import Action
from pruner.index.definitions import IndexState
from pruner.metadata.spec import IndexPartitionSpec
from pruner.table.table import LakeTable


def describe(table: LakeTable) -> dict[str, Any]:
    snapshot = table.snapshot()
    files = snapshot.files()
    config = table.config
    indexes = index_summaries(table)
    return {
        "name": config.name,
        "location": table.storage.uri,
        "format_version": config.format_version,
        "schema": config.schema.to_json(),
        "record_key": list(config.record_key),
        "partition_fields": list(config.partition_fields),
        "partition_history": [e.to_json() for e in config.partition_history],
        "ordering_field": config.ordering_field,
        "properties": config.properties.to_json(),
        "snapshot": snapshot.instant,
        "commits": len(table.timeline.commits()),
        "earliest_retained": table.earliest_retained(),
        "pending_instants": [f"{i.timestamp}.{i.action}.{i.state}" for i in table.timeline.pending()],
        "file_count": len(files),
        "row_count": sum(f.rows for f in files),
        "total_bytes": sum(f.size for f in files),
        "partitions": len({f.partition for f in files}),
        "indexes": indexes,
    }


def index_summaries(table: LakeTable) -> list[dict[str, Any]]:
    """Every index of the table — built-in and defined — with state, coverage and file counts."""
    snapshot = table.snapshot()
    entries: list[tuple[IndexPartitionSpec, str, str, str, str | None, list[str], dict[str, str]]] = [
        (table.files_spec, "files", "files", "ready", snapshot.instant, [], {}),
        (
            table.record_index_spec,
            "record_index",
            "record_index",
            "ready",
            snapshot.instant,
            list(table.config.record_key),
            {},
        ),
    ]
    # A ready index is maintained by every write in the same instant: complete up to the snapshot.
    entries += [
        (
            table.spec(d),
            d.name,
            str(d.index_type),
            str(d.state),
            snapshot.instant if d.state == IndexState.READY else None,
            list(d.columns),
            dict(d.options),
        )
        for d in table.definitions
    ]
    ready_since = {d.name: d.complete_up_to for d in table.definitions}
    summaries = []
    for spec, name, index_type, state, up_to, columns, options in entries:
        view = snapshot.index_partition(spec)
        summaries.append(
            {
                "name": name,
                "type": index_type,
                "partition": spec.name,
                "columns": columns,
                "options": options,
                "state": state,
                "complete_up_to": up_to,
                "ready_since": ready_since.get(name),
                "buckets": spec.num_buckets,
                "base_files": sum(1 for b in view.buckets.values() if b.base),
                "log_files": sum(len(b.logs) for b in view.buckets.values()),
            }
        )
    return summaries


def history(table: LakeTable) -> list[dict[str, Any]]:
    """Completed instants, oldest first, with what each did (commit stats, clean horizon)."""
    entries = []
    for instant in table.timeline.completed():
        content = table.timeline.read(instant)
        entry: dict[str, Any] = {
            "instant": instant.timestamp,
            "action": str(instant.action),
            "operation": content.get("operation"),
            "stats": content.get("stats"),
        }
        if instant.action == Action.CLEAN:
            entry["earliest_retained"] = content.get("earliest_retained")
        entries.append(entry)
    return entries
