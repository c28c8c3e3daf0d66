"""How the builder's jobs keep the intermediate results they read more than once: a write's
annotated, deduplicated and tagged rows and its rewrite results, an index build's computed chunks,
adopt's record keys. Such a result is as large as the data, so it is persisted on
the executors' local disks (`DISK_ONLY`), never in their heaps. With `MEMORY_AND_DISK`, Spark's
columnar cache kept these results in the JVM heap beside the jobs' execution memory and a `local[*]`
session with a 1 GiB driver ran out of heap writing 8M rows, although that level may spill
(bench/notes/driver_bottleneck.md, "No driver bottleneck"); the disk costs one serialization of each
result, small next to the shuffles these jobs run anyway. The cache is not compressed: each result
is written once and read once or twice, and compressing its columns cost more time than writing the
bytes it saved (persisting a write's annotated input took 8.1 s compressed and 4.7 s uncompressed at
2M rows; bench/notes/driver_bottleneck.md). Index chunks (`builder.index_logs`: Arrow IPC blobs of
up to 1 MiB) are kept one per cached batch: the cache builds each batch in the heap before writing
it (at the default of 10,000 rows one batch would hold all of a task's chunks at once), and the Java
serializer that writes it to disk keeps its last 100 objects (`spark.serializer.objectStreamReset`),
so a task's heap holds at most ~100 chunks. Spark reads both cache settings when a DataFrame is
persisted; they are set for that call only, and the session keeps its own."""

from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import DataFrame

INTERMEDIATE_LEVEL = StorageLevel.DISK_ONLY
CACHE_COMPRESSED = "spark.sql.inMemoryColumnarStorage.compressed"
CACHE_BATCH_ROWS = "spark.sql.inMemoryColumnarStorage.batchSize"


def persist_intermediate(df: DataFrame) -> DataFrame:
    """`df` persisted where the builder keeps intermediate results (the caller unpersists it)."""
    return _persist(df, {CACHE_COMPRESSED: "false"})


def persist_chunks(df: DataFrame) -> DataFrame:
    """A DataFrame of index chunks persisted as `persist_intermediate` does, one chunk per batch."""
    return _persist(df, {CACHE_COMPRESSED: "false", CACHE_BATCH_ROWS: "1"})


def _persist(df: DataFrame, settings: dict[str, str]) -> DataFrame:
    conf = df.sparkSession.conf
    previous = {key: conf.get(key, None) for key in settings}
    for key, value in settings.items():
        conf.set(key, value)
    try:
        return df.persist(INTERMEDIATE_LEVEL)
    finally:
        for key, own in previous.items():
            if own is None:
                conf.unset(key)
            else:
                conf.set(key, own)
