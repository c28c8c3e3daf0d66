"""Large IN lists through the planner (issue 41): a dynamic filter of a join arrives as an IN list
of tens of thousands of keys, and each EQUAL / IN step (record index, secondary index, bloom
filters) must either prune for it quickly or see in advance that it cannot pay and skip. Not a test.

Two tables are written once with Spark (kept under `--dir` and reused by later runs):
- `orders`: `--rows` rows (default 300,000) in about `--files` files (default 100), record key
  `o_orderkey`, `o_custkey` drawn from 100,000 customers, column stats, a secondary index and a
  bloom filter on `o_custkey` (like TPC-H's orders adopted with a secondary index on its foreign key);
- `supplier`: 10,000 rows in one file, record key `s_suppkey`, bloom filters on `s_suppkey` and
  `s_name`.

Then, per predicate (integer IN lists packed, as the sidecar decodes the Trino connector's), the
median prune time over `--rounds` warm prunes (the index cache of one process, 512 MiB as the
sidecar's default) and each step's median time from the explain record:
- `o_custkey IN (30,000 keys)`: the secondary index and the bloom filter (every file matches);
- `o_orderkey IN (30,000 keys)`: the record index, column stats and the bloom filter;
- `s_suppkey IN (30,000 keys)`, `s_name IN (30,000 names)`: bloom filters on the one-file table;
- `o_custkey IN (20 keys absent from the table)`: a lookup that does pay (every file pruned).

    .venv/bin/python bench/in_list_prunes.py [--dir DIR] [--rounds 7] [--label after] [--no-guard] [--profile]

`--no-guard` turns the lookup cost guard off (`lookup_min_pruned_share` 0), to time the lookups
themselves.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from support import progress, write_results

from pruner.metadata.cache import IndexCache
from pruner.metadata.index_partition import BucketCache
from pruner.planner.prune import prune
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.tuple_domain import TupleDomain
from pruner.table.table import LakeTable

RESULTS = Path(__file__).parent / "results" / "in_list_prunes.json"
CUSTOMERS = 100_000
SUPPLIERS = 10_000
IN_KEYS = 30_000


def build(root: Path, rows: int, files: int) -> None:
    """Write `orders` and `supplier` under `root` (skipped for a table already there)."""
    from pyspark.sql import functions as F

    from builder import LakepruneTable
    from builder.session import spark_session

    orders, supplier = root / "orders", root / "supplier"
    if orders.exists() and supplier.exists():
        return
    spark = spark_session()
    if not orders.exists():
        progress(f"writing orders: {rows:,} rows in about {files} files")
        schema = "o_orderkey bigint, o_custkey bigint, o_totalprice double, o_comment string"
        table = LakepruneTable.create(
            str(orders),
            schema,
            record_key="o_orderkey",
            spark=spark,
            properties={
                "write.target_file_size_bytes": max(1, rows * 64 // files),
                "write.small_file_limit_bytes": 1,
            },
        )
        table.sql("CREATE INDEX stats ON orders USING column_stats")
        table.sql("CREATE INDEX bf ON orders USING bloom_filters (o_custkey)")
        table.sql("CREATE INDEX by_customer ON orders USING secondary_index (o_custkey)")
        key = F.col("id")
        table.insert(
            spark.range(rows).select(
                key.alias("o_orderkey"),
                (F.abs(F.hash(key)) % CUSTOMERS).cast("bigint").alias("o_custkey"),
                ((key * 31) % 100_000 / 100.0).alias("o_totalprice"),
                F.concat(F.lit("comment "), (key % 9973).cast("string")).alias("o_comment"),
            )
        )
    if not supplier.exists():
        progress(f"writing supplier: {SUPPLIERS:,} rows in one file")
        schema = "s_suppkey bigint, s_name string, s_acctbal double"
        table = LakepruneTable.create(str(supplier), schema, record_key="s_suppkey", spark=spark)
        table.sql("CREATE INDEX stats ON supplier USING column_stats")
        table.sql("CREATE INDEX bf ON supplier USING bloom_filters (s_suppkey, s_name)")
        key = F.col("id")
        table.insert(
            spark.range(SUPPLIERS)
            .coalesce(1)
            .select(
                key.alias("s_suppkey"),
                F.concat(F.lit("Supplier#"), F.lpad(key.cast("string"), 9, "0")).alias("s_name"),
                ((key * 17) % 10_000 / 10.0).alias("s_acctbal"),
            )
        )
    spark.stop()


def predicates(rows: int, rng: random.Random) -> dict[str, tuple[str, Callable[[], TupleDomain]]]:
    """Per name: the table and a predicate (drawn afresh for every round)."""

    def on(column: str, values: Callable[[], list[Any]]) -> Callable[[], TupleDomain]:
        return lambda: TupleDomain.with_domains({column: _in_list(values())})

    return {
        f"o_custkey IN ({IN_KEYS:,})": (
            "orders",
            on("o_custkey", lambda: rng.sample(range(CUSTOMERS), IN_KEYS)),
        ),
        f"o_orderkey IN ({IN_KEYS:,})": (
            "orders",
            on("o_orderkey", lambda: rng.sample(range(rows), IN_KEYS)),
        ),
        f"s_suppkey IN ({IN_KEYS:,})": (
            "supplier",
            on("s_suppkey", lambda: rng.sample(range(3 * SUPPLIERS), IN_KEYS)),
        ),
        f"s_name IN ({IN_KEYS:,})": (
            "supplier",
            on("s_name", lambda: [f"Supplier#{k:09d}" for k in rng.sample(range(3 * SUPPLIERS), IN_KEYS)]),
        ),
        "o_custkey IN (20 absent)": (
            "orders",
            on("o_custkey", lambda: rng.sample(range(CUSTOMERS, 2 * CUSTOMERS), 20)),
        ),
    }


def _in_list(values: list[Any]) -> Domain:
    """An IN list as the sidecar decodes it from gRPC: integers packed (`of_integers`), as the Trino
    connector sends a dynamic filter's keys; other values one by one."""
    if all(type(v) is int for v in values):
        return Domain(SortedRangeSet.of_integers(np.array(values, dtype=np.int64)), False)
    return Domain.multiple_values(values)


