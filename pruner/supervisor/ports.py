"""Ports that the workers of one sidecar share. The supervisor first binds each configured port
without SO_REUSEPORT — which fails if any socket holds it, shared or not, so a port taken by another
program stays a configuration error — and takes the kernel's choice for port 0. It then holds the
port for its whole life with a socket bound with SO_REUSEPORT but not listening: the workers bind
the same port with SO_REUSEPORT and accept on it (the kernel spreads new connections over the
listening ones; a socket that does not listen gets none), and no other program can take the port
while a worker is being replaced."""

from __future__ import annotations

import contextlib
import socket
from dataclasses import dataclass

from pruner.serving.config import ConfigError


@dataclass
class SharedPort:
    """A port held for the workers; `close` gives it up."""

    port: int
    holder: socket.socket

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.holder.close()


def reserve(endpoint: str, host: str, port: int) -> SharedPort:
    """Hold `port` (0: a free one) on `host` for workers that bind it with SO_REUSEPORT; a port in
    use is a `ConfigError` naming the endpoint (gRPC, Thrift)."""
    shown = f"{host}:{port}"
    try:
        family, _, _, _, address = socket.getaddrinfo(
            host, port, 0, socket.SOCK_STREAM, 0, socket.AI_PASSIVE
        )[0]
        with socket.socket(family, socket.SOCK_STREAM) as probe:  # fails if anyone holds the port
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # not for TIME_WAIT leftovers
            probe.bind(address)
            chosen = int(probe.getsockname()[1])
        holder = socket.socket(family, socket.SOCK_STREAM)
        try:
            # SO_REUSEPORT only: with SO_REUSEADDR too, a listener of another program that sets
            # SO_REUSEADDR could bind beside a holder that does not listen.
            holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            holder.bind((address[0], chosen, *address[2:]))
        except BaseException:
            holder.close()
            raise
    except OSError as exc:
        raise ConfigError(f"cannot listen for {endpoint} on {shown}: {exc.strerror or exc}") from None
    return SharedPort(chosen, holder)
