"""The real thing: Trino 476 started by the launcher (downloaded into the cache on first use, about
800 MB, plus a Java runtime from PyPI), queried with Trino's own client, and stopped with no
process left behind. The lakeprune catalog lists even though no sidecar answers, and the start says
so."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest

from pruner.engines import TRINO, CacheLayout, status
from tests.e2e.engines import local_engine

pytestmark = [pytest.mark.slow, pytest.mark.engine]


def processes_in(directory: Path) -> list[int]:
    """Pids of processes whose working directory is `directory` (the launcher chdirs there)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if Path(os.readlink(proc / "cwd")) == directory.resolve():
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


def free_address() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"  # closed again: nobody listens there


def test_trino_starts_answers_and_stops(tmp_path: Path) -> None:
    layout = CacheLayout.default()
    if not layout.artifact(TRINO.server).is_file() and shutil.which("mvn") is None:
        pytest.skip(f"Trino 476 is not in {layout.m2} and Maven (mvn) is not installed to fetch it")
    data_dir = tmp_path / "trino"
    nobody = free_address()
    with local_engine("trino", nobody, port=0, data_dir=data_dir) as engine:
        assert engine.query("SELECT 1") == [[1]]
        assert {row[0] for row in engine.query("SHOW CATALOGS")} == {"lakeprune", "system"}
        state = status("trino", engine.port)
        assert state.running and state.answering and state.sidecar == nobody
        assert state.instance is not None
        assert state.instance.warnings == (
            f"catalog lakeprune: no sidecar accepts connections at {nobody}; its queries fail until one does",
        )
        pid = state.instance.pid
        assert processes_in(data_dir) == [pid]
    assert not status("trino", engine.port).running
    assert processes_in(data_dir) == []
    assert not Path(f"/proc/{pid}/cwd").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
