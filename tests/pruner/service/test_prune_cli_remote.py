"""`lakeprune prune --server HOST:PORT SCHEMA.TABLE --where ...` prints what the local mode prints
(the predicate is translated on the client with the schema from GetTable), and its mistakes are
one-line errors."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from pruner.cli import prune_cmds
from pruner.sidecar import Sidecar
from tests.pruner.service.conftest import address

runner = CliRunner()
WHERES = [
    "region = 'eu' AND seq BETWEEN 100 AND 300",
    "token IN ('t7919', 't15838') OR id = 5",
    "score > 10.5 AND NOT (hot = 'a')",
    "ts >= TIMESTAMP '2026-01-02 00:00:00' AND amount < 3.5",
]


def cli() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None: ...

    prune_cmds.register(app)
    return app


def run(*args: str, expect: int = 0) -> str:
    result = runner.invoke(cli(), ["prune", *args])
    assert result.exit_code == expect, result.stdout + result.stderr + repr(result.exception)
    return result.stdout if expect == 0 else result.stderr


@pytest.mark.parametrize("where", WHERES)
def test_remote_output_is_the_local_output(sidecar: Sidecar, indexed_table: str, where: str) -> None:
    remote = ("--server", address(sidecar), "lake.events", "--where", where)
    local = (indexed_table, "--where", where)
    assert run(*remote) == run(*local)
    remote_json, local_json = json.loads(run(*remote, "--json")), json.loads(run(*local, "--json"))
    for payload in (remote_json, local_json):  # measurements: a warm sidecar reads less than a cold CLI
        payload.pop("storage_requests")
        for step in payload["explain"]:
            step.pop("millis")
    assert remote_json == local_json
    assert "files in" in run(*remote, "--explain")


def test_remote_mistakes(sidecar: Sidecar, indexed_table: str) -> None:
    server = address(sidecar)
    assert "error: with --server, TABLE is SCHEMA.TABLE, got 'events'" in run(
        "--server", server, "events", "--where", "id = 1", expect=2
    )
    assert "error: NOT_FOUND: table lake.nope does not exist" in run(
        "--server", server, "lake.nope", "--where", "id = 1", expect=2
    )
    assert "error: NOT_FOUND: no completed instant" in run(
        "--server", server, "lake.events", "--where", "id = 1", "--snapshot", "20000101000000000", expect=2
    )
    assert "unknown column" in run("--server", server, "lake.events", "--where", "nope = 1", expect=2)
    assert "--warehouse and --server exclude each other" in run(
        "--server", server, "lake.events", "-w", "/x", "--where", "id = 1", expect=2
    )
    assert "need --server" in run(indexed_table, "--where", "id = 1", "--token-file", "/t", expect=2)
    assert "error: UNAVAILABLE" in run(
        "--server", "127.0.0.1:1", "lake.events", "--where", "id = 1", expect=2
    )
