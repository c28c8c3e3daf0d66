"""How a running sidecar writes its log. Interactive commands log through rich, whose handler costs
time that grows faster than the line's length while it holds a lock; a server cannot afford that
(one request with a long name stalled every other one), so `lakeprune serve` installs a plain
`logging.StreamHandler` instead, writing either classic text lines (`plain`) or one JSON object per
line (`json`: time, level, logger, message, and the traceback when there is one) for log
collectors. Both cost time linear in the line, and request lines are bounded anyway
(`pruner.bounded`). The workers of `lakeprune serve --workers N` write to the same
stderr; each of their lines names the worker (`worker 2: ...` in text, `"worker": 2` in JSON)."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from enum import StrEnum
from typing import TextIO

PLAIN_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class LogFormat(StrEnum):
    PLAIN = "plain"
    JSON = "json"


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def __init__(self, worker: int | None = None) -> None:
        super().__init__()
        self.worker = worker

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if self.worker is not None:
            entry["worker"] = self.worker
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def install(
    log_format: LogFormat, stream: TextIO | None = None, worker: int | None = None
) -> logging.Handler:
    """Make a plain or JSON handler on `stream` (stderr) the root logger's only handler, its lines
    naming `worker` if given; logger levels stay as they are."""
    handler = logging.StreamHandler(stream or sys.stderr)
    plain = (
        PLAIN_FORMAT
        if worker is None
        else PLAIN_FORMAT.replace("%(message)s", f"worker {worker}: %(message)s")
    )
    formatter = JsonFormatter(worker) if log_format == LogFormat.JSON else logging.Formatter(plain)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    return handler
