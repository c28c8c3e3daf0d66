"""One plan for identical prune requests (`SharedPrunes`). Trino plans every inlined copy of a CTE or
subquery for itself, so one query sends the same `PruneStream` request several times, often at
once: 30% of TPC-DS's prunes, holding 48% of the sidecar's prune time, repeat a request of the same
query byte for byte (bench/notes/tpc.md, 2026-12-01). The first request of a key plans and streams
as any other and leaves what it sent; a request with the same key that arrives while it runs waits
for it and replays that, and so does one arriving after it while the finished plan is remembered
(the newest `remember` of them). Only a request that pins a snapshot has a key: a snapshot's files
never change, so the first plan's answer is the answer for the same bytes. A first request that
fails, is cancelled or outlives a waiting one's deadline leaves the waiting ones to plan for
themselves, so sharing never turns one failure into several; a plan with a fallback (a step that
kept its files) is shared with the requests already waiting but not remembered, so a later request
gets a fresh chance at the index."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Generic, TypeVar

from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb

P = TypeVar("P")


def request_key(request: spb.PruneRequest) -> bytes | None:
    """What identifies a prune's answer: the request's bytes (deterministic encoding), or None when
    it does not pin a snapshot (the latest one may change between two such requests)."""
    if not request.snapshot:
        return None
    return hashlib.sha256(request.SerializeToString(deterministic=True)).digest()


class Flight(Generic[P]):
    """One key's plan: settled once with what it produced, or with None when it produced nothing
    to share."""

    def __init__(self) -> None:
        self._settled = threading.Event()
        self._payload: P | None = None

    def settle(self, payload: P | None) -> None:
        self._payload = payload
        self._settled.set()

    def wait(self, timeout: float) -> P | None:
        """What the plan produced, or None: it produced nothing to share, or it is still running
        after `timeout` seconds."""
        if not self._settled.wait(timeout):
            return None
        return self._payload


class SharedPrunes(Generic[P]):
    """The plans running per key, and the newest `remember` finished ones (0: none kept)."""

    def __init__(self, remember: int) -> None:
        self.remember = remember
        self._lock = threading.Lock()
        self._running: dict[bytes, Flight[P]] = {}
        self._finished: OrderedDict[bytes, Flight[P]] = OrderedDict()

    def join(self, key: bytes) -> tuple[Flight[P], bool]:
        """The flight of `key`, and whether the caller is its first request (it must `settle` it);
        a remembered finished flight counts as the newest again."""
        with self._lock:
            flight = self._finished.get(key)
            if flight is not None:
                self._finished.move_to_end(key)
                return flight, False
            flight = self._running.get(key)
            if flight is not None:
                return flight, False
            flight = Flight()
            self._running[key] = flight
            return flight, True

    def settle(self, key: bytes, flight: Flight[P], payload: P | None, keep: bool) -> None:
        """End `key`'s flight with `payload` (None: nothing to share), remembered if `keep`; the
        requests waiting on it get `payload` at once."""
        with self._lock:
            if self._running.get(key) is flight:
                del self._running[key]
            if payload is not None and keep and self.remember > 0:
                self._finished[key] = flight
                self._finished.move_to_end(key)
                while len(self._finished) > self.remember:
                    self._finished.popitem(last=False)
        flight.settle(payload)

    def __len__(self) -> int:
        """Finished plans remembered."""
        return len(self._finished)
