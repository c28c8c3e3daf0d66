"""What supervisor and worker say: an order crosses the pipe whole (the split key included, so every
worker seals tokens with the same key), and a report line is read back, anything else on the
worker's stdout ignored."""

from __future__ import annotations

import io

import pytest

from pruner.serving.config import Security, ServeConfig
from pruner.serving.logs import LogFormat
from pruner.supervisor.orders import (
    READY,
    STARTED,
    WorkerOrder,
    parse_report,
    read_order,
    report_line,
    send_order,
)


def test_an_order_crosses_the_pipe_whole() -> None:
    config = ServeConfig({"demo": "/data"}, grpc_port=7000, workers=2, security=Security(token="t0ken"))
    order = WorkerOrder(2, config, LogFormat.JSON, {"pruner": 20}, 10.0, 1234)
    pipe = io.BytesIO()
    send_order(pipe, order)
    pipe.seek(0)
    received = read_order(pipe)
    assert received == order
    assert received.config.security.split_key == config.security.split_key


def test_anything_but_an_order_is_refused() -> None:
    pipe = io.BytesIO()
    send_order(pipe, "hello")  # type: ignore[arg-type]
    pipe.seek(0)
    with pytest.raises(TypeError, match="expected a WorkerOrder"):
        read_order(pipe)


@pytest.mark.parametrize(
    ("line", "report"),
    [
        (report_line(STARTED, pid=7, metrics_port=9000), {"event": STARTED, "pid": 7, "metrics_port": 9000}),
        (report_line(READY), {"event": READY}),
        ("not json\n", {}),
        ('{"no": "event"}\n', {}),
        ("[1, 2]\n", {}),
    ],
)
def test_report_lines(line: str, report: dict[str, object]) -> None:
    assert parse_report(line) == report
