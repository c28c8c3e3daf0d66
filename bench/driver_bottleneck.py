"""Driver-bottleneck benchmark (issue 17): the write path and a secondary-index build with the Spark
driver's memory fixed (default 1 GiB), for one or more versions of the code side by side. Not a
test: it prints and records measurements.

For each row count and each code version (`--code label=path`: the directory put first on
PYTHONPATH of a fresh child process, so that each version runs in its own JVM), the child:

1. writes the generated rows with a plain `df.write.parquet` (the reference);
2. creates a lakeprune table with column stats, bloom filters and a secondary index (whose pairs,
   one per row, are what used to reach the driver) and inserts the same rows;
3. builds a second secondary index over the table now written (`CREATE INDEX`, bootstrap);
4. adopts a Hive-style copy of the rows in place (`table adopt`: every file's keys are read, checked
   for duplicates and written to the record index by the executors);
5. upserts ~1% of the keys of step 2's table, spread so that every file group is rewritten (by
   pyarrow, copy-on-write), then records the table's data and index bytes and the seconds of one
   full pyarrow read of every live file (what the files' encodings cost a scan);
6. `floor`: what Spark itself needs, with no lakeprune code, for the data and the two indexes of
   step 2 that hold one row per input row: the rows generated and dropped (`noop`, the cost of
   the source), the plain write, the rows written partitioned by region, the record index's rows
   (key, partition) and the secondary index's pairs (customer, key), each shuffled by its key and
   sorted within its shuffle partition, as a key-bucketed, sorted index must be, and written
   with `df.write.parquet`. The floor of an indexed write is the partitioned write plus the two
   index writes less their source each (a lower estimate: the source of all columns is
   subtracted from jobs that read two). It tells whether a target for the indexed write over the
   plain write is within reach of any Spark job on this machine.

`--steps` chooses among `insert` (steps 1-3), `adopt` (step 4), `upsert` (step 5, after
`insert`) and `floor` (step 6); `--repeat N` runs each child N
times, the versions taking turns, for failures that come and go (each run is recorded). It reports
each step's seconds, the lakeprune insert over the plain write, the builder's log lines (with
the seconds since the child started), and the driver Python
process's peak resident memory. A child that fails (say, the driver runs out of memory) is recorded
as a failure with the tail of its error output: that is a result too.

    .venv/bin/python bench/driver_bottleneck.py --rows 2000000 20000000 \
        --code before=/work/wt-17base --code after=. [--out bench/results/driver_bottleneck.json]
    .venv/bin/python bench/driver_bottleneck.py --rows 20000000 --steps adopt --repeat 6 --code ...
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results" / "driver_bottleneck.json"
STEPS = ("insert", "adopt", "upsert", "floor")
SCHEMA = "id bigint, region string, customer string, account string, amount double, note string"


def _progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


class _BuilderLog(logging.Handler):
    """The builder's INFO lines (e.g. how long Spark took to write a first insert's files), each
    with the seconds since the child started."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.started = time.perf_counter()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{time.perf_counter() - self.started:7.1f} s {record.getMessage()}")


