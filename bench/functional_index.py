"""Functional index benchmark (issue 7): the RFC-63 queries on hourly-ingested event files, pruned
with functional indexes against pruning with column stats on the source column `ts` alone. Two
copies of the same data: one with `column_stats (ts)` only, one with the functional indexes
`hour_of_day` (hour(ts)) and `datestr` (date_format(ts, '%Y-%m-%d')). Not a test.

    .venv/bin/python bench/functional_index.py [--days 3] [--rows-per-hour 40]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from builder import LakepruneTable
from builder.session import spark_session

SCHEMA = "id bigint, org_id string, ts timestamp, day date"
BASE = datetime(2026, 3, 1, tzinfo=UTC)
QUERIES = {
    # RFC-63 use case 1: the time-of-day query. On `ts` alone it is no range: nothing can prune.
    "time_of_day": ("hour(ts) BETWEEN 12 AND 13", "ts IS NOT NULL"),
    # The datestr filter of RFC-63 use case 2 (here without partition evolution): on `ts` alone
    # it is the equivalent range.
    "datestr_equal": (
        "date_format(ts, '%Y-%m-%d') = '2026-03-02'",
        "ts >= TIMESTAMP '2026-03-02 00:00:00' AND ts < TIMESTAMP '2026-03-03 00:00:00'",
    ),
    "one_hour_of_one_day": (
        "datestr = '2026-03-02' AND hour_of_day = 7",
        "ts >= TIMESTAMP '2026-03-02 07:00:00' AND ts < TIMESTAMP '2026-03-02 08:00:00'",
    ),
}


def _table(
    spark: object, location: str, rows_per_hour: int, statements: list[str], rows: list[tuple]
) -> LakepruneTable:
    table = LakepruneTable.create(
        location,
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        properties={"write.target_file_size_bytes": 64 * rows_per_hour, "write.small_file_limit_bytes": 1},
        spark=spark,  # type: ignore[arg-type]
    )
    for statement in statements:
        table.sql(statement)
    table.insert(table.spark.createDataFrame(rows, SCHEMA))
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--days", type=int, default=3)
    parser.add_argument("--rows-per-hour", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--out", type=Path, default=Path("bench/results/functional_index.json"))
    args = parser.parse_args()
    spark = spark_session()
    workdir = Path(tempfile.mkdtemp(prefix="lakeprune-bench-func-"))
    try:
        rows = [
            (
                d * 100_000 + h * 1_000 + i,
                f"org{i % 4}",
                BASE + timedelta(days=d, hours=h, seconds=i * 3600 // args.rows_per_hour),
                (BASE + timedelta(days=d)).date(),
            )
            for d in range(args.days)
            for h in range(24)
            for i in range(args.rows_per_hour)
        ]
        begin = time.perf_counter()
        baseline = _table(
            spark,
            str(workdir / "events_stats"),
            args.rows_per_hour,
            ["CREATE INDEX stats ON events_stats USING column_stats (ts)"],
            rows,
        )
        functional = _table(
            spark,
            str(workdir / "events_func"),
            args.rows_per_hour,
            [
                "CREATE INDEX hour_of_day ON events_func (hour(ts))",
                "CREATE INDEX datestr ON events_func USING column_stats(date_format(ts, '%Y-%m-%d'))",
            ],
            rows,
        )
        build_seconds = time.perf_counter() - begin
        results = {}
        for name, (with_function, on_ts_only) in QUERIES.items():
            entry = {}
            for label, table, where in (
                ("functional_index", functional, with_function),
                ("column_stats_on_ts", baseline, on_ts_only),
            ):
                timings = []
                for _ in range(args.repeat):
                    start = time.perf_counter()
                    result = table.prune(where)
                    timings.append((time.perf_counter() - start) * 1000)
                entry[label] = {
                    "where": where,
                    "files_total": result.files_total,
                    "files_selected": result.files_selected,
                    "median_ms": round(statistics.median(timings), 2),
                }
            results[name] = entry
        report = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            "days": args.days,
            "files": len(functional.snapshot().files()),
            "rows": len(rows),
            "build_seconds": round(build_seconds, 1),
            "queries": results,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
        print(json.dumps(report, indent=2))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
