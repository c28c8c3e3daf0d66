"""`lakeprune serve`: configuration mistakes are one `error:` line and exit status 2, and a running
sidecar — one process, or a supervisor and its workers — logs plain or JSON lines (a worker's name
it) and shuts down cleanly on SIGTERM (calls are answered until then)."""

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
        (["--config", "x.yaml", "--workers", "2"], "--config cannot be combined with --workers"),
        (
            ["--warehouse", "a=/x", "--workers", "two"],
            "--workers must be a number of processes or auto, got 'two'",
        ),
        (["--warehouse", "a=/x", "--workers", "0"], "workers must be a positive integer"),
        (["--warehouse", "a=/x", "--workers", "-3"], "workers must be a positive integer"),
    ],
)
def test_config_mistakes_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = runner.invoke(cli(), ["serve", *args])
    assert result.exit_code == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.stderr


PLAIN_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (INFO|WARNING|ERROR) [\w.]+: ")
WORKER = re.compile(r"^worker (\d+): ")
# What the log says on a SIGTERM, as (worker number or None, message), with 1 and with 2 workers.
STOPPED = {
    "1": {(None, "received SIGTERM; shutting down"), (None, "sidecar stopped")},
    "2": {
        (None, "received SIGTERM; shutting down"),
        (1, "sidecar stopped"),
        (2, "sidecar stopped"),
        (None, "supervisor stopped"),
    },
}


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize("log_format", ["plain", "json"])
def test_serve_until_sigterm(tmp_path: Path, log_format: str, workers: str) -> None:
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
    args += ["--log-format", log_format, "--workers", workers, "--worker-grpc-port", "0"]
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
        match = re.search(
            rf"grpc=127\.0\.0\.1:(\d+) thrift=off metrics=127\.0\.0\.1:(\d+) workers={workers} "
            r"worker_grpc=(\S+)",
            line,
        )
        assert match, line + (process.stderr.read() if process.poll() is not None and process.stderr else "")
        own = match.group(3).split(",")  # each worker's own port (one process: its own too)
        assert len(set(own)) == int(workers) and all(a.startswith("127.0.0.1:") for a in own), line
        for address in (f"127.0.0.1:{match.group(1)}", *own):
            with PruningClient(address, token="t0ken") as client:
                assert [t.table for t in client.list_tables()] == ["events"]
        started = time.perf_counter()
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
        assert process.returncode == 0, stderr
        assert time.perf_counter() - started < 15
        if log_format == "json":
            logged = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
            messages = {(entry.get("worker"), entry["message"]) for entry in logged}
            assert {entry["logger"] for entry in logged} >= {"pruner.cli.serve_cmds", "pruner.sidecar"}
        else:
            texts = [PLAIN_LINE.sub("", line) for line in stderr.splitlines() if PLAIN_LINE.match(line)]
            messages = {_worker_and_message(text) for text in texts}
        assert messages >= STOPPED[workers], stderr
        pids = _worker_pids(stderr)
        assert len(pids) == (0 if workers == "1" else int(workers)), stderr
        for pid in pids:  # none is left behind
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _worker_and_message(text: str) -> tuple[int | None, str]:
    match = WORKER.match(text)
    return (int(match.group(1)), text[match.end() :]) if match else (None, text)


def _worker_pids(log: str) -> list[int]:
    """The workers' process ids, from the supervisor's start line (plain or JSON)."""
    found = re.search(r"started \d+ workers \(pids ([\d,]+)\)", log)
    return [int(pid) for pid in found.group(1).split(",")] if found else []
