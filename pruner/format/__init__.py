"""The on-disk table format: where files live and how they are named (`layout`), instants and the
timeline of actions on them (`instant`, `timeline`), what each completed instant recorded writing
(`manifest`), the table's definition in `table.json` (`config`), and the canonical encoding and
hashing of record keys and partition paths (`keys`). Everything above — index partitions, indexes,
snapshots, the builder — reads and writes tables through these."""
