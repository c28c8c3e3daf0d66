"""The log table of the text index tests through engines (issue 37): request log lines in 40 small
files, a few rare lines (a disk error, a timeout, a city written with a dotted capital I) each in a
handful of files, with a trigram index on `msg`, a words index on `lower(msg)` and a trigram index
on the text after the level, `substring(msg, 7, 40)` (an index over an expression). `holding`
scans the files for the ground truth: which files hold a substring."""

from __future__ import annotations

import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from builder import LakepruneTable
from pruner.predicate.text import simple_lower
from pruner.table.table import LakeTable

SCHEMA = "id bigint, level string, msg string"
ROWS = 2_000
ROWS_PER_FILE = 50
TEXT_INDEXES = [
    "CREATE INDEX msg_grams ON logs USING text (msg)",
    "CREATE INDEX msg_words ON logs USING text (lower(msg)) OPTIONS (tokenizer = 'words')",
    "CREATE INDEX msg_tail ON logs USING text (substring(msg, 7, 40))",
]


def message(i: int) -> str | None:
    if i % 397 == 5:
        return f"ERROR disk full on node-{i % 7} (errno 28)"
    if i % 613 == 11:
        return f"WARN upstream timeout after {i % 90}s"
    if i % 701 == 17:
        return f"INFO user from İstanbul logged in as u{i}"
    if i % 31 == 0:
        return None
    return f"INFO GET /api/v1/items/{i} 200 {i % 250}ms"


def build_logs(spark: SparkSession, location: str) -> str:
    table = LakepruneTable.create(
        location,
        SCHEMA,
        record_key="id",
        # 64 bytes per record are assumed before the first write: 40 files of 50 rows.
        properties={"write.target_file_size_bytes": 64 * ROWS_PER_FILE, "write.small_file_limit_bytes": 1},
        spark=spark,
    )
    for statement in TEXT_INDEXES:
        table.sql(statement)
    rows = [(i, (message(i) or "INFO").split()[0], message(i)) for i in range(ROWS)]
    table.insert(spark.createDataFrame(rows, SCHEMA))
    return location


def holding(location: str, needle: str, lower: bool = False) -> set[str]:
    """The live files of the table (paths) holding `needle` in some `msg` (with `lower`: in `msg`
    lower-cased by Trino's simple case mapping)."""
    table = LakeTable.open(location)
    found = set()
    for f in table.snapshot().files():
        values = pq.read_table(table.storage.path(f.path), filesystem=table.storage.fs, columns=["msg"])
        texts = [v for v in values["msg"].to_pylist() if v is not None]
        if any(needle in (simple_lower(v) if lower else v) for v in texts):
            found.add(f.path)
    return found
