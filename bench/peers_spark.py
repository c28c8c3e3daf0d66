"""The Spark side of the peers benchmark (`peers.py`): the query shapes in Spark SQL over the views
`sales` and `customers` (`spark_queries`: the Trino shapes, timestamps and decimals cast to text so
that two Sparks' answers compare; in the star join only Spark's own runtime filters can reach the
fact table, and the files read count both tables' scans), run on lakeprune's tables through
`format("lakeprune")` in the project's Spark (`lakeprune_spark`, in a child process) and on Hudi's
through its data source with its indexes enabled in the Spark 3.5 of `peers_hudi` (`hudi_spark`);
`compare` checks the answers equal and puts the two side by side: median time and files read per
query."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from peers_data import DIMENSION, FACT, RARE_TERM, ShapeValues
from peers_hudi import HudiEnvironment, run_job
from spark_scan import timed_queries
from support import build_in_child, progress


def spark_queries(rows: int, files: int) -> dict[str, str]:
    v = ShapeValues.of(rows, files)
    return {
        "point lookup": "SELECT sale_id, customer_id, CAST(ts AS STRING), CAST(amount AS STRING), note, "
        f"region FROM {FACT} WHERE sale_id = {v.point}",
        "customer lookup": "SELECT sale_id, CAST(ts AS STRING), CAST(amount AS STRING) "
        f"FROM {FACT} WHERE customer_id = {v.customer}",
        "ts range (0.1%)": f"SELECT sale_id, customer_id FROM {FACT} "
        f"WHERE ts >= TIMESTAMP '{v.low}' AND ts < TIMESTAMP '{v.high}'",
        "hour(ts) = 3": f"SELECT count(*), CAST(sum(amount) AS STRING) FROM {FACT} WHERE hour(ts) = 3",
        "infix LIKE": f"SELECT sale_id, note FROM {FACT} WHERE note LIKE '%{RARE_TERM}%'",
        "star join": "SELECT d.name, count(*), CAST(sum(t.amount) AS STRING), CAST(min(t.ts) AS STRING) "
        f"FROM {FACT} t JOIN {DIMENSION} d ON t.customer_id = d.customer_id "
        f"WHERE d.name IN ({v.star_names()}) GROUP BY d.name",
        "full scan aggregate": "SELECT region, count(*), CAST(sum(amount) AS STRING), "
        f"count(DISTINCT customer_id) FROM {FACT} GROUP BY region",
    }


def _lakeprune_child(warehouse: str, queries: dict[str, str], repeat: int, out: str) -> None:
    from builder.session import spark_session

    spark = spark_session(master="local[2]")
    for table in (FACT, DIMENSION):
        spark.read.format("lakeprune").load(f"{warehouse}/{table}").createOrReplaceTempView(table)
    result = {"spark": spark.version, "queries": timed_queries(spark, queries, repeat)}
    spark.stop()
    Path(out).write_text(json.dumps(result))


def lakeprune_spark(warehouse: Path, queries: dict[str, str], repeat: int, workdir: Path) -> dict[str, Any]:
    """The queries through `spark.read.format("lakeprune")` (a child process: its JVM exits)."""
    out = workdir / "lakeprune_spark.json"
    progress("Spark: lakeprune's queries through format('lakeprune')")
    build_in_child(_lakeprune_child, str(warehouse), queries, repeat, str(out))
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def hudi_spark(
    environment: HudiEnvironment, root: Path, queries: dict[str, str], repeat: int
) -> dict[str, Any]:
    """The queries through Hudi's data source with its indexes enabled (the Spark 3.5 job)."""
    progress("Spark: Hudi's queries with data skipping")
    spec = {"tables": {t: str(root / t) for t in (FACT, DIMENSION)}, "queries": queries, "repeat": repeat}
    return run_job(environment, "query", spec)


def compare(lakeprune: dict[str, Any], hudi: dict[str, Any]) -> dict[str, Any]:
    """Per query: both medians and files read, lakeprune's time over Hudi's; the answers must agree.
    A query that failed on either side is kept with its error and no timing."""
    side_by_side: dict[str, Any] = {}
    for name, mine in lakeprune["queries"].items():
        theirs = hudi["queries"][name]
        if "error" in mine or "error" in theirs:
            side_by_side[name] = {"lakeprune": mine, "hudi": theirs}
            progress(f"Spark {name}: failed: {mine.get('error') or theirs.get('error')}")
            continue
        if mine["answer"] != theirs["answer"]:
            raise SystemExit(
                f"Spark answers differ on {name}:\n  lakeprune {mine['answer'][:5]}\n"
                f"  hudi {theirs['answer'][:5]}"
            )
        side_by_side[name] = {
            "lakeprune": {k: v for k, v in mine.items() if k != "answer"},
            "hudi": {k: v for k, v in theirs.items() if k != "answer"},
            "lakeprune_over_hudi": round(mine["median_s"] / theirs["median_s"], 3),
            "rows_returned": len(mine["answer"]),
        }
        progress(
            f"Spark {name}: lakeprune {mine['median_s'] * 1000:.0f} ms ({mine['files_read']:.0f} files), "
            f"hudi {theirs['median_s'] * 1000:.0f} ms ({theirs['files_read']:.0f} files)"
        )
    return {"spark_lakeprune": lakeprune["spark"], "spark_hudi": hudi["spark"], "queries": side_by_side}
