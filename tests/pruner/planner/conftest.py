"""The indexed table of the planner tests: its schema and rows, and an oracle that scans its files.
The session fixtures that build it with Spark (`indexed_table`, `table_copy`, `oracle`) live in
`tests/pruner/conftest.py`, so that the service tests share the same table: 1,200 rows over 4
regions in ~40 small files, then updates (some move region, some set NaN), deletes and late
inserts. Columns cover every layout the planner must handle: `seq` clustered with the record key,
`hot` skewed, `token` high-cardinality and unclustered, `score` with NULL / NaN / infinities."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pyarrow.parquet as pq

from pruner.predicate.tuple_domain import TupleDomain
from pruner.table.table import Snapshot

SCHEMA = (
    "id bigint, region string, seq bigint, hot string, token string, score double, "
    "amount decimal(10,2), day date, ts timestamp, flag boolean"
)
COLUMNS = [c.split()[0] for c in SCHEMA.split(", ")]
REGIONS = ["eu", "us", "ap", "sa"]


def row(key: int, version: int = 0, region: str | None = None) -> tuple[Any, ...]:
    score: float | None = (key % 97) / 3 + version
    if key % 23 == 0:
        score = None
    elif key % 29 == 0:
        score = math.nan
    elif key % 101 == 0:
        score = math.inf if key % 2 else -math.inf
    return (
        key,
        region or REGIONS[key % 4],
        key,
        "a" if key % 5 else f"h{key % 13}",
        f"t{(key * 7919) % 100003}",
        score,
        None if key % 17 == 0 else Decimal(key % 1000) / 100,
        date(2026, 1, 1) + timedelta(days=key % 60),
        datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=key * 13),
        key % 3 == 0,
    )


class Oracle:
    """Scans every live file of a snapshot: which files hold a row matching a TupleDomain."""

    def __init__(self, snapshot: Snapshot) -> None:
        storage = snapshot.table.storage
        self.rows = {
            storage.full_uri(f.path): pq.read_table(storage.path(f.path)).to_pylist()
            for f in snapshot.files()
        }

    def files_matching(self, predicate: TupleDomain) -> set[str]:
        return {path for path, rows in self.rows.items() if any(predicate.matches(r) for r in rows)}
