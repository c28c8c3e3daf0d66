"""Secondary index benchmark (issue 6, RFC-77). Not a test. Two parts:

1. `lookup`: an index partition of `--entries` (default 10,000,000) `(secondary_key, record key)`
   pairs (1,000,000 distinct values, 10 record keys each), written as sorted, compacted base files
   in `--buckets` buckets with the same code writers use; then lookup latency (median, max) for 1
   value and for 5,000 values through `IndexPartitionView.lookup`, cold (no in-process cache: every
   lookup reads Parquet footers and row groups) and cached (the sidecar's bounded cache of merged
   buckets), and the partition's size.
2. `spark`: a table of `--rows` rows in Spark; build time of a secondary index relative to a plain
   Spark read-and-write of the same data; the cost of a 1% upsert (half of it changing the indexed
   value) with the index versus the same upsert on a twin table without it; index size relative
   to the data.

    .venv/bin/python bench/secondary_index.py [--part lookup|spark|both] [--entries N] [--rows N]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pruner.format.layout import metadata_partition_dir
from pruner.index import secondary
from pruner.metadata.cache import IndexCache
from pruner.metadata.index_partition import IndexPartitionView, write_base
from pruner.metadata.lookup import IndexedRows
from pruner.storage import Storage
from pruner.types import parse_type

RESULTS = Path(__file__).parent / "results" / "secondary_index.json"
INSTANT = "20260101000000000"


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _summary(latencies_ms: list[float], digits: int) -> dict[str, float]:
    return {"median": round(statistics.median(latencies_ms), digits), "max": round(max(latencies_ms), digits)}


def lookup_part(entries: int, buckets: int, rounds: int) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="si-bench-"))
    try:
        storage = Storage.from_uri(str(root))
        spec = secondary.spec("bench", parse_type("string"), buckets)
        distinct = max(1, entries // 10)
        start = time.perf_counter()
        chunk = 2_000_000
        parts: dict[int, list[pa.Table]] = {b: [] for b in range(buckets)}
        for offset in range(0, entries, chunk):
            ids = np.arange(offset, min(entries, offset + chunk))
            values = pc.binary_join_element_wise("v", pc.cast(pa.array(ids % distinct), pa.string()), "")
            rows = pa.table({"secondary_key": values, "key": pc.cast(pa.array(ids), pa.string())})
            of = spec.buckets(rows)
            for b in range(buckets):
                parts[b].append(rows.filter(pa.array(of == b)))
        for b, tables in parts.items():
            write_base(storage, spec, b, INSTANT, pa.concat_tables(tables))
        written_s = time.perf_counter() - start
        cold = IndexPartitionView.load(storage, spec, frozenset({INSTANT}), INSTANT)
        # The sidecar's path: merged buckets kept in the bounded in-process cache between requests.
        cache: IndexCache[IndexedRows] = IndexCache(4 << 30)
        warm = IndexPartitionView.load(storage, spec, frozenset({INSTANT}), INSTANT, cache)
        loaded = time.perf_counter()
        warm.read_all()
        cache_load_s = time.perf_counter() - loaded
        rng = random.Random(7)

        def timed(n: int, view: IndexPartitionView = cold) -> tuple[list[float], int]:
            latencies, found = [], 0
            for _ in range(rounds * 10 if n == 1 else rounds):  # single lookups are cheap: more rounds
                keys = pa.array([f"v{rng.randrange(distinct)}" for _ in range(n)])
                t0 = time.perf_counter()
                found = view.lookup(keys).num_rows
                latencies.append((time.perf_counter() - t0) * 1000)
            return latencies, found

        timed(1)  # warm the OS page cache once
        one, found_one = timed(1)
        many, found_many = timed(5000)
        warm_one, _ = timed(1, warm)
        warm_many, _ = timed(5000, warm)
        return {
            "entries": entries,
            "distinct_values": distinct,
            "buckets": buckets,
            "write_base_files_s": round(written_s, 1),
            "cache_load_s": round(cache_load_s, 1),
            "cached_bytes": cache.stats().bytes,
            "index_bytes": _dir_bytes(root),
            "lookup_1_ms": _summary(one, 3),
            "lookup_1_entries_found": found_one,
            "lookup_5000_ms": _summary(many, 1),
            "lookup_5000_entries_found": found_many,
            "cached_lookup_1_ms": _summary(warm_one, 3),
            "cached_lookup_5000_ms": _summary(warm_many, 1),
            "rounds": {"1 value": rounds * 10, "5000 values": rounds},
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def spark_part(rows: int) -> dict[str, Any]:
    from pyspark.sql import functions as F

    from builder import LakepruneTable
    from builder.session import spark_session
    from pruner.table.table import LakeTable

    spark = spark_session()
    root = Path(tempfile.mkdtemp(prefix="si-bench-spark-"))
    schema = "id bigint, region string, customer string, amount double"
    try:

        def data(n: int, version: int) -> Any:
            return spark.range(n).select(
                F.col("id"),
                F.concat(F.lit("r"), (F.col("id") % 8).cast("string")).alias("region"),
                F.concat(F.lit("c"), ((F.col("id") * 7919 + version) % (n // 10 + 1)).cast("string")).alias(
                    "customer"
                ),
                (F.col("id") / 3.0 + version).alias("amount"),
            )

        tables = {}
        for name in ("plain", "indexed"):
            _progress(f"writing {rows:,} rows into the {name} table")
            tables[name] = LakepruneTable.create(
                str(root / name / "t"), schema, record_key="id", partition_by=["region"], spark=spark
            )
            tables[name].insert(data(rows, 0))
        # A plain Spark read-and-write of the same data, for scale.
        files = [
            str(root / "plain" / "t" / f.path)
            for f in LakeTable.open(str(root / "plain" / "t")).snapshot().files()
        ]
        _progress("plain Spark read + write")
        t0 = time.perf_counter()
        spark.read.parquet(*files).write.mode("overwrite").parquet(str(root / "copy"))
        copy_s = time.perf_counter() - t0
        _progress("CREATE INDEX")
        t0 = time.perf_counter()
        tables["indexed"].sql("CREATE INDEX by_customer ON t (customer)")
        build_s = time.perf_counter() - t0
        # 1% upsert spread over the key space; half of the rows change the indexed value.
        step = 100
        update = data(rows, 0).where(F.col("id") % step == 0)
        update = update.withColumn(
            "customer",
            F.when(F.col("id") % (2 * step) == 0, F.concat(F.col("customer"), F.lit("x"))).otherwise(
                F.col("customer")
            ),
        ).withColumn("amount", F.col("amount") + 1)
        update = update.cache()
        update.count()
        upserts: dict[str, dict[str, Any]] = {}
        for name in ("plain", "indexed"):
            _progress(f"1% upsert into the {name} table")
            t0 = time.perf_counter()
            result = tables[name].upsert(update)
            upserts[name] = {"seconds": round(time.perf_counter() - t0, 1), "phases_ms": result.timings_ms}
        indexed = LakeTable.open(str(root / "indexed" / "t"))
        snapshot = indexed.snapshot()
        data_bytes = sum(f.size for f in snapshot.files())
        index_bytes = _dir_bytes(
            root / "indexed" / "t" / metadata_partition_dir("secondary_index_by_customer")
        )
        entries = (
            snapshot.index_partition(indexed.spec(indexed.definition("by_customer"))).read_all().num_rows
        )
        return {
            "rows": rows,
            "plain_spark_read_write_s": round(copy_s, 1),
            "index_build_s": round(build_s, 1),
            "build_over_read_write": round(build_s / copy_s, 2),
            "upsert_1pct_without_index": upserts["plain"],
            "upsert_1pct_with_index": upserts["indexed"],
            "maintenance_overhead_s": round(upserts["indexed"]["seconds"] - upserts["plain"]["seconds"], 1),
            "index_entries": entries,
            "data_bytes": data_bytes,
            "index_bytes": index_bytes,
            "index_over_data": round(index_bytes / data_bytes, 3),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--part", choices=["lookup", "spark", "both"], default="both")
    parser.add_argument("--entries", type=int, default=10_000_000)
    parser.add_argument("--buckets", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    results: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    parts: dict[str, Callable[[], dict[str, Any]]] = {
        "lookup": lambda: lookup_part(args.entries, args.buckets, args.rounds),
        "spark": lambda: spark_part(args.rows),
    }
    for name, run in parts.items():
        if args.part in (name, "both"):
            started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            results[name] = {
                "measured": started,
                "machine": f"{platform.machine()}, {platform.python_version()}",
                **run(),
            }
            print(json.dumps(results[name], indent=2))
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
