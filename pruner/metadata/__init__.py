"""Index partition storage (the metadata table): each index partition is hash-bucketed; a bucket is
a sorted Parquet base file plus one log file per commit that touched it. Rows in logs carry an op
(upsert or delete). Readers merge base + logs, last op per key winning; compaction folds logs into a
new base. Every index — `files`, `record_index`, and the indexes of later issues — is a
`IndexPartitionSpec` on top of this one mechanism."""
