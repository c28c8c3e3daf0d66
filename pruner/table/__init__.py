"""The lakeprune table format: on-storage layout, table config (`table.json`), the timeline of
instants, record keys and partition paths, and snapshots (the live file set of a completed instant,
read from the `files` index partition)."""
