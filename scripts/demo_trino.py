"""The Trino part of the demo: queries the demo table through each lakeprune catalog of a running
local Trino 476, checks each answer against the reference computed from the demo's input files
(`demo_data.expected`), and prints what the sidecar pruned (its Prometheus counters for the API the
catalog uses). The native catalog (gRPC, Trino reads the Parquet files) must return the exact
decimal sum of `fare` per city; the Thrift catalog carries decimals as doubles, so its sums are
checked to be the nearest doubles' sums and shown as they arrive.

    python scripts/demo_trino.py INPUT_DIR TRINO_PORT METRICS_PORT CATALOG=API [CATALOG=API ...]

where API is `grpc` (the native connector) or `thrift`."""

from __future__ import annotations

import math
import sys
import urllib.request
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import trino.dbapi

sys.path.insert(0, str(Path(__file__).parent))
from demo_data import expected


def pruned_files(metrics_port: int, api: str) -> tuple[float, float]:
    """The sidecar's (files considered, files kept) counters for prunes over `api` so far."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).read().decode()
    values = {"in": 0.0, "out": 0.0}
    for line in text.splitlines():
        for key in values:
            if line.startswith(f'lakeprune_prune_files_{key}_total{{api="{api}"}}'):
                values[key] = float(line.split()[-1])
    return values["in"], values["out"]


def checks(reference: dict[int, dict[str, Any]], api: str) -> list[tuple[str, str, Any]]:
    key = 123_457
    fares: dict[str, Decimal] = defaultdict(Decimal)
    for row in reference.values():
        fares[row["city"]] += row["fare"]
    sums: list[list[Any]] = [[city, fares[city]] for city in sorted(fares)]
    exact = api == "grpc"
    return [
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
        (
            "sum(fare) per city" + (" (decimal(10,2), exact)" if exact else " (a double over Thrift)"),
            "SELECT city, sum(fare) FROM trips GROUP BY city ORDER BY city",
            sums,
        ),
    ]


def matches(got: list[list[Any]], want: list[list[Any]], api: str) -> bool:
    """Equal; over Thrift a decimal arrives as a double, so a Decimal wanted there must be close."""
    if len(got) != len(want):
        return False
    for got_row, want_row in zip(got, want, strict=True):
        for have, need in zip(got_row, want_row, strict=True):
            if isinstance(need, Decimal) and api == "thrift":
                if not isinstance(have, float) or not math.isclose(have, float(need), rel_tol=1e-9):
                    return False
            elif have != need or type(have) is not type(need):
                return False
    return True


def main(input_dir: Path, trino_port: int, metrics_port: int, catalogs: list[tuple[str, str]]) -> None:
    reference = expected(input_dir)
    failed = False
    for catalog, api in catalogs:
        print(f"catalog {catalog} ({'native connector, gRPC' if api == 'grpc' else 'Thrift connector'}):")
        connection = trino.dbapi.connect(  # type: ignore[no-untyped-call]
            host="127.0.0.1", port=trino_port, user="demo", catalog=catalog, schema="demo"
        )
        cursor = connection.cursor()
        for title, sql, want in checks(reference, api):
            before = pruned_files(metrics_port, api)
            cursor.execute(sql)
            got = [list(row) for row in cursor.fetchall()]
            after = pruned_files(metrics_port, api)
            considered, kept = after[0] - before[0], after[1] - before[1]
            ok = matches(got, want, api)
            failed |= not ok
            verdict = "ok" if ok else f"MISMATCH (expected {want[:3]}...)"
            print(
                f"  {title}: {got[:3]}{' ...' if len(got) > 3 else ''} -- {verdict}; "
                f"sidecar kept {kept:.0f} of {considered:.0f} files"
            )
        connection.close()
    if failed:
        sys.exit("demo Trino check FAILED")
    names = ", ".join(catalog for catalog, _ in catalogs)
    print(f"demo Trino check passed: Trino's answers through {names} equal the reference")


if __name__ == "__main__":
    pairs = [tuple(arg.split("=", 1)) for arg in sys.argv[4:]]
    if not pairs or any(len(p) != 2 or p[1] not in ("grpc", "thrift") for p in pairs):
        sys.exit(__doc__)
    main(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), [(p[0], p[1]) for p in pairs])
