"""The table of the Trino vs Hive benchmark (`trino_vs_hive.py`): `trips`, its schema and the shape of
its generated rows (record key `trip_id`, partitioned by `city`, `ts` clustered like `trip_id`,
whole seconds), built by Spark with column stats, partition stats and a bloom filter on `note`
(`build_table`, run in a child process so that Spark's JVM exits with it), and the check that every
Parquet file under the table directory is live, so that Hive, which reads them all, sees exactly the
table's rows (`check_layout`)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pruner.table.table import LakeTable

SCHEMA, TABLE = "bench", "trips"
DDL = "trip_id bigint, city string, driver_id int, ts timestamp, fare double, note string"
COLUMNS = ["trip_id", "city", "driver_id", "ts", "fare", "note"]
CITIES = ["ams", "ber", "cdg", "dub", "lis", "mad"]
BASE = datetime(2026, 1, 1, tzinfo=UTC)
TS_STEP_SECONDS = 15  # trip k starts at BASE + 15 k seconds: ts is clustered like trip_id
DRIVERS = 20_000
DEFAULT_RECORD_BYTES = 64  # the writer's estimate of bytes per record before a table's first write


def build_table(location: str, rows: int, files: int) -> None:
    """Create and fill the table (run in a child process: Spark's JVM exits with it)."""
    from pyspark.sql import functions as F

    from builder import LakepruneTable
    from builder.session import spark_session

    spark = spark_session(master="local[2]")
    table = LakepruneTable.create(
        location,
        DDL,
        record_key="trip_id",
        partition_by=["city"],
        spark=spark,
        properties={
            # The first insert sizes files with the writer's 64-byte estimate per record.
            "write.target_file_size_bytes": max(1, DEFAULT_RECORD_BYTES * rows // files),
            "write.small_file_limit_bytes": 1,
        },
    )
    table.sql(f"CREATE INDEX stats ON {TABLE} USING column_stats")
    table.sql(f"CREATE INDEX pstats ON {TABLE} USING partition_stats")
    table.sql(f"CREATE INDEX bf ON {TABLE} USING bloom_filters (note)")
    key = F.col("id")
    df = spark.range(rows).select(
        key.alias("trip_id"),
        F.element_at(F.array(*[F.lit(c) for c in CITIES]), (key % len(CITIES) + 1).cast("int")).alias("city"),
        (F.abs(F.hash(key)) % DRIVERS).cast("int").alias("driver_id"),
        F.timestamp_seconds(F.lit(int(BASE.timestamp())) + key * TS_STEP_SECONDS).alias("ts"),
        F.round((key * 7919 % 10_000) / 100.0 + 2.5, 2).alias("fare"),
        F.when(key % 11 == 0, F.lit(None))
        .otherwise(F.concat(F.lit("note-"), (key * 31 % 1000).cast("string")))
        .alias("note"),
    )
    table.insert(df)
    spark.stop()


def check_layout(location: Path) -> dict[str, Any]:
    """The table's live files, and proof that they are all the Parquet files Hive will list."""
    live = LakeTable.open(str(location)).snapshot().files()
    on_disk = [
        p
        for p in location.rglob("*.parquet")
        if not any(part.startswith((".", "_")) for part in p.relative_to(location).parts)
    ]
    if len(on_disk) != len(live):
        raise SystemExit(f"{len(on_disk)} Parquet files under {location} but {len(live)} live files")
    return {
        "rows": sum(f.rows for f in live),
        "files": len(live),
        "table_bytes": sum(f.size for f in live),
        "partitions": len({f.partition for f in live}),
    }