def measure(root: Path, rows: int, rounds: int, profile: bool, guard: bool) -> dict[str, Any]:
    rng = random.Random(41)
    cache: BucketCache = IndexCache(512 * 1024**2)  # the sidecar's default
    tables = {name: LakeTable.open(str(root / name), cache) for name in ("orders", "supplier")}
    report: dict[str, Any] = {}
    profiler = cProfile.Profile() if profile else None
    options: dict[str, Any] = {}
    if not guard:
        from pruner.planner.limits import PruneLimits

        options["limits"] = PruneLimits(lookup_min_pruned_share=0.0)
    for name, (table_name, draw) in predicates(rows, rng).items():
        table = tables[table_name]
        prune(table, draw(), **options)  # warm: the index cache, as a sidecar serving this table has it
        totals: list[float] = []
        steps: dict[str, list[float]] = {}
        last = None
        for _ in range(rounds):
            predicate = draw()
            if profiler is not None:
                profiler.enable()
            begin = time.perf_counter()
            last = prune(table, predicate, **options)
            totals.append((time.perf_counter() - begin) * 1000)
            if profiler is not None:
                profiler.disable()
            for step in last.explain:
                steps.setdefault(step.step, []).append(step.millis)
        assert last is not None
        report[name] = {
            "files_total": last.files_total,
            "files_selected": last.files_selected,
            "median_ms": round(statistics.median(totals), 1),
            "max_ms": round(max(totals), 1),
            "steps": {
                step.step: {
                    "median_ms": round(statistics.median(steps[step.step]), 1),
                    "files": f"{step.files_in} -> {step.files_out}",
                    **({"skipped": step.skipped} if step.skipped else {}),
                    **({"fallback": step.fallback} if step.fallback else {}),
                }
                for step in last.explain
                if step.files_in
            },
        }
        progress(f"{name}: {report[name]['median_ms']} ms, {last.files_selected} of {last.files_total} files")
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "lakeprune-in-list-bench")
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--label", default="after", help="the key the run's figures are stored under")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the timed prunes")
    parser.add_argument("--no-guard", action="store_true", help="turn the lookup cost guard off")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    build(args.dir, args.rows, args.files)
    previous: dict[str, Any] = {}
    if RESULTS.exists():
        import json

        previous = json.loads(RESULTS.read_text())
    previous[args.label] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "rounds": args.rounds,
        "guard": not args.no_guard,
        "prunes": measure(args.dir, args.rows, args.rounds, args.profile, not args.no_guard),
    }
    if not args.profile:
        write_results(RESULTS, previous)


if __name__ == "__main__":
    main()
