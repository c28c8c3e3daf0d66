"""Spark query timing shared by benches that run in different Sparks (the project's, and the
Spark 3.5 of the peers bench's Hudi job, whose interpreter has only pyspark and the standard
library: this module imports nothing else): `files_read`, the number of files a query's scans read
(Spark's `numFiles` scan metric, adaptive stages included), and `timed_queries`, each of a set of
SQL queries run once to warm up and then `repeat` times, each time planned anew, with its median
time, files read and its answer as sorted text rows (so that answers from two Sparks compare), or
the error it failed with (its Java causes)."""

from __future__ import annotations

import json
import statistics
import time
from typing import Any


def files_read(df: Any) -> int:
    """The number of files the query's scans read (Spark's `numFiles` metric)."""
    plan: Any = df._jdf.queryExecution().executedPlan()
    if plan.nodeName() == "AdaptiveSparkPlan":
        plan = plan.executedPlan()
    stack, total = [plan], 0
    while stack:
        node = stack.pop()
        if node.nodeName().endswith("QueryStage"):  # adaptive execution: the stage's plan
            node = node.plan()
        if node.nodeName().startswith("Scan") and node.metrics().contains("numFiles"):
            total += int(node.metrics().apply("numFiles").value())
        children = node.children()
        stack += [children.apply(i) for i in range(children.size())]
    return total


def timed_queries(spark: Any, queries: dict[str, str], repeat: int) -> dict[str, Any]:
    """Each named SQL query: a warm-up, then `repeat` timed runs (planning included)."""
    results: dict[str, Any] = {}
    for name, sql in queries.items():
        try:
            rows = spark.sql(sql).collect()
        except Exception as error:  # a failing query is a finding: keep its message, go on
            lines = str(error).strip().splitlines()
            causes = [line.strip() for line in lines if line.startswith(("Caused by", ": "))]
            results[name] = {"error": " / ".join(causes or lines[:1])[:2000]}
            continue
        answer = sorted(json.dumps([None if v is None else str(v) for v in row]) for row in rows)
        timings, files = [], []
        for _ in range(repeat):
            begin = time.perf_counter()
            df = spark.sql(sql)
            df.collect()
            timings.append(time.perf_counter() - begin)
            files.append(files_read(df))
        results[name] = {
            "median_s": round(statistics.median(timings), 4),
            "runs_s": [round(t, 4) for t in timings],
            "files_read": statistics.median(files),
            "answer": answer,
        }
    return results
