"""Write benchmark (issue 2): insert throughput on a table of N rows (default 2,000,000), then a 1%
upsert (10% of the updated keys move partition), and the share of the upsert spent on the record
index (tagging lookups + index log writes). Not a test: it prints and records measurements.

    .venv/bin/python bench/write_throughput.py [--rows 2000000] [--out bench/results/write_throughput.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from builder import LakepruneTable, WriteResult
from builder.session import spark_session

SCHEMA = "id bigint, region string, ts timestamp, amount double, note string"
REGIONS = 8


def generate(spark: SparkSession, rows: int, version: int, stride: int = 1) -> DataFrame:
    """Rows for keys 0, stride, 2*stride, ...; every column derives from the key, so an update of
    a key reproduces its region (and so stays in its partition) unless told otherwise."""
    key = F.col("id") * stride
    return spark.range(rows).select(
        key.alias("id"),
        F.concat(F.lit("r"), (key % REGIONS).cast("string")).alias("region"),
        F.timestamp_seconds(F.lit(1_780_000_000) + key).alias("ts"),
        (key * 0.25 + version).alias("amount"),
        F.concat(F.lit("note-"), key.cast("string")).alias("note"),
    )


def measure(label: str, fn: Callable[[], WriteResult]) -> tuple[WriteResult, float]:
    start = time.perf_counter()
    result: WriteResult = fn()
    seconds = time.perf_counter() - start
    print(f"{label}: {seconds:.1f} s, {result.input_rows / seconds:,.0f} rows/s, phases {result.timings_ms}")
    return result, seconds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "write_throughput.json"
    )
    args = parser.parse_args()

    spark = spark_session()
    spark.conf.set("spark.sql.shuffle.partitions", "8")
    workdir = Path(tempfile.mkdtemp(prefix="lakeprune-bench-"))
    try:
        table = LakepruneTable.create(
            str(workdir / "t"), SCHEMA, record_key="id", partition_by=["region"], spark=spark
        )
        inserted, insert_s = measure("insert", lambda: table.insert(generate(spark, args.rows, 0)))
        updates = max(1, args.rows // 100)
        # Keys spread over the whole key space; every 10th updated key moves to the next region.
        stride = max(1, args.rows // updates)
        stride -= 1 if stride % 2 == 0 and stride > 1 else 0  # odd: keys cover every region
        moved_region = F.concat(F.lit("r"), ((F.col("id") + 1) % REGIONS).cast("string"))
        upsert_df = generate(spark, updates, 1, stride).withColumn(
            "region", F.when(F.col("id") % (10 * stride) == 0, moved_region).otherwise(F.col("region"))
        )
        upserted, upsert_s = measure("upsert 1%", lambda: table.upsert(upsert_df))
        phases = upserted.timings_ms
        index_ms = phases.get("tag", 0.0) + phases.get("record_index", 0.0)
        total_ms = sum(phases.values())
        snapshot = table.snapshot()
        data_bytes = sum(f.size for f in snapshot.files())
        storage = snapshot.table.storage
        index_bytes = {
            spec.name: sum(
                storage.fs.get_file_info(storage.path(p)).size
                for p in snapshot.index_partition(spec).file_paths()
            )
            for spec in snapshot.table.index_partition_specs()
        }
        result = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            "spark_master": spark.sparkContext.master,
            "rows": args.rows,
            "insert_seconds": round(insert_s, 1),
            "insert_rows_per_second": round(args.rows / insert_s),
            "insert_files": inserted.files_added,
            "upsert_rows": updates,
            "upsert_moved": upserted.moved,
            "upsert_seconds": round(upsert_s, 1),
            "upsert_rows_per_second": round(updates / upsert_s),
            "upsert_files_rewritten": upserted.files_removed,
            "upsert_phases_ms": phases,
            "upsert_record_index_ms": round(index_ms, 1),
            "upsert_record_index_share": round(index_ms / total_ms, 3),
            "live_data_bytes": data_bytes,
            "live_index_bytes": index_bytes,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
        print(json.dumps(result, indent=2))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()
