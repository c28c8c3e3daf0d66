"""The workers' side: a worker never outlives its supervisor, even one killed with SIGKILL (no
cleanup runs; the kernel kills the workers), and a worker that cannot start is one `error:` line
naming it, which the supervisor turns into a `ConfigError` with nothing left running; a worker that
keeps dying is replaced after ever longer pauses, not in a storm."""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from builder.create import create_table
from pruner.serving.config import ConfigError, Security, ServeConfig
from pruner.supervisor.supervisor import Supervisor
from tests.pruner.supervisor.test_supervisor import alive

REPO = Path(__file__).resolve().parents[3]
TIMEOUT_S = 60.0


def test_workers_die_with_a_supervisor_killed_with_sigkill(tmp_path: Path) -> None:
    create_table(str(tmp_path / "wh" / "events"), "id bigint", record_key="id")
    log = tmp_path / "serve.log"
    args = ["serve", "-w", f"demo={tmp_path / 'wh'}", "--grpc-port", "0", "--thrift-port", "0"]
    args += ["--metrics-port", "off", "--workers", "2"]
    script = "from pruner.cli.main import app\napp()\n"
    with open(log, "wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-c", script, *args],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"},
        )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert "workers=2" in line, log.read_text()
        found = re.search(r"started 2 workers \(pids (\d+),(\d+)\)", log.read_text())
        assert found, log.read_text()
        pids = [int(pid) for pid in found.groups()]
        assert all(alive(pid) for pid in pids)
        process.send_signal(signal.SIGKILL)
        process.wait(TIMEOUT_S)
        deadline = time.monotonic() + TIMEOUT_S
        while any(alive(pid) for pid in pids):
            assert time.monotonic() < deadline, f"workers outlived the supervisor: {pids}"
            time.sleep(0.1)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_worker_that_cannot_start_is_a_config_error(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    for name in ("tls.crt", "tls.key"):
        (tmp_path / name).write_text("not a PEM file\n")
    security = Security(tls_cert_file=str(tmp_path / "tls.crt"), tls_key_file=str(tmp_path / "tls.key"))
    config = ServeConfig(
        {"demo": str(tmp_path)},
        grpc_port=0,
        thrift_port=None,
        metrics_port=None,
        workers=2,
        security=security,
    )
    supervisor = Supervisor(config, grace=1.0)
    with pytest.raises(ConfigError, match=r"worker \d exited with status 2 while starting"):
        supervisor.start()
    assert supervisor.pids() == []
    assert re.search(
        r"^error: worker \d: cannot listen for gRPC on 127\.0\.0\.1:\d+", capfd.readouterr().err, re.M
    )


def test_a_worker_that_keeps_dying_is_replaced_ever_more_slowly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = ServeConfig({"demo": str(tmp_path)}, grpc_port=0, thrift_port=None, metrics_port=None, workers=1)
    caplog.set_level(logging.WARNING, logger="pruner.supervisor.supervisor")
    with Supervisor(config, grace=1.0) as supervisor:
        for deaths in range(1, 4):
            (pid,) = supervisor.pids()
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + TIMEOUT_S
            while supervisor.states().restarts < deaths or not supervisor.pids():
                assert time.monotonic() < deadline, "no replacement"
                time.sleep(0.1)
    delays = [
        float(d)
        for d in re.findall(r"exited with signal SIGKILL; starting a replacement in ([\d.]+) s", caplog.text)
    ]
    assert delays == [0.5, 1.0, 2.0]