def child(rows: int, steps: list[str]) -> dict[str, Any]:
    """One code version, one row count, in this process (run with the version on PYTHONPATH)."""
    from pyspark.sql import functions as F

    import builder
    from builder.session import spark_session

    spark = spark_session()
    root = Path(tempfile.mkdtemp(prefix="lakeprune-driver-bench-"))
    key = F.col("id")
    data = spark.range(rows).select(
        key.alias("id"),
        F.concat(F.lit("r"), (key % 8).cast("string")).alias("region"),
        F.concat(F.lit("c"), ((key * 7919) % (rows // 10 + 1)).cast("string")).alias("customer"),
        F.concat(F.lit("a"), ((key * 31) % (rows // 100 + 1)).cast("string")).alias("account"),
        (key * 0.25).alias("amount"),
        F.concat(F.lit("note-"), key.cast("string")).alias("note"),
    )
    out: dict[str, Any] = {"builder_module": builder.__file__, "rows": rows, "steps": steps}
    log = _BuilderLog()
    logging.getLogger("builder").addHandler(log)
    logging.getLogger("builder").setLevel(logging.INFO)
    try:
        if "insert" in steps:
            _insert_steps(spark, data, root, rows, out)
        if "adopt" in steps:
            _adopt_step(spark, data, root, rows, out)
        if "upsert" in steps:
            _upsert_step(data, root, rows, out)
        if "floor" in steps:
            _floor_step(data, root, rows, out)
    finally:
        out["builder_log"] = log.lines
        out["driver_python_peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        shutil.rmtree(root, ignore_errors=True)
        spark.stop()
    return out


def _insert_steps(spark: SparkSession, data: DataFrame, root: Path, rows: int, out: dict[str, Any]) -> None:
    """Steps 1-3: the plain write, the lakeprune insert, a secondary-index build."""
    from builder import LakepruneTable

    _progress(f"plain df.write.parquet of {rows:,} rows")
    t0 = time.perf_counter()
    data.write.parquet(str(root / "plain"))
    out["plain_parquet_write_s"] = round(time.perf_counter() - t0, 1)
    table = LakepruneTable.create(
        str(root / "t"), SCHEMA, record_key="id", partition_by=["region"], spark=spark
    )
    for statement in (
        "CREATE INDEX stats ON t USING column_stats (id, amount)",
        "CREATE INDEX blooms ON t USING bloom_filters (note)",
        "CREATE INDEX by_customer ON t (customer)",
    ):
        table.sql(statement)
    _progress(f"lakeprune insert of {rows:,} rows (record index, column stats, bloom, secondary)")
    t0 = time.perf_counter()
    result = table.insert(data)
    out["lakeprune_insert_s"] = round(time.perf_counter() - t0, 1)
    out["insert_over_plain"] = round(out["lakeprune_insert_s"] / out["plain_parquet_write_s"], 2)
    out["insert_phases_ms"] = result.timings_ms
    out["insert_files"] = result.files_added
    _progress(f"secondary index build over {rows:,} rows")
    t0 = time.perf_counter()
    table.sql("CREATE INDEX by_account ON t (account)")
    out["secondary_build_s"] = round(time.perf_counter() - t0, 1)
    snapshot = table.snapshot()
    out["data_bytes"] = sum(f.size for f in snapshot.files())


def _adopt_step(spark: SparkSession, data: DataFrame, root: Path, rows: int, out: dict[str, Any]) -> None:
    """Step 4: the key, partition and one value column written Hive-style by Spark (16 files), then
    adopted in place."""
    from builder.adopt import adopt_table

    directory = root / "adopt"
    data.select("id", "region", "amount").write.partitionBy("region").parquet(str(directory))
    _progress(f"adopt of {rows:,} rows in place")
    t0 = time.perf_counter()
    result = adopt_table(spark, str(directory), "id", ["region"])
    out["adopt_s"] = round(time.perf_counter() - t0, 1)
    out["adopt_files"] = result.files


def _upsert_step(data: DataFrame, root: Path, rows: int, out: dict[str, Any]) -> None:
    """Step 5: every 101st key upserted (a new amount) into the table of step 2 (an odd stride: every
    region, so every file group is rewritten); then data and index bytes, and one full read of
    every live file."""
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    from builder import LakepruneTable

    table = LakepruneTable(str(root / "t"), data.sparkSession)
    updates = data.where(F.col("id") % 101 == 0).withColumn("amount", F.col("amount") + 1)
    _progress(f"lakeprune upsert of {rows // 101:,} rows (every file group rewritten)")
    t0 = time.perf_counter()
    result = table.upsert(updates)
    out["upsert_s"] = round(time.perf_counter() - t0, 1)
    out["upsert_phases_ms"] = result.timings_ms
    out["upsert_files_rewritten"] = result.files_removed
    snapshot = table.snapshot()
    storage = snapshot.table.storage
    out["upserted_data_bytes"] = sum(f.size for f in snapshot.files())
    out["upserted_index_bytes"] = {
        spec.name: sum(
            storage.fs.get_file_info(storage.path(path)).size
            for path in snapshot.index_partition(spec).file_paths()
        )
        for spec in snapshot.table.index_partition_specs()
    }
    _progress("full read of every live file")
    t0 = time.perf_counter()
    read = sum(pq.read_table(storage.path(f.path)).num_rows for f in snapshot.files())
    out["full_read_s"] = round(time.perf_counter() - t0, 2)
    assert read == rows, f"read {read} rows of {rows}"


def _floor_step(data: DataFrame, root: Path, rows: int, out: dict[str, Any]) -> None:
    """Step 6: Spark alone, no lakeprune code: the source, the plain and partitioned writes, and the
    record and secondary indexes' rows shuffled by key, sorted and written. Two passes: the first
    warms the JVM (it is kept as `floor_warmup`), the second gives the figures."""
    from pyspark.sql import functions as F

    key = F.col("id").cast("string").alias("key")

    def jobs(directory: Path) -> dict[str, Callable[[], object]]:
        return {
            "source_noop_s": lambda: data.write.format("noop").mode("overwrite").save(),
            "plain_write_s": lambda: data.write.parquet(str(directory / "plain")),
            "partitioned_write_s": lambda: data.write.partitionBy("region").parquet(str(directory / "part")),
            "record_index_rows_s": lambda: (
                data.select(key, F.col("region").alias("partition"))
                .repartition("key")
                .sortWithinPartitions("key")
                .write.parquet(str(directory / "record-index"))
            ),
            "secondary_pairs_s": lambda: (
                data.select("customer", key)
                .repartition("customer")
                .sortWithinPartitions("customer", "key")
                .write.parquet(str(directory / "secondary"))
            ),
        }

    for label in ("floor_warmup", "floor"):
        floor: dict[str, float] = {}
        for name, job in jobs(root / label).items():
            _progress(f"{label}: {name.removesuffix('_s')} of {rows:,} rows")
            t0 = time.perf_counter()
            job()
            floor[name] = round(time.perf_counter() - t0, 1)
        index_jobs = ("record_index_rows_s", "secondary_pairs_s")
        indexes = sum(max(0.0, floor[name] - floor["source_noop_s"]) for name in index_jobs)
        floor["indexed_write_floor_s"] = round(floor["partitioned_write_s"] + indexes, 1)
        floor["floor_over_plain"] = round(floor["indexed_write_floor_s"] / floor["plain_write_s"], 2)
        out[label] = floor


def _commit_of(path: Path) -> str:
    """The version's commit, with `-dirty` if its code differs from it (results files aside)."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True, check=False)
        return done.stdout.strip()

    commit = git("rev-parse", "--short=7", "HEAD") or "unknown"
    changed = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)bench/results")
    return f"{commit}-dirty" if changed else commit


def _is_error(line: str) -> bool:
    return ("Error" in line or "Exception" in line) and not line.lstrip().startswith("at ")


def run_child(label: str, path: Path, rows: int, memory: str, steps: list[str]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(path), "LAKEPRUNE_SPARK_DRIVER_MEMORY": memory}
    commit = _commit_of(path)
    _progress(f"{label} ({path}, {commit}): {rows:,} rows, driver memory {memory}")
    load_before = _load()
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", "--rows", str(rows), "--steps", *steps],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=str(path),
    )
    record: dict[str, Any] = {
        "code": label,
        "commit": commit,
        "load_before": load_before,
        "load_after": _load(),
        "wall_s": round(time.perf_counter() - t0, 1),
    }
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode == 0 and lines:
        record |= json.loads(lines[-1])
    else:
        record["failed"] = True
        record["exit_code"] = done.returncode
        lines = done.stderr.strip().splitlines()
        record["last_step"] = next((line for line in reversed(lines) if line.startswith("[")), None)
        record["errors"] = list(dict.fromkeys(line.strip() for line in lines if _is_error(line)))[:8]
    _progress(json.dumps(record))
    return record


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, nargs="+", default=[2_000_000, 20_000_000])
    parser.add_argument("--code", action="append", default=[], help="label=path (repeatable)")
    parser.add_argument("--driver-memory", default="1g")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--steps", nargs="+", choices=STEPS, default=list(STEPS))
    parser.add_argument("--repeat", type=int, default=1, help="runs of each child")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.rows[0], args.steps)))
        return
    versions = [item.split("=", 1) for item in args.code] or [["current", str(REPO)]]
    results: dict[str, Any] = json.loads(args.out.read_text()) if args.out.exists() else {}
    for rows in args.rows:
        for run, (version, path) in itertools.product(range(1, args.repeat + 1), versions):
            label = f"{version}-run{run}" if args.repeat > 1 else version
            entry = run_child(label, Path(path).resolve(), rows, args.driver_memory, args.steps)
            entry["measured"] = datetime.now(UTC).isoformat(timespec="seconds")
            entry["conditions"] = (
                f"local[*], {os.cpu_count()} cores shared with other engineers' jobs, "
                f"driver memory {args.driver_memory}"
            )
            results.setdefault(str(rows), {})[label] = entry
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
