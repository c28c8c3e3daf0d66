"""The tables of the Trino vs Hive benchmark (`trino_vs_hive.py`): the fact table `trips`, its schema
and the shape of its generated rows (record key `trip_id`, partitioned by `city`, `ts` clustered like
`trip_id`, whole seconds, `driver_id` clustered too: driver d drove a contiguous run of trips), built
by Spark with column stats, partition stats and a bloom filter on `note`; the dimension table
`drivers` (one row per driver, one file) for the star join; and the point-lookup sweep's copies of
`trips` in 100 / 1,000 / 5,000 files (`build_tables`, run in a child process so that Spark's JVM
exits with it). `check_layout` checks that every Parquet file under a table directory is live, so
that Hive, which reads them all, sees exactly the table's rows."""

from __future__ import annotations

from dataclasses import dataclass
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


DIMENSION = "drivers"
DIMENSION_DDL = "driver_id int, name string, home string"


def sweep_table(files: int) -> str:
    return f"{TABLE}_f{files}"


def build_tables(warehouse: str, rows: int, files: int, sweep: list[int], sweep_rows: int) -> None:
    """Create and fill every table (run in a child process: Spark's JVM exits with it)."""
    from builder.session import spark_session

    spark = spark_session(master="local[2]")
    build_table(spark, f"{warehouse}/{TABLE}", rows, files)
    build_dimension(spark, f"{warehouse}/{DIMENSION}")
    for n in sweep:
        build_table(spark, f"{warehouse}/{sweep_table(n)}", sweep_rows, n)
    spark.stop()


@dataclass(frozen=True)
class Dimension:
    """A one-file dimension table: `rows` keys 0.. (record key `key`, cast to `key_type`), a `name`
    of `<label>-<key>` and a category column cycling through `categories`."""

    table: str = DIMENSION
    ddl: str = DIMENSION_DDL
    key: str = "driver_id"
    key_type: str = "int"
    rows: int = DRIVERS
    label: str = "driver"
    category: str = "home"
    categories: tuple[str, ...] = tuple(CITIES)


def build_dimension(spark: Any, location: str, dimension: Dimension = Dimension()) -> None:
    """The dimension (by default `drivers`: one row per driver id of `trips`, `name` `driver-<id>`),
    in one file, with column stats."""
    from pyspark.sql import functions as F

    from builder import LakepruneTable

    d = dimension
    table = LakepruneTable.create(location, d.ddl, record_key=d.key, spark=spark)
    table.sql(f"CREATE INDEX stats ON {d.table} USING column_stats")
    key = F.col("id")
    df = spark.range(d.rows).select(
        key.cast(d.key_type).alias(d.key),
        F.concat(F.lit(f"{d.label}-"), key.cast("string")).alias("name"),
        F.element_at(
            F.array(*[F.lit(c) for c in d.categories]), (key % len(d.categories) + 1).cast("int")
        ).alias(d.category),
    )
    table.insert(df.coalesce(1))


def sized_in_files(rows: int, files: int) -> dict[str, int]:
    """Table properties that make the first insert of `rows` rows write ~`files` files."""
    # The first insert sizes files with the writer's 64-byte estimate per record.
    return {
        "write.target_file_size_bytes": max(1, DEFAULT_RECORD_BYTES * rows // files),
        "write.small_file_limit_bytes": 1,
    }


def build_table(spark: Any, location: str, rows: int, files: int) -> None:
    """One `trips`-shaped table of `rows` rows in ~`files` files."""
    from pyspark.sql import functions as F

    from builder import LakepruneTable

    table = LakepruneTable.create(
        location,
        DDL,
        record_key="trip_id",
        partition_by=["city"],
        spark=spark,
        properties=sized_in_files(rows, files),
    )
    name = location.rsplit("/", 1)[-1]
    table.sql(f"CREATE INDEX stats ON {name} USING column_stats")
    table.sql(f"CREATE INDEX pstats ON {name} USING partition_stats")
    table.sql(f"CREATE INDEX bf ON {name} USING bloom_filters (note)")
    key = F.col("id")
    df = spark.range(rows).select(
        key.alias("trip_id"),
        F.element_at(F.array(*[F.lit(c) for c in CITIES]), (key % len(CITIES) + 1).cast("int")).alias("city"),
        F.floor(key * DRIVERS / rows).cast("int").alias("driver_id"),
        F.timestamp_seconds(F.lit(int(BASE.timestamp())) + key * TS_STEP_SECONDS).alias("ts"),
        F.round((key * 7919 % 10_000) / 100.0 + 2.5, 2).alias("fare"),
        F.when(key % 11 == 0, F.lit(None))
        .otherwise(F.concat(F.lit("note-"), (key * 31 % 1000).cast("string")))
        .alias("note"),
    )
    table.insert(df)


def data_files(location: Path) -> list[Path]:
    """The Parquet files under a table directory outside hidden ones (`.lakeprune/`): all that Hive
    (or any reader of the directory) sees."""
    return [
        p
        for p in location.rglob("*.parquet")
        if not any(part.startswith((".", "_")) for part in p.relative_to(location).parts)
    ]


def check_layout(location: Path) -> dict[str, Any]:
    """The table's live files, and proof that they are all the Parquet files Hive will list."""
    live = LakeTable.open(str(location)).snapshot().files()
    on_disk = data_files(location)
    if len(on_disk) != len(live):
        raise SystemExit(f"{len(on_disk)} Parquet files under {location} but {len(live)} live files")
    return {
        "rows": sum(f.rows for f in live),
        "files": len(live),
        "table_bytes": sum(f.size for f in live),
        "partitions": len({f.partition for f in live}),
    }
