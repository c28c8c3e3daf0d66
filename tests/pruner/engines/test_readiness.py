"""Waiting until an engine can run queries on its lakeprune catalogs, against a stand-in for
Trino's HTTP API (`/v1/info`, `/v1/statement`) whose answers are scripted per statement: errors
of an engine still starting (NO_NODES_AVAILABLE) are waited out, a connector's own error or a
sidecar nobody listens on is a warning, and a timeout or a dead engine is one error naming the
log."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from pruner.engines import readiness
from pruner.engines.errors import EngineStartError
from pruner.engines.readiness import Target, wait_until_ready
from pruner.engines.spec import TRINO


@dataclass
class FakeTrino:
    """Answers SELECT 1 once `starting` is over; other statements from `answers` (SQL -> a list
    of replies, the last one repeated): rows, or an error name."""

    answers: dict[str, list[list[list[Any]] | str]] = field(default_factory=dict)
    starting_polls: int = 0
    statements: list[str] = field(default_factory=list)

    def reply(self, sql: str) -> dict[str, Any]:
        self.statements.append(sql)
        if sql == "SELECT 1":
            return {"data": [[1]]}
        replies = self.answers.get(sql, [[]])
        answer = replies.pop(0) if len(replies) > 1 else replies[0]
        if isinstance(answer, str):
            return {"error": {"errorName": answer, "message": f"{answer}: scripted"}}
        return {"data": answer}


@pytest.fixture
def fake() -> Iterator[tuple[FakeTrino, int]]:
    state = FakeTrino()

    class Handler(BaseHTTPRequestHandler):
        def _send(self, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            starting = state.starting_polls > 0
            state.starting_polls -= 1
            self._send({"starting": starting})

        def do_POST(self) -> None:
            assert self.headers["X-Trino-User"] == "lakeprune"
            sql = self.rfile.read(int(self.headers["Content-Length"])).decode()
            self._send(state.reply(sql))

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state, int(server.server_address[1])
    server.shutdown()
    server.server_close()


@pytest.fixture
def sidecar() -> Iterator[str]:
    """An address that accepts TCP connections (as a sidecar would)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield f"127.0.0.1:{listener.getsockname()[1]}"


@pytest.fixture(autouse=True)
def fast_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readiness, "POLL_INTERVAL_S", 0.01)
    monkeypatch.setattr(readiness, "PROGRESS_INTERVAL_S", 0.05)


def target(port: int, alive: Callable[[], bool] = lambda: True) -> Target:
    return Target(TRINO, "127.0.0.1", port, alive, lambda: "from /data/var/log/server.log:\nboom")


def free_address() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"  # closed again: nobody listens there


def test_no_nodes_available_is_waited_out_until_a_row_of_a_table_is_read(
    fake: tuple[FakeTrino, int], sidecar: str, caplog: pytest.LogCaptureFixture
) -> None:
    state, port = fake
    state.starting_polls = 3
    read = 'SELECT count(*) FROM (SELECT 1 FROM "lakeprune"."demo"."trips" LIMIT 1)'
    state.answers = {
        'SHOW SCHEMAS FROM "lakeprune"': [[["information_schema"], ["demo"]]],
        'SHOW TABLES FROM "lakeprune"."demo"': [[["trips"]]],
        read: ["NO_NODES_AVAILABLE"] * 12 + [[[1]]],
    }
    caplog.set_level("INFO", logger="pruner.engines.readiness")
    assert wait_until_ready(target(port), {"lakeprune": (sidecar,)}, timeout=30) == []
    assert state.statements.count(read) == 13
    assert 'SHOW TABLES FROM "lakeprune"."information_schema"' not in state.statements
    assert any("waiting for catalog lakeprune" in r.getMessage() for r in caplog.records)


def test_a_catalog_without_a_sidecar_is_waited_for_until_it_lists_its_schemas(
    fake: tuple[FakeTrino, int],
) -> None:
    state, port = fake
    state.answers = {
        'SHOW SCHEMAS FROM "tpch"': ["NO_NODES_AVAILABLE"] * 3 + [[["tiny"]]],
        'SHOW SCHEMAS FROM "broken"': ["HIVE_METASTORE_ERROR"],
    }
    warnings = wait_until_ready(target(port), {}, timeout=30, other_catalogs=("tpch", "broken"))
    assert state.statements.count('SHOW SCHEMAS FROM "tpch"') == 4
    assert len(warnings) == 1 and warnings[0].startswith(
        "catalog broken: the engine is up, but the connector"
    )


def test_every_catalog_is_probed_and_an_empty_one_needs_only_its_schemas(
    fake: tuple[FakeTrino, int], sidecar: str
) -> None:
    state, port = fake
    state.answers = {'SHOW SCHEMAS FROM "lakeprune_thrift"': ["CATALOG_NOT_FOUND", [["information_schema"]]]}
    catalogs = {"lakeprune": (sidecar,), "lakeprune_thrift": (sidecar,)}
    assert wait_until_ready(target(port), catalogs, timeout=30) == []
    assert state.statements[1:] == [
        'SHOW SCHEMAS FROM "lakeprune"',
        'SHOW SCHEMAS FROM "lakeprune_thrift"',
        'SHOW SCHEMAS FROM "lakeprune_thrift"',
    ]


def test_sidecar_trouble_is_a_warning_not_a_wait(fake: tuple[FakeTrino, int], sidecar: str) -> None:
    state, port = fake
    state.answers = {'SHOW SCHEMAS FROM "broken"': ["GENERIC_INTERNAL_ERROR"]}
    nobody = free_address()
    warnings = wait_until_ready(target(port), {"lakeprune": (nobody,), "broken": (sidecar,)}, timeout=30)
    assert warnings == [
        f"catalog lakeprune: no sidecar accepts connections at {nobody}; its queries fail until one does",
        "catalog broken: the engine is up, but the connector failed: GENERIC_INTERNAL_ERROR: scripted",
    ]
    assert 'SHOW SCHEMAS FROM "lakeprune"' not in state.statements


def test_a_timeout_names_what_was_waited_for_and_the_log(fake: tuple[FakeTrino, int], sidecar: str) -> None:
    state, port = fake
    state.answers = {'SHOW SCHEMAS FROM "lakeprune"': ["NO_NODES_AVAILABLE"]}
    with pytest.raises(EngineStartError) as caught:
        wait_until_ready(target(port), {"lakeprune": (sidecar,)}, timeout=0.3)
    message = str(caught.value)
    assert message.startswith("Trino 476 could not run a query on catalog lakeprune within 0 s (")
    assert "NO_NODES_AVAILABLE" in message and message.endswith("from /data/var/log/server.log:\nboom")


def test_an_engine_that_exits_or_never_answers(fake: tuple[FakeTrino, int]) -> None:
    _, port = fake
    with pytest.raises(EngineStartError, match="Trino 476 exited during startup; from /data/var/log"):
        wait_until_ready(target(port, alive=lambda: False), {}, timeout=30)
    closed = int(free_address().rsplit(":", 1)[1])
    with pytest.raises(EngineStartError, match=r"on SELECT 1 within 0 s \(no answer on /v1/info\)"):
        wait_until_ready(target(closed), {}, timeout=0.2)
