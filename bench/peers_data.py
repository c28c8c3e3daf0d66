"""The data of the peers benchmark (`peers.py`), as lakeprune writes it: the fact table `sales`
(`sale_id bigint` record key, `customer_id bigint` high-cardinality and spread over every file,
`ts timestamp` in whole milliseconds, clustered like `sale_id`, `amount decimal(12,2)`, `note string` with a
rare term in a handful of rows, partitioned by `region`, 4 values) and the dimension `customers`
(one row per customer, one file), built by Spark in a child process (`build_tables`, so that the
JVM is gone before anything is timed) with every index lakeprune offers for the benchmark's
shapes: the record index, column and partition stats, a bloom filter and a secondary index on
`customer_id`, a functional index on `hour(ts)` and a trigram text index on `note`, all defined on
the empty table so that the one insert maintains them. Also the shape of the rows that every other
system copies (`step_millis`, `customer_count`, `RARE_TERM`), and the constants of the query
shapes over it (`ShapeValues`)."""

from __future__ import annotations

import json
import math
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from trino_vs_hive_table import BASE, Dimension, build_dimension, sized_in_files

SCHEMA, FACT, DIMENSION = "bench", "sales", "customers"
FACT_DDL = (
    "sale_id bigint, customer_id bigint, ts timestamp, amount decimal(12,2), note string, region string"
)
DIMENSION_DDL = "customer_id bigint, name string, segment string"
REGIONS = ["apac", "emea", "latam", "na"]
SEGMENTS = ("consumer", "corporate", "home office", "small business", "government")
CHANNELS = ["web", "store", "phone", "partner", "app", "kiosk", "mail"]
RARE_TERM = "chargeback"  # in ~5 rows, each in another file: the infix LIKE's term
RARE_ROWS = 5
CUSTOMER_STRIDE = 7919  # customer_id = sale_id * stride % customers: every customer in many files
FILE_SPAN_SECONDS = 7_200  # the time one file's rows span (~): a few hours, so hour(ts) can prune
WARM_UP_ROWS = 20_000  # the untimed first write that warms Spark's JVM and Python workers
UPSERT_KEYS = "sale_id % 100 = 37"  # 1% of the keys, in every file
INDEXES = [
    "CREATE INDEX stats ON {t} USING column_stats",
    "CREATE INDEX pstats ON {t} USING partition_stats",
    "CREATE INDEX bf ON {t} USING bloom_filters (customer_id)",
    "CREATE INDEX idx_customer ON {t} USING secondary_index (customer_id)",
    "CREATE INDEX hour_ts ON {t} USING value_list (hour(ts))",
    "CREATE INDEX note_text ON {t} USING text (note)",
]


