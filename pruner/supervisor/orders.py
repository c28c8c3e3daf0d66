"""What the supervisor and a worker say to each other. The supervisor writes the worker's order
(its number, the resolved configuration — ports, the split key shared by all workers, secrets —,
the log format and levels, and the shutdown grace) as one pickle on the worker's stdin, so that nothing secret
is on a command line or in a log; the pipe then stays open and its end tells the worker that the
supervisor is gone. The worker reports on its stdout, one JSON object per line: `started` (its
ports are bound; with its private metrics port) and `ready` (its catalog is loaded, health
SERVING)."""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass
from typing import IO, Any

from pruner.serving.config import ServeConfig
from pruner.serving.logs import LogFormat

STARTED = "started"
READY = "ready"


@dataclass(frozen=True)
class WorkerOrder:
    index: int
    config: ServeConfig
    log_format: LogFormat
    log_levels: dict[str, int]  # logger name ("" for the root) -> level, as in the supervisor
    grace_seconds: float
    supervisor_pid: int
    own_grpc_port: int | None = None  # the worker's own gRPC port (`ServeConfig.worker_grpc_port`)


def send_order(stream: IO[bytes], order: WorkerOrder) -> None:
    pickle.dump(order, stream)
    stream.flush()


def read_order(stream: IO[bytes]) -> WorkerOrder:
    order = pickle.load(stream)
    if not isinstance(order, WorkerOrder):
        raise TypeError(f"expected a WorkerOrder on stdin, got {type(order).__name__}")
    return order


def report_line(event: str, **fields: Any) -> str:
    return json.dumps({"event": event, **fields})


def parse_report(line: str) -> dict[str, Any]:
    """A worker's report line; an empty dict for anything else (never raises)."""
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) and "event" in value else {}
