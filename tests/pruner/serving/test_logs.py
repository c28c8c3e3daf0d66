"""The server log: `install` makes a plain or JSON stream handler the root logger's only handler,
keeps logger levels, the JSON format writes one object per record on one line, and a worker's lines
name it."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from pruner.serving import logs
from pruner.serving.logs import LogFormat


@pytest.fixture
def restored() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.usefixtures("restored")
def test_json_lines() -> None:
    stream = io.StringIO()
    logs.install(LogFormat.JSON, stream)
    log = logging.getLogger("pruner.test_logs")
    log.warning("api=grpc method=%s\nsecond line", "Prune")
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("failed")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert (first["level"], first["logger"], first["message"]) == (
        "WARNING",
        "pruner.test_logs",
        "api=grpc method=Prune\nsecond line",
    )
    assert first["time"].endswith("+00:00") and "exception" not in first
    assert second["exception"].startswith("Traceback") and "ValueError: boom" in second["exception"]


@pytest.mark.usefixtures("restored")
def test_plain_lines_replace_every_other_handler() -> None:
    stream = io.StringIO()
    logging.getLogger().addHandler(logging.NullHandler())
    handler = logs.install(LogFormat.PLAIN, stream)
    assert logging.getLogger().handlers == [handler]
    logging.getLogger("pruner.test_logs").error("table %s", "lake.events")
    assert stream.getvalue().rstrip().endswith(" ERROR pruner.test_logs: table lake.events")


@pytest.mark.usefixtures("restored")
@pytest.mark.parametrize("log_format", [LogFormat.PLAIN, LogFormat.JSON])
def test_a_workers_lines_name_it(log_format: LogFormat) -> None:
    stream = io.StringIO()
    logs.install(log_format, stream, worker=2)
    logging.getLogger("pruner.test_logs").error("table %s", "lake.events")
    line = stream.getvalue().rstrip()
    if log_format == LogFormat.JSON:
        entry = json.loads(line)
        assert (entry["worker"], entry["message"]) == (2, "table lake.events")
    else:
        assert line.endswith(" ERROR pruner.test_logs: worker 2: table lake.events")
