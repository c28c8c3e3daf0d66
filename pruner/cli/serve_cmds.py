"""`lakeprune serve`: run the pruning sidecar (gRPC, Thrift, metrics) until SIGTERM or SIGINT, then
shut down gracefully: health turns NOT_SERVING, new calls are refused, calls in flight finish.

    lakeprune serve --config sidecar.yaml [--log-format plain|json]
    lakeprune serve --warehouse demo=/data/warehouse [--warehouse ...] [--host H] [--grpc-port N]
                    [--thrift-port N|off] [--metrics-port N|off] [--cache-size 512MiB] [--token-file F]
                    [--workers N]

With more than one worker (default: one per core), a supervisor runs that many planning processes
behind the same ports (`pruner.supervisor`); `--workers 1` serves from this process alone.
A configuration mistake prints one `error:` line and exits with status 2 before anything listens.
The server logs to stderr in plain text lines or JSON lines (`pruner.serving.logs`), never through
the interactive commands' rich handler."""

from __future__ import annotations

import logging
import signal
import threading
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from pruner.cli.common import cli_command, console
from pruner.serving import logs
from pruner.serving.config import ConfigError, ServeConfig
from pruner.serving.logs import LogFormat

log = logging.getLogger(__name__)
SHUTDOWN_GRACE_SECONDS = 10.0

PortOption = Annotated[str | None, typer.Option(help="Port number, 0 for any free port, or 'off'.")]


def serve(
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="YAML config (connector-config/sidecar.yaml).")
    ] = None,
    warehouse: Annotated[
        list[str] | None,
        typer.Option(
            "--warehouse", "-w", help="NAME=ROOT: schema NAME is the tables under ROOT. Repeatable."
        ),
    ] = None,
    host: Annotated[str | None, typer.Option(help="Address to listen on (default 127.0.0.1).")] = None,
    grpc_port: PortOption = None,
    thrift_port: PortOption = None,
    metrics_port: PortOption = None,
    cache_size: Annotated[
        str | None, typer.Option(help="Index cache size, e.g. 512MiB (default) or 2GiB.")
    ] = None,
    token_file: Annotated[
        str | None, typer.Option(help="File holding the bearer token gRPC callers must send.")
    ] = None,
    workers: Annotated[
        str | None,
        typer.Option(
            help="Planning processes behind the same ports: a number, or auto (default: one per core)."
        ),
    ] = None,
    worker_grpc_port: Annotated[
        int | None,
        typer.Option(
            help="Worker i also serves gRPC alone on this port + i - 1 (0: free ports); list these "
            "ports in a client's addresses to spread its calls over every worker."
        ),
    ] = None,
    log_format: Annotated[
        LogFormat, typer.Option(help="Log lines on stderr: plain text, or one JSON object per line.")
    ] = LogFormat.PLAIN,
) -> None:
    """Run the pruning sidecar until SIGTERM / SIGINT."""
    options = {
        "--warehouse": warehouse,
        "--host": host,
        "--grpc-port": grpc_port,
        "--thrift-port": thrift_port,
        "--metrics-port": metrics_port,
        "--cache-size": cache_size,
        "--token-file": token_file,
        "--workers": workers,
        "--worker-grpc-port": worker_grpc_port is not None,
    }
    if config is not None:
        given = [name for name, value in options.items() if value]
        if given:
            raise ConfigError(f"--config cannot be combined with {', '.join(given)}: put them in the file")
        settings = ServeConfig.load(config)
    else:
        if not warehouse:
            raise ConfigError("give --config FILE, or at least one --warehouse NAME=ROOT")
        settings = ServeConfig.from_options(
            warehouse,
            host=host,
            grpc_port=_port("--grpc-port", grpc_port),
            thrift_port=_port("--thrift-port", thrift_port),
            metrics_port=_port("--metrics-port", metrics_port),
            cache_size=cache_size,
            token_file=token_file,
            workers=_workers(workers),
            worker_grpc_port=worker_grpc_port,
        )
    run(settings, log_format)


def run(settings: ServeConfig, log_format: LogFormat = LogFormat.PLAIN) -> None:
    """Start a sidecar (with `settings.workers` planning processes) and serve until SIGTERM or
    SIGINT, logging in `log_format`."""
    from pruner.sidecar import Sidecar
    from pruner.supervisor.supervisor import Supervisor

    logs.install(log_format)
    stop = threading.Event()

    def on_signal(number: int, _frame: FrameType | None) -> None:
        log.info("received %s; shutting down", signal.Signals(number).name)
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        sidecar: Sidecar | Supervisor
        own: list[int]
        if settings.workers == 1:
            # one process: its own port is the shared one's twin, so client address lists stay valid
            single = Sidecar(settings, own_grpc_port=settings.worker_grpc_port, tune_gc=True).start()
            own, sidecar = ([] if single.own_grpc_port is None else [single.own_grpc_port]), single
        else:
            supervisor = Supervisor(settings, log_format, SHUTDOWN_GRACE_SECONDS).start()
            own, sidecar = supervisor.worker_grpc_ports, supervisor
        worker_ports = ",".join(_shown(settings.host, p) for p in own)
        console.print(
            f"lakeprune sidecar listening: grpc={_shown(settings.host, sidecar.grpc_port)} "
            f"thrift={_shown(settings.host, sidecar.thrift_port)} "
            f"metrics={_shown(settings.host, sidecar.metrics_port)} workers={settings.workers}"
            + (f" worker_grpc={worker_ports}" if worker_ports else ""),
            highlight=False,
            soft_wrap=True,
        )
        while not stop.wait(0.5):
            pass
        sidecar.stop(SHUTDOWN_GRACE_SECONDS)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _port(option: str, value: str | None) -> int | bool | None:
    if value is None:
        return None
    if value.strip().lower() == "off":
        return False
    try:
        return int(value)
    except ValueError:
        raise ConfigError(f"{option} must be a port number or off, got {value!r}") from None


def _workers(value: str | None) -> int | None:
    if value is None or value.strip().lower() == "auto":
        return None
    try:
        return int(value)
    except ValueError:
        raise ConfigError(f"--workers must be a number of processes or auto, got {value!r}") from None


def _shown(host: str, port: int | None) -> str:
    return "off" if port is None else f"{host}:{port}"


def register(root: typer.Typer) -> None:
    root.command("serve")(cli_command(serve))
