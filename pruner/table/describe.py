"""A table's description for `lakeprune table show` and for API users: definition, latest snapshot,
file and row counts, pending instants and the state of its index partitions."""

from __future__ import annotations

from typing import Any

from pruner.table.table import LakeTable
from pruner.table.timeline import Action


def describe(table: LakeTable) -> dict[str, Any]:
    snapshot = table.snapshot()
    files = snapshot.files()
    config = table.config
    indexes = []
    for spec in table.partition_specs():
        view = snapshot.partition(spec)
        indexes.append(
            {
                "name": spec.name,
                "type": spec.name,
                "state": "ready",
                "buckets": spec.num_buckets,
                "up_to_instant": snapshot.instant,
                "base_files": sum(1 for b in view.buckets.values() if b.base),
                "log_files": sum(len(b.logs) for b in view.buckets.values()),
            }
        )
    return {
        "name": config.name,
        "location": table.storage.uri,
        "format_version": config.format_version,
        "schema": config.schema.to_json(),
        "record_key": list(config.record_key),
        "partition_fields": list(config.partition_fields),
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
