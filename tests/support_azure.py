"""A real Azure Blob server for the tests: Microsoft's Azurite emulator (npm `azurite`), installed
once under `~/.cache/lakeprune/azurite` (never in the repository) and started on loopback, on a
free port, with its data in a temporary directory and one storage account of a random name and key,
whose signed requests it checks. `Azurite.start` waits until the Blob service answers; `stop`
sends SIGTERM, waits a bounded time, then SIGKILL, by process id, and the kernel kills the server
should the test process die first. `filesystem` is pyarrow's `AzureFileSystem` for the account and
`storage` a `Storage` rooted in a new container. One server serves a whole test session (the
`azure_server` fixture in `tests/conftest.py`)."""

from __future__ import annotations

import base64
import os
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pyarrow.fs as pafs

from pruner.storage import Storage
from tests.support_servers import LoopbackServer, free_port, start_on_free_ports, start_server, wait_ready

# The last Azurite that runs on Node 20 (3.36 and later want Node 21 or 22).
AZURITE_VERSION = "3.35.0"
AZURITE_HOME = Path.home() / ".cache" / "lakeprune" / f"azurite-{AZURITE_VERSION}"
INSTALL_TIMEOUT_S = 300.0


def azurite_blob() -> Path:
    """The `azurite-blob` script, installing Azurite with npm into the cache on first use: into a
    temporary directory renamed into place, so an interrupted install is never used."""
    script = AZURITE_HOME / "node_modules" / ".bin" / "azurite-blob"
    if script.exists():
        return script
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise RuntimeError("Azurite needs Node.js and npm on PATH (apt-get install nodejs npm)")
    AZURITE_HOME.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".azurite-", dir=AZURITE_HOME.parent))
    try:
        done = subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(staging),
                f"azurite@{AZURITE_VERSION}",
            ],
            capture_output=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            last = (done.stderr or done.stdout).decode(errors="replace").strip().splitlines()[-1:]
            raise RuntimeError(f"npm could not install azurite@{AZURITE_VERSION}: {' '.join(last)}")
        try:
            staging.rename(AZURITE_HOME)
        except OSError:
            if not script.exists():  # else a concurrent install won: use its copy
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return script


@dataclass
class Azurite(LoopbackServer):
    """A running Azurite Blob service and the one account it knows."""

    port: int
    account: str
    key: str

    @classmethod
    def start(cls, workdir: Path) -> Azurite:
        return start_on_free_ports(cls._start_in, workdir)

    @classmethod
    def _start_in(cls, workdir: Path) -> Azurite:
        port = free_port("Azurite")
        account = "lakeprune" + secrets.token_hex(4)
        key = base64.b64encode(secrets.token_bytes(32)).decode()
        data = workdir / "data"
        data.mkdir(parents=True)
        args = [
            str(azurite_blob()),
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            str(port),
            "--location",
            str(data),
            "--skipApiVersionCheck",
            # Clients keep idle connections for minutes: one Azurite closed after its default 5 s
            # makes the next request wait seconds before it is retried.
            "--blobKeepAliveTimeout",
            "600",
            "--disableTelemetry",
        ]
        env = {**os.environ, "AZURITE_ACCOUNTS": f"{account}:{key}"}
        log_path = workdir / "azurite.log"
        process = start_server(args, log_path, env)
        server = cls(process, log_path, port, account, key)
        wait_ready(
            process,
            log_path,
            lambda: server.filesystem().create_dir("lakeprune-ready"),
            f"Azurite on port {port}",
        )
        return server

    @property
    def authority(self) -> str:
        return f"127.0.0.1:{self.port}"

    def filesystem(self, key: str | None = None) -> pafs.AzureFileSystem:
        """pyarrow's file system for the account (with another `key` if given)."""
        return pafs.AzureFileSystem(
            self.account,
            account_key=self.key if key is None else key,
            blob_storage_authority=self.authority,
            dfs_storage_authority=self.authority,
            blob_storage_scheme="http",
            dfs_storage_scheme="http",
        )

    def storage(self, container: str, prefix: str) -> Storage:
        """A `Storage` rooted at `prefix` in `container` (created if missing)."""
        fs = self.filesystem()
        fs.create_dir(container)
        root = f"{container}/{prefix}"
        return Storage(fs=fs, root=root, uri=f"abfs://{self.account}@{self.authority}/{root}")
