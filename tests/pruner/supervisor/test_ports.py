"""Ports the workers share: a free one is chosen for 0, a port another program holds is a
`ConfigError` naming the endpoint, and a held port takes listeners that bind it with SO_REUSEPORT
(the workers) while refusing one that does not."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from pruner.serving.config import ConfigError
from pruner.supervisor.ports import SharedPort, reserve


@pytest.fixture
def held() -> Iterator[SharedPort]:
    port = reserve("gRPC", "127.0.0.1", 0)
    yield port
    port.close()


def listener(port: int, reuse_port: bool) -> socket.socket:
    return socket.create_server(("127.0.0.1", port), reuse_port=reuse_port)


def test_port_0_is_one_free_port_taken_by_shared_listeners(held: SharedPort) -> None:
    assert held.port > 0
    with listener(held.port, True) as first, listener(held.port, True) as second:
        assert first.getsockname()[1] == second.getsockname()[1] == held.port
        with socket.create_connection(("127.0.0.1", held.port), timeout=5):
            pass  # accepted by a listener: the holder itself does not listen


def test_a_held_port_refuses_a_listener_that_does_not_share(held: SharedPort) -> None:
    with pytest.raises(OSError):
        listener(held.port, False)


@pytest.mark.parametrize("other_shares", [False, True])
def test_a_port_another_program_holds_is_a_config_error(other_shares: bool) -> None:
    with listener(0, other_shares) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError, match=rf"cannot listen for Thrift on 127\.0\.0\.1:{port}: .*in use"):
            reserve("Thrift", "127.0.0.1", port)


def test_closing_gives_the_port_up(held: SharedPort) -> None:
    held.close()
    with listener(held.port, False):
        pass
