"""How the builder's jobs keep the intermediate results they read more than once: a write's
deduplicated, tagged and planned rows and its rewrite results, an index build's computed chunks,
adopt's record keys and duplicates. Such a result is as large as the data, so it is persisted on
the executors' local disks (`DISK_ONLY`), never in their heaps. With `MEMORY_AND_DISK`, Spark's
columnar cache kept these results in the JVM heap beside the jobs' execution memory and a `local[*]`
session with a 1 GiB driver ran out of heap writing 8M rows, although that level may spill
(bench/README.md, "No driver bottleneck"); the disk costs one serialization of each result, small
next to the shuffles these jobs run anyway."""

from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import DataFrame

INTERMEDIATE_LEVEL = StorageLevel.DISK_ONLY


def persist_intermediate(df: DataFrame) -> DataFrame:
    """`df` persisted where the builder keeps intermediate results (the caller unpersists it)."""
    return df.persist(INTERMEDIATE_LEVEL)
