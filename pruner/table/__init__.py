"""A table as readers and writers see it: `LakeTable` (storage, `table.json`, timeline and index
definitions, loaded once) and `Snapshot` (the live file set and the index partitions as of one
completed instant), plus the summaries `table show` and `history` print. The on-disk format itself
is `pruner.format`."""
