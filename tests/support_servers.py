"""What the tests' real servers (SeaweedFS S3 in `tests/support_s3.py`, Azurite in
`tests/support_azure.py`, fake-gcs-server in `tests/support_gcs.py`) share: free loopback ports
below the kernel's ephemeral range (where no client connection takes them), a start that picks new
ports when one was taken between the check and the server's bind, a child process that the kernel
kills should the test process die first, a wait until it answers, and a bounded stop by process id
(SIGTERM, a wait, then SIGKILL)."""

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
from typing import TypeVar

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 3.0
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_LIBC = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_LOWEST_SERVER_PORT = 20_000
_EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
START_ATTEMPTS = 3
_ADDRESS_IN_USE = ("address already in use", "eaddrinuse")
ServerT = TypeVar("ServerT", bound="LoopbackServer")


def server_ports() -> range:
    """The ports the tests' servers listen on: below the kernel's ephemeral range, from which every
    outgoing connection on the machine (Trino's, Spark's, a client's) takes its local port, so a
    port found free stays free until the server binds it unless another server takes it."""
    try:
        ephemeral_low = int(_EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral_low = 32_768  # Linux's default
    return range(_LOWEST_SERVER_PORT, max(ephemeral_low, _LOWEST_SERVER_PORT + 1_000))


def port_is_free(port: int) -> bool:
    """Whether `port` can be bound on loopback now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port(server: str) -> int:
    """A port of `server_ports`, picked at random, that is free on loopback now (for a server that
    needs one port)."""
    rng = secrets.SystemRandom()
    ports = server_ports()
    for _ in range(200):
        port = rng.randrange(ports.start, ports.stop)
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


def start_on_free_ports(start: Callable[[Path], ServerT], workdir: Path) -> ServerT:
    """`start(directory)` (which picks its ports, starts the server and waits until it answers),
    again with a new directory and so new ports when the server exited because a port it was given
    was taken after it was found free (by another test server of the session); any other failure,
    or the last attempt's, is raised."""
    for attempt in range(1, START_ATTEMPTS + 1):
        directory = workdir / f"attempt-{attempt}"
        directory.mkdir(parents=True)
        try:
            return start(directory)
        except RuntimeError as error:
            if attempt == START_ATTEMPTS or not any(s in str(error).lower() for s in _ADDRESS_IN_USE):
                raise
    raise AssertionError("unreachable: the last attempt returns or raises")


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