def customer_count(rows: int) -> int:
    """Customers of a `rows`-row table (~20 sales each), prime to the stride."""
    count = max(100, rows // 20)
    while math.gcd(count, CUSTOMER_STRIDE) != 1:
        count += 1
    return count


def step_millis(rows: int, files: int) -> int:
    """Milliseconds between consecutive sales, so that one file (~rows/files rows of one region:
    every `len(REGIONS)`-th sale of a run of sales) spans a few hours."""
    return max(1, round(1000 * FILE_SPAN_SECONDS * files / max(1, rows * len(REGIONS))))


@dataclass(frozen=True)
class ShapeValues:
    """The constants of the benchmark's query shapes over a `rows`-row table in ~`files` files, the
    same whatever engine runs them: the key looked up, the customer looked up, the bounds of the
    0.1% range of `ts` (UTC text) and the star join's two customers."""

    point: int
    customer: int
    low: str
    high: str
    stars: tuple[int, int]

    @classmethod
    def of(cls, rows: int, files: int) -> ShapeValues:
        customers = customer_count(rows)
        step = timedelta(milliseconds=step_millis(rows, files))
        low = BASE + step * (rows // 3)
        high = low + step * max(1, rows // 1000)  # 0.1% of the sales
        stamp = "%Y-%m-%d %H:%M:%S.%f"
        return cls(
            point=rows * 3 // 5 + 123,
            customer=customers * 2 // 3 + 11,
            low=f"{low:{stamp}}",
            high=f"{high:{stamp}}",
            stars=(customers // 7, customers * 5 // 9),
        )

    def star_names(self) -> str:
        """The star join's customers as a SQL list of their names (the dimension's `name`)."""
        return ", ".join(f"'customer-{c}'" for c in self.stars)


def customers(rows: int) -> Dimension:
    """The dimension `customers` of a `rows`-row `sales`: one row per customer."""
    return Dimension(
        DIMENSION,
        DIMENSION_DDL,
        "customer_id",
        "bigint",
        customer_count(rows),
        "customer",
        "segment",
        SEGMENTS,
    )


def build_tables(warehouse: str, rows: int, files: int, timings: str) -> None:
    """Create and fill `sales` and `customers` under `warehouse` (run in a child process); the
    insert's seconds and those of a plain Parquet write of the same rows in the same Spark (after
    an untimed warm-up write) go to the JSON file `timings`."""
    from builder.session import spark_session

    spark = spark_session(master="local[2]")
    scratch = Path(timings).with_name("plain_parquet")
    fact_rows(spark, min(rows, WARM_UP_ROWS), files).write.partitionBy("region").parquet(
        str(scratch / "warm")
    )
    began = time.perf_counter()
    fact_rows(spark, rows, files).write.partitionBy("region").parquet(str(scratch / "plain"))
    plain = time.perf_counter() - began
    shutil.rmtree(scratch, ignore_errors=True)
    began = time.perf_counter()
    build_fact(spark, f"{warehouse}/{FACT}", rows, files)
    insert = time.perf_counter() - began
    build_dimension(spark, f"{warehouse}/{DIMENSION}", customers(rows))
    spark.stop()
    Path(timings).write_text(json.dumps({"plain_parquet_s": round(plain, 2), "insert_s": round(insert, 2)}))


def upsert_share(timings: str, location: str) -> None:
    """Upsert `UPSERT_SHARE` of the keys of the table at `location` (every 100th sale, so every
    file), each with `amount` + 1, the rows read from the table and cached before the clock starts;
    its seconds go to the JSON file `timings` (a child process)."""
    from pyspark.sql import functions as F

    from builder import LakepruneTable
    from builder.session import spark_session

    spark = spark_session(master="local[2]")
    table = LakepruneTable(location, spark)
    changed = table.read(where=UPSERT_KEYS).withColumn("amount", (F.col("amount") + 1).cast("decimal(12,2)"))
    count = changed.cache().count()
    began = time.perf_counter()
    table.upsert(changed)
    seconds = time.perf_counter() - began
    spark.stop()
    Path(timings).write_text(json.dumps({"upsert_s": round(seconds, 2), "upsert_rows": count}))


def fact_rows(spark: Any, rows: int, files: int) -> Any:
    """The fact table's rows as a DataFrame (columns in `FACT_DDL` order)."""
    from pyspark.sql import functions as F

    key = F.col("id")
    customers = customer_count(rows)
    rare_every = max(1, rows // RARE_ROWS)
    channel = F.element_at(F.array(*[F.lit(c) for c in CHANNELS]), (key % len(CHANNELS) + 1).cast("int"))
    note = F.concat_ws(
        " ",
        F.lit("order"),
        F.lower(F.hex(key * 2_654_435_761 % 4_294_967_296)),
        F.lit("via"),
        channel,
        F.concat(F.lit("sku-"), (key * 131 % 50_000).cast("string")),
        F.when(key % rare_every == rare_every // 2, F.lit(RARE_TERM)),
    )
    return spark.range(rows).select(
        key.alias("sale_id"),
        (key * CUSTOMER_STRIDE % customers).alias("customer_id"),
        F.timestamp_millis(F.lit(int(BASE.timestamp()) * 1000) + key * step_millis(rows, files)).alias("ts"),
        ((key * 37 % 100_000 + 100).cast("decimal(12,0)") / 100).cast("decimal(12,2)").alias("amount"),
        note.alias("note"),
        F.element_at(F.array(*[F.lit(r) for r in REGIONS]), (key % len(REGIONS) + 1).cast("int")).alias(
            "region"
        ),
    )


def build_fact(spark: Any, location: str, rows: int, files: int, indexes: Sequence[str] = INDEXES) -> None:
    """`sales` with every index of `indexes` (default: all of `INDEXES`), defined before its one
    insert."""
    from builder import LakepruneTable

    table = LakepruneTable.create(
        location,
        FACT_DDL,
        record_key="sale_id",
        partition_by=["region"],
        spark=spark,
        properties=sized_in_files(rows, files),
    )
    for statement in indexes:
        table.sql(statement.format(t=FACT))
    table.insert(fact_rows(spark, rows, files))
