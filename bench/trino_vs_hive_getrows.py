"""The GetRows throughput of the Trino vs Hive benchmark (`trino_vs_hive.py`), measured without
Trino: a Thrift client lists every split of `trips` (ALL constraint), then client processes (spawned,
never forked from a process serving Thrift) read every page of every split with all columns at
maxBytes 16 MB, the splits dealt out among them; reply bytes come from the sidecar's
`lakeprune_bytes_served_total{api="thrift"}`, and the median of several passes is reported for one
client and for several at once. Imported by `trino_vs_hive.py`, which puts the repository root on
`sys.path` for `tests.e2e`."""

from __future__ import annotations

import multiprocessing
import os
import time
from typing import Any

from support import progress
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport.TSocket import TSocket
from thrift.transport.TTransport import TFramedTransport
from trino_vs_hive_table import COLUMNS, SCHEMA, TABLE

from pruner.sidecar import Sidecar
from pruner.thrift import idl
from tests.e2e.queries import counter

MAX_BYTES = 16 * 1024**2  # GetRows maxBytes: the catalog's max-response-size


def _connect(port: int) -> tuple[Any, TFramedTransport]:
    transport = TFramedTransport(TSocket("127.0.0.1", port))
    transport.open()
    return idl.Service.Client(TBinaryProtocolAccelerated(transport)), transport


def list_splits(port: int) -> list[bytes]:
    client, transport = _connect(port)
    try:
        found: list[bytes] = []
        token = None
        while True:
            batch = client.trinoGetSplits(
                idl.SchemaTableName(SCHEMA, TABLE),
                idl.NullableColumnSet(None),
                idl.TupleDomain({}),
                1000,
                idl.NullableToken(token),
            )
            found += [s.splitId.id for s in batch.splits]
            if batch.nextToken is None:
                return found
            token = batch.nextToken
    finally:
        transport.close()


def fetch_splits(port: int, split_ids: list[bytes], ready: Any, start: Any, out: Any) -> None:
    """One client process: connect, wait for the start signal, read every page of its splits."""
    client, transport = _connect(port)
    ready.put(os.getpid())
    start.wait()
    rows = pages = 0
    for split_id in split_ids:
        token = None
        while True:
            page = client.trinoGetRows(idl.Id(split_id), COLUMNS, MAX_BYTES, idl.NullableToken(token))
            rows += page.rowCount
            pages += 1
            if page.nextToken is None:
                break
            token = page.nextToken
    transport.close()
    out.put((rows, pages))


def getrows_pass(sidecar: Sidecar, split_ids: list[bytes], clients: int) -> dict[str, Any]:
    """All splits read by `clients` client processes at once (dealt out round robin)."""
    assert sidecar.thrift_port is not None
    context = multiprocessing.get_context("spawn")  # no fork of a process serving Thrift
    ready, start, out = context.Queue(), context.Event(), context.Queue()
    processes = [
        context.Process(
            target=fetch_splits, args=(sidecar.thrift_port, split_ids[i::clients], ready, start, out)
        )
        for i in range(clients)
    ]
    for p in processes:
        p.start()
    for _ in processes:
        ready.get(timeout=300)
    bytes_before = counter(sidecar, "lakeprune_bytes_served_total", api="thrift")
    busy_before = getrows_seconds(sidecar)
    begin = time.perf_counter()
    start.set()
    results = [out.get(timeout=1800) for _ in processes]
    wall = time.perf_counter() - begin
    for p in processes:
        p.join()
    reply_bytes = counter(sidecar, "lakeprune_bytes_served_total", api="thrift") - bytes_before
    busy = getrows_seconds(sidecar) - busy_before
    rows = sum(r for r, _ in results)
    return {
        "clients": clients,
        "seconds": round(wall, 3),
        "rows": rows,
        "pages": sum(p for _, p in results),
        "reply_bytes": int(reply_bytes),
        "mb_per_s": round(reply_bytes / wall / 1e6, 2),
        "rows_per_s": round(rows / wall),
        "server_busy_s": round(busy, 3),  # sum of GetRows handler times (overlapping when concurrent)
    }


def getrows_seconds(sidecar: Sidecar) -> float:
    return counter(sidecar, "lakeprune_request_seconds_sum", api="thrift", method="getRows", status="ok")


def getrows_throughput(sidecar: Sidecar, clients: int, passes: int) -> dict[str, Any]:
    assert sidecar.thrift_port is not None
    split_ids = list_splits(sidecar.thrift_port)
    progress(f"GetRows: {len(split_ids)} splits; warm-up pass")
    getrows_pass(sidecar, split_ids, 1)
    result: dict[str, Any] = {"splits": len(split_ids), "max_bytes": MAX_BYTES, "columns": COLUMNS}
    for n in sorted({1, clients}):
        runs = [getrows_pass(sidecar, split_ids, n) for _ in range(passes)]
        best = sorted(runs, key=lambda r: r["mb_per_s"])[len(runs) // 2]  # the median pass
        result[f"{n}_client{'s' if n > 1 else ''}"] = best | {
            "mb_per_s_all_passes": [r["mb_per_s"] for r in runs]
        }
        progress(f"GetRows, {n} client(s): {best['mb_per_s']} MB/s, {best['rows_per_s']:,} rows/s")
    return result
