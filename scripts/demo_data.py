"""Input files for the demo and the check of its result. `generate DIR` writes trips.parquet
(200,000 rows), updates.parquet (1%, with in-batch duplicate keys and partition moves),
deletes.parquet and reinsert.parquet. `verify DIR LATEST FIRST` recomputes the expected table from
those files with plain Python dictionaries and compares it with what lakeprune returned."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

ROWS = 200_000
CITIES = ["amsterdam", "berlin", "lisbon", "madrid", "oslo", "paris", "rome", "vienna"]
START = datetime(2026, 11, 1, tzinfo=UTC)
SCHEMA = pa.schema(
    [
        ("trip_id", pa.int64()),
        ("city", pa.string()),
        ("driver", pa.string()),
        ("fare", pa.decimal128(10, 2)),
        ("distance_km", pa.float64()),
        ("started_at", pa.timestamp("us", tz="UTC")),
        ("updated_at", pa.timestamp("us", tz="UTC")),
    ]
)


def trip(key: int, version: int, city: str | None = None) -> dict[str, Any]:
    from decimal import Decimal

    return {
        "trip_id": key,
        "city": city or CITIES[key % len(CITIES)],
        "driver": f"driver-{key % 997}",
        "fare": Decimal(key % 5000) / 100 + version,
        "distance_km": (key % 300) / 10,
        "started_at": START + timedelta(seconds=key * 7),
        "updated_at": START + timedelta(days=version, seconds=key),
    }


def write(path: Path, rows: list[dict[str, Any]], schema: pa.Schema = SCHEMA) -> None:
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def generate(directory: Path) -> None:
    write(directory / "trips.parquet", [trip(k, 0) for k in range(ROWS)])
    updates = []
    for key in range(0, ROWS, 100):
        moved_city = CITIES[(key + 1) % len(CITIES)] if key % 1000 == 0 else None
        updates.append(trip(key, 2, moved_city))
        if key % 2000 == 0:  # an older duplicate in the same batch: the ordering field must discard it
            updates.append(trip(key, 1, "rome"))
    write(directory / "updates.parquet", updates)
    key_schema = pa.schema([("trip_id", pa.int64())])
    write(directory / "deletes.parquet", [{"trip_id": k} for k in range(50, ROWS, 400)], key_schema)
    write(directory / "reinsert.parquet", [trip(50, 3)])
    print(f"wrote {ROWS:,} trips, {len(updates):,} updates, {len(range(50, ROWS, 400)):,} deletes")


def expected(directory: Path) -> dict[int, dict[str, Any]]:
    table = {r["trip_id"]: r for r in pq.read_table(directory / "trips.parquet").to_pylist()}
    for row in sorted(
        pq.read_table(directory / "updates.parquet").to_pylist(), key=lambda r: r["updated_at"]
    ):
        table[row["trip_id"]] = row
    for row in pq.read_table(directory / "deletes.parquet").to_pylist():
        table.pop(row["trip_id"], None)
    for row in pq.read_table(directory / "reinsert.parquet").to_pylist():
        table[row["trip_id"]] = row
    return table


def verify(directory: Path, latest: Path, first: Path) -> None:
    want = expected(directory)
    got = {r["trip_id"]: r for r in pq.read_table(latest).to_pylist()}
    original = pq.read_table(first).num_rows
    problems = []
    if got != want:
        missing, extra = want.keys() - got.keys(), got.keys() - want.keys()
        differ = [k for k in want.keys() & got.keys() if want[k] != got[k]]
        problems.append(f"{len(missing)} missing, {len(extra)} unexpected, {len(differ)} different rows")
    if original != ROWS:
        problems.append(f"the first snapshot has {original} rows, expected {ROWS}")
    if problems:
        sys.exit("demo check FAILED: " + "; ".join(problems))
    print(
        f"demo check passed: {len(got):,} rows equal the reference; the first snapshot still has {original:,}"
    )


if __name__ == "__main__":
    command, *paths = sys.argv[1:]
    if command == "generate":
        generate(Path(paths[0]))
    elif command == "verify":
        verify(Path(paths[0]), Path(paths[1]), Path(paths[2]))
    else:
        sys.exit(f"unknown command {command!r}: use generate DIR or verify DIR LATEST FIRST")
