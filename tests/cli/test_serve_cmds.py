"""`lakeprune serve`: configuration mistakes are one `error:` line and exit status 2, and a running
sidecar logs plain or JSON lines and shuts down cleanly on SIGTERM (calls are answered until then)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from builder.create import create_table
from pruner.cli import serve_cmds
from pruner.client import PruningClient

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def cli() -> typer.Typer:
    """The serve command as `lakeprune` registers it."""
    app = typer.Typer()

    @app.callback()
    def main() -> None: ...

    serve_cmds.register(app)
    return app


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give --config FILE, or at least one --warehouse NAME=ROOT"),
        (["--warehouse", "demo"], "--warehouse 'demo' must be NAME=ROOT"),
        (["--warehouse", "Demo=/x"], "warehouse name 'Demo' must match"),
        (["--warehouse", "a=/x", "--grpc-port", "http"], "--grpc-port must be a port number or off"),
        (["--warehouse", "a=/x", "--grpc-port", "99999"], "grpc_port 99999 is not a port number"),
        (["--warehouse", "a=/x", "--cache-size", "lots"], "cache.max_bytes must be a size"),
        (["--warehouse", "a=/x", "--token-file", "/no/such/file"], "cannot read security.token_file"),
        (["--config", "/no/such.yaml"], "cannot read config /no/such.yaml"),
        (["--config", "x.yaml", "--grpc-port", "1"], "--config cannot be combined with --grpc-port"),
    ],
)
def test_config_mistakes_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = runner.invoke(cli(), ["serve", *args])
    assert result.exit_code == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.stderr


PLAIN_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (INFO|WARNING|ERROR) [\w.]+: ")


@pytest.mark.parametrize("log_format", ["plain", "json"])
def test_serve_until_sigterm(tmp_path: Path, log_format: str) -> None:
    create_table(str(tmp_path / "wh" / "events"), "id bigint, city string", record_key="id")
    (tmp_path / "token").write_text("t0ken\n")
    script = (
        "import typer\n"
        "from pruner.cli import serve_cmds\n"
        "from pruner.cli.common import setup_logging\n"
        "app = typer.Typer()\n"
        "app.callback()(lambda: setup_logging())\n"
        "serve_cmds.register(app)\n"
        "app()\n"
    )
    args = ["serve", "--warehouse", f"demo={tmp_path / 'wh'}", "--grpc-port", "0", "--thrift-port", "off"]
    args += ["--metrics-port", "0", "--cache-size", "8MiB", "--token-file", str(tmp_path / "token")]
    args += ["--log-format", log_format]
    process = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"grpc=127\.0\.0\.1:(\d+) thrift=off metrics=127\.0\.0\.1:(\d+)", line)
        assert match, line + (process.stderr.read() if process.poll() is not None and process.stderr else "")
        with PruningClient(f"127.0.0.1:{match.group(1)}", token="t0ken") as client:
            assert [t.table for t in client.list_tables()] == ["events"]
        started = time.perf_counter()
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
        assert process.returncode == 0, stderr
        assert time.perf_counter() - started < 15
        if log_format == "json":
            logged = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
            messages = [entry["message"] for entry in logged]
            assert {entry["logger"] for entry in logged} >= {"pruner.cli.serve_cmds", "pruner.sidecar"}
        else:
            messages = [PLAIN_LINE.sub("", line) for line in stderr.splitlines() if PLAIN_LINE.match(line)]
        assert "received SIGTERM; shutting down" in messages and "sidecar stopped" in messages, stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
