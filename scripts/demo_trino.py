"""The Trino part of the demo: queries the demo table through the lakeprune catalog of a running
local Trino, checks each answer against the reference computed from the demo's input files
(`demo_data.expected`), and prints what the sidecar pruned (its Prometheus counters).

    python scripts/demo_trino.py INPUT_DIR TRINO_PORT METRICS_PORT"""

from __future__ import annotations

import sys
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import trino.dbapi

sys.path.insert(0, str(Path(__file__).parent))
from demo_data import expected


def pruned_files(metrics_port: int) -> tuple[float, float]:
    """The sidecar's (files considered, files kept) counters for Thrift prunes so far."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).read().decode()
    values = {"in": 0.0, "out": 0.0}
    for line in text.splitlines():
        for key in values:
            if line.startswith(f'lakeprune_prune_files_{key}_total{{api="thrift"}}'):
                values[key] = float(line.split()[-1])
    return values["in"], values["out"]


def main(input_dir: Path, trino_port: int, metrics_port: int) -> None:
    reference = expected(input_dir)
    connection = trino.dbapi.connect(
        host="127.0.0.1", port=trino_port, user="demo", catalog="lakeprune", schema="demo"
    )
    cursor = connection.cursor()
    key = 123_457
    checks: list[tuple[str, str, Any]] = [
        ("count(*)", "SELECT count(*) FROM trips", [[len(reference)]]),
        (
            "point lookup on the record key",
            f"SELECT trip_id, city, driver FROM trips WHERE trip_id = {key}",
            [[key, reference[key]["city"], reference[key]["driver"]]],
        ),
        (
            "trips per city",
            "SELECT city, count(*) FROM trips GROUP BY city ORDER BY city",
            [[c, n] for c, n in sorted(Counter(r["city"] for r in reference.values()).items())],
        ),
    ]
    failed = False
    for title, sql, want in checks:
        before = pruned_files(metrics_port)
        cursor.execute(sql)
        got = [list(row) for row in cursor.fetchall()]
        after = pruned_files(metrics_port)
        considered, kept = after[0] - before[0], after[1] - before[1]
        verdict = "ok" if got == want else f"MISMATCH (expected {want[:3]}...)"
        failed |= got != want
        print(
            f"  {title}: {got[:3]}{' ...' if len(got) > 3 else ''} -- {verdict}; "
            f"sidecar kept {kept:.0f} of {considered:.0f} files"
        )
    if failed:
        sys.exit("demo Trino check FAILED")
    print("demo Trino check passed: Trino's answers through the lakeprune catalog equal the reference")


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
