"""The test servers' start (`tests/support_servers.py`): a server whose port was taken between the
check and its bind is started again on new ports; any other failure is raised at once."""

from __future__ import annotations

import socket
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support_servers import (
    LoopbackServer,
    free_port,
    server_ports,
    start_on_free_ports,
    start_server,
    wait_ready,
)


@dataclass
class HttpServer(LoopbackServer):
    port: int


def _http_server(directory: Path, port: int) -> HttpServer:
    log_path = directory / "http.log"
    args = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", "--directory", str(directory)]
    args.append(str(port))
    process = start_server(args, log_path)
    wait_ready(
        process,
        log_path,
        lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).close(),
        f"http.server on {port}",
    )
    return HttpServer(process, log_path, port)


def test_a_server_whose_port_was_taken_starts_again_on_a_new_port(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken: int = held.getsockname()[1]
        ports = iter([taken])
        server = start_on_free_ports(
            lambda directory: _http_server(directory, next(ports, None) or free_port("http.server")), tmp_path
        )
        try:
            assert server.port != taken
            assert "address already in use" in (tmp_path / "attempt-1" / "http.log").read_text().lower()
            assert server.log_path.parent == tmp_path / "attempt-2"
        finally:
            server.stop()


def test_a_server_that_fails_for_another_reason_is_not_started_again(tmp_path: Path) -> None:
    def failing(directory: Path) -> HttpServer:
        log_path = directory / "fails.log"
        process = start_server([sys.executable, "-c", "raise SystemExit('no config')"], log_path)
        wait_ready(process, log_path, _refused, "a server")
        raise AssertionError("the server should have exited")

    with pytest.raises(RuntimeError, match="no config"):
        start_on_free_ports(failing, tmp_path)
    assert not (tmp_path / "attempt-2").exists()


def _refused() -> None:
    """A probe of a server that never answers."""
    raise ConnectionRefusedError


def test_server_ports_lie_below_the_kernels_ephemeral_range() -> None:
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = server_ports()
    assert ports.stop <= max(low, ports.start + 1_000)
    assert ports.start <= free_port("a test") < ports.stop
