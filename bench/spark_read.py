"""Pruned Spark reads benchmark (issue 18): one table of many small files (default 2,000), read by
Spark through `spark.read.format("lakeprune")` and through `spark.read.parquet(dir)` with the same
filter, side by side in one run: a key lookup (`id = ...`, record index), a functional predicate
(`hour(ts) = 12`, functional index) and a full scan. Each repetition builds its DataFrame anew, so
the time includes planning (the prune, or Spark's listing of the directory) and the read; the
medians of `--repeat` runs are reported, with the number of files Spark read (its scan metric) and
a check that both sides return the same answer. Not a test.

    .venv/bin/python bench/spark_read.py [--files 2000] [--rows-per-file 20] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

sys.path.insert(0, str(Path(__file__).resolve().parent))

from spark_scan import files_read
from support import progress, write_results

from builder import LakepruneTable
from builder.session import spark_session

SCHEMA = "id bigint, name string, score double, ts timestamp"
BASE = datetime(2026, 3, 1, tzinfo=UTC)
QUERIES = {
    "key_lookup": "id = 12345",
    "hour_of_day": "hour(ts) = 12",
    "full_scan": None,
}


def _query(df: DataFrame, where: str | None) -> DataFrame:
    filtered = df.where(where) if where is not None else df
    return filtered.agg(F.count(F.lit(1)).alias("rows"), F.sum("score").alias("score"))


def _measure(make: Callable[[], DataFrame], where: str | None, repeat: int) -> dict[str, Any]:
    timings, answer, files = [], None, 0
    for _ in range(repeat):
        start = time.perf_counter()
        df = _query(make(), where)
        rows = df.collect()
        timings.append(time.perf_counter() - start)
        answer, files = rows[0].asDict(), files_read(df)
    return {
        "median_s": round(statistics.median(timings), 3),
        "min_s": round(min(timings), 3),
        "files_read": files,
        "answer": answer,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--rows-per-file", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("bench/results/spark_read.json"))
    args = parser.parse_args()
    spark: SparkSession = spark_session()
    workdir = Path(tempfile.mkdtemp(prefix="lakeprune-bench-spark-read-"))
    try:
        count = args.files * args.rows_per_file
        rows = [
            (key, f"n{key % 97}", float(key % 1000) / 10, BASE + timedelta(seconds=key * 86_400 // count))
            for key in range(count)
        ]
        progress(f"writing {count:,} rows in files of {args.rows_per_file} rows")
        begin = time.perf_counter()
        table = LakepruneTable.create(
            str(workdir / "events"),
            SCHEMA,
            record_key="id",
            properties={
                "write.target_file_size_bytes": 64 * args.rows_per_file,
                "write.small_file_limit_bytes": 1,
            },
            spark=spark,
        )
        table.sql("CREATE INDEX hour_of_day ON events (hour(ts))")
        table.insert(spark.createDataFrame(rows, SCHEMA), sort_by=["ts"])
        build_seconds = time.perf_counter() - begin
        files = len(table.snapshot().files())
        progress(f"{files} files in {build_seconds:.0f} s")
        location = table.location
        results = {}
        for name, where in QUERIES.items():
            progress(f"{name}: {where or 'no filter'}")
            lakeprune = _measure(lambda: spark.read.format("lakeprune").load(location), where, args.repeat)
            parquet = _measure(lambda: spark.read.parquet(location), where, args.repeat)
            if lakeprune["answer"] != parquet["answer"]:
                raise SystemExit(f"{name}: different answers {lakeprune['answer']} vs {parquet['answer']}")
            results[name] = {
                "where": where,
                "lakeprune": lakeprune,
                "parquet_dir": parquet,
                "ratio_parquet_over_lakeprune": round(parquet["median_s"] / lakeprune["median_s"], 2),
            }
        write_results(
            args.out,
            {
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
                f"Python {platform.python_version()}, shared with another engineer's work",
                "spark_master": spark.sparkContext.master,
                "files": files,
                "rows": count,
                "repeat": args.repeat,
                "build_seconds": round(build_seconds, 1),
                "queries": results,
            },
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
