"""Hudi's side of the peers benchmark, run by `peers_hudi.run_job` on the Spark 3.5 venv's
interpreter (pyspark 3.5 and the standard library only: the project's packages are not importable
there). `write` copies lakeprune's `sales` (its Parquet data files, read with Spark, so the rows are
the very same) into a Hudi 1.2 copy-on-write table as a Hudi user would load it: `bulk_insert`,
record key `sale_id`, partitioned by `region`, the input range-partitioned by `sale_id` into one
task per ~`files / regions` so that each file holds a run of sales as lakeprune's do, with the
metadata table, record index, column stats and partition stats enabled on the write, then through
Spark SQL a secondary index on `customer_id`, a bloom filter expression index on it and an
expression index `hour(ts)` on `ts`; and `customers` (one file, no partitions). It prints one JSON
line: the write's and each index's seconds, the table's data files and bytes, and the index
partitions its metadata table holds. `query` times Spark SQL queries on those tables read through
Hudi's data source with data skipping and its indexes enabled (`spark_scan.timed_queries`: median
time, files read, answer). `write` also times a plain Parquet write of the same rows in the same
Spark (after an untimed warm-up write); `upsert` times an upsert of 1% of the keys (every file),
tagged by the record index, every index maintained.

    <venv>/bin/python bench/peers_hudi_job.py write|query|upsert <hudi bundle jar>   < spec.json
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

WARM_UP_ROWS = 20_000  # the untimed first write that warms the JVM
# Table version 8 (Hudi 1.0's) by default, which Trino 476's Hudi connector (hudi-common 1.0.2)
# reads; Hudi 1.2 writes version 9 by default.
TABLE_VERSION = "8"
LOCK_PROVIDER = "org.apache.hudi.client.transaction.lock.InProcessLockProvider"
# Reading with Hudi's indexes: data skipping over the metadata table (record index, secondary and
# expression indexes, column stats).
READ_OPTIONS = {
    "hoodie.metadata.enable": "true",
    "hoodie.enable.data.skipping": "true",
    "hoodie.metadata.record.index.enable": "true",
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.metadata.index.secondary.enable": "true",
    "hoodie.metadata.index.expression.enable": "true",
}
INDEXES = {
    "idx_customer": "CREATE INDEX idx_customer ON sales (customer_id)",
    "idx_bloom_customer": "CREATE INDEX idx_bloom_customer ON sales USING bloom_filters(customer_id) "
    "OPTIONS(expr='identity')",
    "idx_hour_ts": "CREATE INDEX idx_hour_ts ON sales USING column_stats(ts) OPTIONS(expr='hour')",
}


def session(bundle: str) -> Any:
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("lakeprune-peers-hudi")
        .config("spark.jars", bundle)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.memory", "3g")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
        .config("spark.kryo.registrator", "org.apache.spark.HoodieSparkKryoRegistrar")
        .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog")
        # One writer: CREATE INDEX builds the index in this process and asks for a lock provider.
        .config("spark.hoodie.write.lock.provider", LOCK_PROVIDER)
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def write_options(table: str, key: str, partition: str, parallelism: int, version: str) -> dict[str, str]:
    return {
        "hoodie.table.name": table,
        "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
        "hoodie.datasource.write.operation": "bulk_insert",
        "hoodie.datasource.write.recordkey.field": key,
        "hoodie.datasource.write.partitionpath.field": partition,
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.bulkinsert.sort.mode": "NONE",
        "hoodie.bulkinsert.shuffle.parallelism": str(parallelism),
        "hoodie.parquet.outputtimestamptype": "TIMESTAMP_MICROS",
        "hoodie.metadata.enable": "true",
        "hoodie.metadata.record.index.enable": "true",
        "hoodie.metadata.index.column.stats.enable": "true",
        "hoodie.metadata.index.partition.stats.enable": "true",
        "hoodie.write.lock.provider": LOCK_PROVIDER,
        "hoodie.write.table.version": version,
    }


def write(spec: dict[str, Any], bundle: str) -> dict[str, Any]:
    spark = session(bundle)
    source, target = spec["source"], spec["target"]
    version = str(spec.get("table_version", TABLE_VERSION))
    tasks = max(1, int(spec["files"]) // int(spec["regions"]))
    df = spark.read.option("basePath", source).parquet(*spec["source_files"])
    df = df.select("sale_id", "customer_id", "ts", "amount", "note", "region").repartitionByRange(
        tasks, "sale_id"
    )
    df.cache().count()  # the read is not the write's
    scratch = Path(spec["scratch"])
    df.limit(WARM_UP_ROWS).write.partitionBy("region").parquet(str(scratch / "warm"))  # untimed
    began = time.perf_counter()
    df.write.partitionBy("region").parquet(str(scratch / "plain"))
    plain = round(time.perf_counter() - began, 2)
    shutil.rmtree(scratch, ignore_errors=True)
    began = time.perf_counter()
    df.write.format("hudi").options(**write_options("sales", "sale_id", "region", tasks, version)).save(
        target
    )
    seconds = {"bulk_insert": round(time.perf_counter() - began, 2)}
    customers = spark.read.parquet(*spec["dimension_files"]).coalesce(1)
    options = write_options("customers", "customer_id", "", 1, version)
    customers.write.format("hudi").options(**options).save(spec["dimension_target"])
    spark.sql(f"CREATE TABLE sales USING hudi LOCATION '{target}'")  # for CREATE INDEX
    spark.sql(f"SET hoodie.write.lock.provider = {LOCK_PROVIDER}")
    spark.sql(f"SET hoodie.write.table.version = {version}")
    for name, statement in INDEXES.items():
        began = time.perf_counter()
        spark.sql(statement)
        seconds[name] = round(time.perf_counter() - began, 2)
    files = [
        p
        for p in Path(target).rglob("*.parquet")
        if not any(part.startswith(".") for part in p.relative_to(target).parts)
    ]
    metadata = Path(target) / ".hoodie" / "metadata"
    partitions = sorted(p.name for p in metadata.iterdir() if p.is_dir() and not p.name.startswith("."))
    version = spark.version
    spark.stop()
    return {
        "plain_parquet_s": plain,
        "seconds": seconds,
        "files": len(files),
        "table_bytes": sum(p.stat().st_size for p in files),
        "metadata_partitions": partitions,
        "spark": version,
    }


def upsert(spec: dict[str, Any], bundle: str) -> dict[str, Any]:
    """Upsert 1% of the keys of Hudi's `sales` (`spec["keys"]`, every file), `amount` + 1, the rows
    read from the table and cached first; tagged with the record index, every index maintained."""
    from pyspark.sql import functions as F

    spark = session(bundle)
    target = spec["target"]
    table = spark.read.format("hudi").options(**READ_OPTIONS).load(target)
    changed = (
        table.where(spec["keys"])
        .select("sale_id", "customer_id", "ts", "amount", "note", "region")
        .withColumn("amount", (F.col("amount") + 1).cast("decimal(12,2)"))
    )
    count = changed.cache().count()
    options = write_options("sales", "sale_id", "region", 8, spec.get("table_version", TABLE_VERSION)) | {
        "hoodie.datasource.write.operation": "upsert",
        "hoodie.index.type": "RECORD_INDEX",
    }
    began = time.perf_counter()
    changed.write.format("hudi").options(**options).mode("append").save(target)
    seconds = round(time.perf_counter() - began, 2)
    spark.stop()
    return {"upsert_s": seconds, "upsert_rows": count}


def query(spec: dict[str, Any], bundle: str) -> dict[str, Any]:
    from spark_scan import timed_queries

    spark = session(bundle)
    for table, location in spec["tables"].items():
        spark.read.format("hudi").options(**READ_OPTIONS).load(location).createOrReplaceTempView(table)
    result = {"spark": spark.version, "read_options": READ_OPTIONS}
    result["queries"] = timed_queries(spark, spec["queries"], int(spec["repeat"]))
    spark.stop()
    return result


def main() -> None:
    command, bundle = sys.argv[1], sys.argv[2]
    spec = json.loads(sys.stdin.read())
    if command == "write":
        result = write(spec, bundle)
    elif command == "query":
        result = query(spec, bundle)
    elif command == "upsert":
        result = upsert(spec, bundle)
    else:
        raise SystemExit(f"unknown command {command!r}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
