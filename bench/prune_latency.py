"""Prune benchmark (issue 3): a table of at least 2,000 files with column stats on 12 columns,
partition stats and bloom filters on two columns; prune latency (median, p99) over many random
predicates of several shapes, prune time of IN lists of 5,000 and 100,000 values, and index size
as a share of data size. Not a test.

    .venv/bin/python bench/prune_latency.py [--files 2000] [--predicates 600]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import tempfile
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from prune_shapes import REGIONS, predicate_shapes  # the predicates every prune benchmark times
from pyspark.sql import functions as F

from builder import LakepruneTable
from builder.session import spark_session
from pruner.planner.prune import prune
from pruner.predicate.domain import Domain
from pruner.predicate.tuple_domain import TupleDomain
from pruner.table.table import LakeTable

SCHEMA = (
    "id bigint, region string, seq bigint, customer bigint, sku string, qty int, price double, "
    "discount decimal(10,2), status string, day date, ts timestamp, flag boolean"
)
ROWS_PER_FILE = 100


def time_large_in_lists(location: str, rows: int, rng: random.Random, rounds: int = 5) -> dict[str, Any]:
    """Median prune time of IN lists of 5,000 and 100,000 random values on the record key (record
    index + column stats) and on an unclustered column (column stats + bloom filter)."""
    timings: dict[str, Any] = {}
    for column in ("id", "customer"):
        for size in (5_000, 100_000):
            samples = []
            for _ in range(rounds):
                wanted = Domain.multiple_values(rng.sample(range(rows), size))
                begin = time.perf_counter()
                result = prune(LakeTable.open(location), TupleDomain.with_domains({column: wanted}))
                samples.append(((time.perf_counter() - begin) * 1000, result.files_selected))
            timings[f"{column} IN ({size:,})"] = {
                "median_ms": round(statistics.median(ms for ms, _ in samples), 1),
                "max_ms": round(max(ms for ms, _ in samples), 1),
                "median_files_selected": statistics.median(n for _, n in samples),
                "rounds": rounds,
            }
    return timings


def build(location: str, files: int) -> LakepruneTable:
    spark = spark_session()
    rows = files * ROWS_PER_FILE
    table = LakepruneTable.create(
        location,
        SCHEMA,
        record_key="id",
        partition_by=["region"],
        spark=spark,
        properties={"write.target_file_size_bytes": ROWS_PER_FILE * 64, "write.small_file_limit_bytes": 1},
    )
    table.sql("CREATE INDEX stats ON t USING column_stats")
    table.sql("CREATE INDEX pstats ON t USING partition_stats")
    table.sql("CREATE INDEX bf ON t USING bloom_filters (sku, customer)")
    key = F.col("id")
    df = spark.range(rows).select(
        key.alias("id"),
        F.concat(F.lit("r"), (key % REGIONS).cast("string")).alias("region"),
        key.alias("seq"),
        (F.hash(key) % 50_000).cast("bigint").alias("customer"),
        F.concat(F.lit("sku-"), ((key * 7919) % 1_000_003).cast("string")).alias("sku"),
        (key % 500).cast("int").alias("qty"),
        ((key * 31) % 10_000 / 100.0).alias("price"),
        ((key % 300) / 100).cast("decimal(10,2)").alias("discount"),
        F.element_at(
            F.array(*[F.lit(s) for s in ("new", "paid", "shipped", "returned")]), (key % 4 + 1).cast("int")
        ).alias("status"),
        F.date_add(F.lit(date(2026, 1, 1)), (key % 365).cast("int")).alias("day"),
        F.timestamp_seconds(F.lit(int(datetime(2026, 1, 1, tzinfo=UTC).timestamp())) + key * 60).alias("ts"),
        (key % 2 == 0).alias("flag"),
    )
    table.insert(df)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--predicates", type=int, default=700)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "prune_latency.json")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="lakeprune-bench-"))
    try:
        started = time.perf_counter()
        build(str(workdir / "t"), args.files)
        build_seconds = time.perf_counter() - started
        snapshot = LakeTable.open(str(workdir / "t")).snapshot()
        files = snapshot.files()
        shapes = predicate_shapes(sum(f.rows for f in files))
        rng = random.Random(7)
        prune(snapshot.table, TupleDomain.all(), snapshot=snapshot.instant)  # warm the page cache and imports
        per_shape: dict[str, list[tuple[float, int]]] = {name: [] for name in shapes}
        for i in range(args.predicates):
            name = list(shapes)[i % len(shapes)]
            predicate = shapes[name](rng)
            begin = time.perf_counter()
            result = prune(LakeTable.open(str(workdir / "t")), predicate)
            per_shape[name].append(((time.perf_counter() - begin) * 1000, result.files_selected))
        all_ms = sorted(ms for samples in per_shape.values() for ms, _ in samples)
        large_in_lists = time_large_in_lists(str(workdir / "t"), sum(f.rows for f in files), rng)
        storage = snapshot.table.storage
        index_bytes = {
            spec.name: sum(
                storage.fs.get_file_info(storage.path(p)).size
                for p in snapshot.index_partition(spec).file_paths()
            )
            for spec in snapshot.table.index_partition_specs()
        }
        data_bytes = sum(f.size for f in files)
        report: dict[str, Any] = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            "files": len(files),
            "rows": sum(f.rows for f in files),
            "build_seconds": round(build_seconds, 1),
            "predicates": len(all_ms),
            "median_ms": round(statistics.median(all_ms), 1),
            "p99_ms": round(all_ms[int(len(all_ms) * 0.99) - 1], 1),
            "by_shape": {
                name: {
                    "median_ms": round(statistics.median(ms for ms, _ in s), 1),
                    "p99_ms": round(sorted(ms for ms, _ in s)[int(len(s) * 0.99) - 1], 1),
                    "median_files_selected": statistics.median(n for _, n in s),
                }
                for name, s in per_shape.items()
            },
            "large_in_lists": large_in_lists,
            "data_bytes": data_bytes,
            "index_bytes": index_bytes,
            "index_share_of_data": round(sum(index_bytes.values()) / data_bytes, 3),
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
        print(json.dumps(report, indent=2))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
