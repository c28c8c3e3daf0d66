"""What the tests' real servers (SeaweedFS S3 in `tests/support_s3.py`, Azurite in
`tests/support_azure.py`, fake-gcs-server in `tests/support_gcs.py`) share: free loopback ports, a
child process that the kernel kills should the test process die first, a wait until it answers,
and a bounded stop by process id (SIGTERM, a wait, then SIGKILL)."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import secrets
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 3.0
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_LIBC = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def port_is_free(port: int) -> bool:
    """Whether `port` can be bound on loopback now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port(server: str) -> int:
    """A port, picked at random, that is free on loopback now (for a server that needs one port)."""
    rng = secrets.SystemRandom()
    for _ in range(200):
        port = rng.randrange(20_000, 60_000)
        if port_is_free(port):
            return port
    raise RuntimeError(f"no free loopback port for {server}")


def die_with_parent() -> None:
    """In the child before exec: the kernel sends it SIGKILL if the test process dies first (even
    by SIGKILL, when no teardown runs), so no server outlives its test session."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def start_server(
    args: list[str], log_path: Path, env: Mapping[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start `args` with its output in `log_path`, no input, dying with the test process."""
    with open(log_path, "wb") as log:
        return subprocess.Popen(
            args,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=None if env is None else dict(env),
            preexec_fn=die_with_parent,  # noqa: PLW1509 (one C call, libc loaded before the fork)
        )


def stop_server(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, a bounded wait, then SIGKILL; always reaps the process."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=STOP_TIMEOUT_S)


def wait_ready(
    process: subprocess.Popen[bytes], log_path: Path, probe: Callable[[], object], name: str
) -> None:
    """Until `probe` succeeds (it raises `OSError` while the server is not ready). If the server
    exits or the deadline passes, it is stopped and the error carries the end of its log."""
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited with {process.returncode}: {_tail(log_path)}")
            try:
                probe()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{name} not ready: {_tail(log_path)}") from None
            time.sleep(0.3)
    except BaseException:
        stop_server(process)
        raise


def _tail(log_path: Path) -> str:
    return log_path.read_text(errors="replace")[-2000:]


@dataclass
class LoopbackServer:
    """A server process started by `start_server`, with its log."""

    process: subprocess.Popen[bytes]
    log_path: Path

    def stop(self) -> None:
        """SIGTERM, a bounded wait, then SIGKILL; always reaps the process."""
        stop_server(self.process)

    close = stop  # for contextlib.closing
