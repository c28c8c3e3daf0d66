"""The point-lookup sweep of the Trino vs Hive benchmark (`trino_vs_hive.py`): the same record-key
lookup over copies of `trips` in ~100, ~1,000 and ~5,000 files (same rows), on the three catalogs,
after checking that they agree on it. Lakeprune's native catalog should stay flat (the sidecar's
record index hands Trino one split whatever the file count) while Hive grows (it lists, schedules
and opens the footer of every file). Imported by `trino_vs_hive.py`, which puts the repository root
on `sys.path` for `tests.e2e`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trino_vs_hive_queries import benchmark_queries, check_agreement, time_queries
from trino_vs_hive_table import check_layout, sweep_table

from pruner.sidecar import Sidecar
from tests.e2e.engines import Engine


def point_lookup_sweep(
    engine: Engine, sidecar: Sidecar, warehouse: Path, sweep: list[int], repeat: int
) -> list[dict[str, Any]]:
    """One entry per table of the sweep: its layout and the point lookup's timings per catalog."""
    results = []
    for files in sweep:
        table = sweep_table(files)
        layout = check_layout(warehouse / table)
        point = [q for q in benchmark_queries(layout["rows"]) if q.name == "point lookup"]
        check_agreement(engine, point, layout, table, checks=False)
        timed = time_queries(engine, sidecar, point, repeat, table)
        results.append({"table": table, "target_files": files} | layout | timed["point lookup"])
    return results
