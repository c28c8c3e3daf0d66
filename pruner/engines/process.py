"""Starting, stopping and inspecting local engine instances. `start` fetches the engine and its
Java runtime if needed (and, for Trino's native catalog, gives the instance its plugins), writes the
instance's configuration, runs the engine's own launcher in the foreground (`launcher run`) as a
daemon of ours — its own session, so its process group is its pid, stdout and stderr appended to
launcher.log — records the instance in `<cache>/run/<engine>-<port>.json`, and returns only once a
query on each lakeprune catalog can run (`readiness`); if the server exits or the timeout passes,
it is stopped and the error shows its log. The launcher's own daemon mode (`launcher start`) is not
used: Trino's Airlift launcher forks a copy of itself that decides from the pid file whether it is
the daemon, while its parent writes that file with a moment unlocked between truncating and writing
it; 3 and 7 of 300 starts (two runs on this machine, a stand-in `java`) lost their daemon or
reported a pid that was not the server's, none of 300 with `run`. `stop` sends SIGTERM to the
process group, then SIGKILL after a grace period. A recorded pid counts as the instance only while
that process's working directory is the instance's data directory (the launcher runs there), so a
reused pid is never signalled."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from pruner.engines.cache import CacheLayout
from pruner.engines.catalog import (
    CATALOG_NAME,
    THRIFT_CATALOG_NAME,
    parse_sidecar_addresses,
    sidecar_of,
)
from pruner.engines.config import (
    DEFAULT_HEAP_MB,
    LAUNCHER_LOG,
    LOOPBACK,
    SERVER_LOG,
    InstanceConfig,
    config_files,
    lakeprune_catalogs,
    write_config,
)
from pruner.engines.errors import (
    EngineAlreadyRunningError,
    EngineError,
    EngineStartError,
    InvalidEngineConfigError,
    PortInUseError,
)
from pruner.engines.fetch import fetch_engine
from pruner.engines.native_catalog import NativeCatalog, grpc_of
from pruner.engines.plugin import instance_plugins, locate_plugin
from pruner.engines.probe import server_info
from pruner.engines.readiness import Target, wait_until_ready
from pruner.engines.runtime import ensure_java_runtime
from pruner.engines.spec import EngineSpec, engine_spec

logger = logging.getLogger(__name__)

STARTUP_TIMEOUT_S = 180.0
STOP_GRACE_S = 30.0
LOG_EXCERPT_LINES = 20
IDENTITY_SETTLE_S = 1.0
IDENTITY_POLL_S = 0.02
REAP_TIMEOUT_S = 10.0
# The daemons this process started, by pid, so that stopping one also reaps it.
_daemons: dict[int, subprocess.Popen[bytes]] = {}


@dataclass(frozen=True)
class EngineInstance:
    """A server started by the launcher (as recorded in its state file)."""

    kind: str
    version: str
    port: int
    pid: int
    data_dir: Path
    sidecar: str | None  # the Thrift catalog's sidecar addresses (None: no Thrift catalog)
    java_home: Path
    started_at: float  # seconds since the epoch
    startup_seconds: float | None = None
    host: str = LOOPBACK
    grpc: str | None = None  # the native catalog's sidecar addresses (None: no native catalog)
    # Catalogs whose sidecar did not answer when the engine became ready, and why.
    warnings: tuple[str, ...] = ()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def server_log(self) -> Path:
        return self.data_dir / SERVER_LOG

    @property
    def launcher_log(self) -> Path:
        return self.data_dir / LAUNCHER_LOG

    @property
    def pid_file(self) -> Path:
        return self.data_dir / "var" / "run" / "launcher.pid"

    def to_json(self) -> dict[str, Any]:
        values = asdict(self)
        values["data_dir"] = str(self.data_dir)
        values["java_home"] = str(self.java_home)
        values["warnings"] = list(self.warnings)
        return values

    @classmethod
    def from_json(cls, values: Mapping[str, Any]) -> EngineInstance:
        return cls(
            kind=str(values["kind"]),
            version=str(values["version"]),
            port=int(values["port"]),
            pid=int(values["pid"]),
            data_dir=Path(values["data_dir"]),
            sidecar=None if values.get("sidecar") is None else str(values["sidecar"]),
            java_home=Path(values["java_home"]),
            started_at=float(values["started_at"]),
            startup_seconds=None
            if values.get("startup_seconds") is None
            else float(values["startup_seconds"]),
            host=str(values.get("host", LOOPBACK)),
            grpc=None if values.get("grpc") is None else str(values["grpc"]),
            warnings=tuple(str(w) for w in values.get("warnings", ())),
        )


@dataclass(frozen=True)
class EngineStatus:
    kind: str
    port: int
    running: bool
    instance: EngineInstance | None
    answering: bool  # /v1/info answers and the node has finished starting
    sidecar: str | None  # the Thrift catalog's addresses, from its catalog file
    grpc: str | None = None  # the native catalog's addresses, from its catalog file

    @property
    def uptime_seconds(self) -> float | None:
        if not self.running or self.instance is None:
            return None
        return max(0.0, time.time() - self.instance.started_at)

    def to_json(self) -> dict[str, Any]:
        instance = self.instance
        return {
            "engine": self.kind,
            "version": instance.version if instance else engine_spec(self.kind).version,
            "port": self.port,
            "running": self.running,
            "answering": self.answering,
            "pid": instance.pid if instance and self.running else None,
            "uptime_seconds": None if self.uptime_seconds is None else round(self.uptime_seconds, 1),
            "url": instance.url if instance and self.running else None,
            "sidecar": self.sidecar,
            "grpc": self.grpc,
            "data_dir": str(instance.data_dir) if instance else None,
            "server_log": str(instance.server_log) if instance else None,
        }


def start(
    engine: str | EngineSpec,
    port: int | None = None,
    sidecar: str | None = None,
    data_dir: Path | str | None = None,
    extra_catalogs: Mapping[str, Mapping[str, str]] | None = None,
    *,
    grpc: NativeCatalog | None = None,
    plugin: Path | None = None,
    heap_mb: int = DEFAULT_HEAP_MB,
    timeout: float = STARTUP_TIMEOUT_S,
    layout: CacheLayout | None = None,
) -> EngineInstance:
    """Start a single-node engine on `port` (None: the engine's default, 0: any free port) with its
    lakeprune catalogs: without `grpc`, `lakeprune` over Thrift to `sidecar` (default
    DEFAULT_SIDECAR); with it, `lakeprune` through the native connector (its plugin from `plugin`,
    else as `plugin.locate_plugin` finds it) and, if `sidecar` is given, `lakeprune_thrift`.
    Returns once a query on each of them can run (see `readiness`); `warnings` on the result name
    catalogs whose sidecar did not answer."""
    spec = _spec(engine)
    layout = layout or CacheLayout.default()
    addresses = None if sidecar is None else ",".join(parse_sidecar_addresses(sidecar))
    port = _choose_port(spec, port)
    running = _recorded_instance(layout, spec, port)
    if running is not None and _alive(running):
        raise EngineAlreadyRunningError(
            f"{spec.display_name} already runs on port {port} (pid {running.pid}); "
            f"stop it with `lakeprune {spec.kind} stop --port {port}`"
        )
    _check_port_free(port)
    directory = Path(data_dir).expanduser().absolute() if data_dir else layout.default_data_dir(spec, port)
    config = InstanceConfig(spec, port, directory, addresses, heap_mb, extra_catalogs, grpc)
    config_files(config)  # validates heap and catalogs before anything is downloaded
    _check_data_dir_free(directory)
    plugin_source = None if grpc is None else locate_plugin(spec, plugin)

    home = fetch_engine(spec, layout)
    java = ensure_java_runtime(spec.java, layout)
    write_config(config)
    if plugin_source is not None:
        instance_plugins(spec, home, plugin_source, config.plugin_dir)
    _set_aside_old_logs(directory)
    instance = _launch(spec, home, java.home, config)
    _write_state(layout, spec, instance)
    logger.info(
        "started %s %s (pid %d), waiting until it answers on %s and its catalogs %s can run queries",
        spec.display_name,
        spec.version,
        instance.pid,
        instance.url,
        ", ".join(lakeprune_catalogs(config)),
    )
    target = Target(
        spec, instance.host, instance.port, lambda: _alive(instance), lambda: _log_excerpt(instance)
    )
    try:
        warnings = wait_until_ready(
            target, catalog_sidecars(config), timeout, other_catalogs=tuple(config.extra_catalogs or ())
        )
    except BaseException:
        _terminate(instance)
        _forget(layout, spec, instance)
        raise
    for warning in warnings:
        logger.warning("%s", warning)
    startup = round(time.time() - instance.started_at, 1)
    ready = replace(instance, startup_seconds=startup, warnings=tuple(warnings))
    _write_state(layout, spec, ready)
    return ready


def catalog_sidecars(config: InstanceConfig) -> dict[str, tuple[str, ...]]:
    """Each lakeprune catalog of the instance -> the sidecar addresses it talks to."""
    sidecars: dict[str, tuple[str, ...]] = {}
    for name, text in lakeprune_catalogs(config).items():
        addresses = grpc_of(text) or sidecar_of(config.spec, text) or ""
        sidecars[name] = parse_sidecar_addresses(addresses)
    return sidecars


def stop(
    engine: str | EngineSpec,
    port: int | None = None,
    *,
    layout: CacheLayout | None = None,
    grace: float = STOP_GRACE_S,
) -> EngineInstance | None:
    """Stop the instance on `port`; returns what was stopped, or None if none was running."""
    spec = _spec(engine)
    layout = layout or CacheLayout.default()
    port = spec.default_port if port is None else port
    instance = _recorded_instance(layout, spec, port)
    if instance is None:
        return None
    was_running = _alive(instance)
    if was_running:
        _terminate(instance, grace)
    _forget(layout, spec, instance)
    return instance if was_running else None


def status(
    engine: str | EngineSpec, port: int | None = None, *, layout: CacheLayout | None = None
) -> EngineStatus:
    spec = _spec(engine)
    layout = layout or CacheLayout.default()
    port = spec.default_port if port is None else port
    instance = _recorded_instance(layout, spec, port)
    if instance is None:
        return EngineStatus(spec.kind, port, running=False, instance=None, answering=False, sidecar=None)
    running = _alive(instance)
    info = server_info(instance.host, port) if running else None
    sidecar, grpc = instance.sidecar, instance.grpc
    catalogs = instance.data_dir / "etc" / "catalog"
    for name in (CATALOG_NAME, THRIFT_CATALOG_NAME):
        try:
            text = (catalogs / f"{name}.properties").read_text()
        except OSError:
            continue
        sidecar = sidecar_of(spec, text) or sidecar
        grpc = grpc_of(text) or grpc
    answering = info is not None and info.get("starting") is False
    return EngineStatus(spec.kind, port, running, instance, answering, sidecar, grpc)


def _spec(engine: str | EngineSpec) -> EngineSpec:
    return engine if isinstance(engine, EngineSpec) else engine_spec(engine)


def _choose_port(spec: EngineSpec, port: int | None) -> int:
    if port is None:
        return spec.default_port
    if port == 0:
        with socket.socket() as probe:
            probe.bind((LOOPBACK, 0))
            return int(probe.getsockname()[1])
    if not 0 < port < 65536:
        raise InvalidEngineConfigError(f"port must be between 1 and 65535 (or 0 for any), got {port}")
    return port


def _check_port_free(port: int) -> None:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((LOOPBACK, port))
        except OSError:
            raise PortInUseError(
                f"port {port} is already in use by another process; choose another with --port"
            ) from None


def _check_data_dir_free(data_dir: Path) -> None:
    pid_file = data_dir / "var" / "run" / "launcher.pid"
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return
    if _process_alive(pid, data_dir):
        raise EngineAlreadyRunningError(
            f"an engine (pid {pid}) already runs from data directory {data_dir}; choose another"
        )


def _set_aside_old_logs(data_dir: Path) -> None:
    """Keep the previous run's logs as *.previous so the error excerpt shows only this run."""
    for name in ("server.log", "launcher.log"):
        log = data_dir / "var" / "log" / name
        if log.exists():
            log.replace(log.with_name(name + ".previous"))


def _launch(spec: EngineSpec, home: Path, java_home: Path, config: InstanceConfig) -> EngineInstance:
    """Run `launcher run` as a daemon: the launcher writes its pid file and executes Java in
    place, so the pid spawned here is the server's. The server log's location is in jvm.config
    (see `config.jvm_config`), where `launcher start` would have put it."""
    started_at = time.time()
    grpc = None if config.grpc is None else config.grpc.addresses
    sidecars = catalog_sidecars(config)
    thrift = THRIFT_CATALOG_NAME if grpc is not None else CATALOG_NAME
    sidecar = ",".join(sidecars[thrift]) if thrift in sidecars else None
    placeholder = EngineInstance(
        spec.kind, spec.version, config.port, 0, config.data_dir, sidecar, java_home, started_at, grpc=grpc
    )
    # launcher.py's shebang wants `python` on PATH: run it with this interpreter instead.
    interpreter = [sys.executable] if spec.python_launcher else []
    command = [
        *interpreter,
        str(home / spec.launcher),
        "run",
        f"--etc-dir={config.etc}",
        f"--data-dir={config.data_dir}",
        f"--pid-file={placeholder.pid_file}",
    ]
    env = dict(os.environ)
    env["JAVA_HOME"] = str(java_home)  # the launchers run $JAVA_HOME/bin/java ...
    env["PATH"] = f"{java_home / 'bin'}{os.pathsep}{env.get('PATH', '')}"  # ... or `java` on PATH
    # No engine runs from the data directory (checked): a pid file left by an earlier run could
    # name a process that reused its pid, which the launcher would take for a running server.
    placeholder.pid_file.unlink(missing_ok=True)
    placeholder.launcher_log.parent.mkdir(parents=True, exist_ok=True)
    with placeholder.launcher_log.open("ab") as log:
        try:
            daemon = subprocess.Popen(
                command,
                cwd=config.data_dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise EngineStartError(
                f"cannot run {spec.display_name}'s launcher {command[len(interpreter)]}: {exc.strerror}"
            ) from None
    _daemons[daemon.pid] = daemon
    return replace(placeholder, pid=daemon.pid)


def _log_excerpt(instance: EngineInstance) -> str:
    """Where the log is and its telling lines: from the first ERROR on, else the last lines."""
    for log in (instance.server_log, instance.launcher_log):
        try:
            lines = log.read_text(errors="replace").splitlines()
        except OSError:
            continue
        if not any(line.strip() for line in lines):
            continue
        first_error = next(
            (i for i, line in enumerate(lines) if "\tERROR\t" in line or "Error:" in line), None
        )
        excerpt = (
            lines[first_error : first_error + LOG_EXCERPT_LINES]
            if first_error is not None
            else lines[-LOG_EXCERPT_LINES:]
        )
        return f"from {log}:\n" + "\n".join(excerpt)
    return f"no log written (looked at {instance.server_log} and {instance.launcher_log})"


def _process_alive(pid: int, data_dir: Path) -> bool:
    """Whether `pid` runs and is the engine of `data_dir` (its working directory). A starting JVM
    steps out of its working directory for a moment (HotSpot creates its perf-data file from
    inside `/tmp/hsperfdata_<user>`, measured ~0.1 s after the launcher execs it): a working
    directory elsewhere counts only if it stays elsewhere for `IDENTITY_SETTLE_S`."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    proc = Path("/proc") / str(pid)
    if not proc.is_dir():  # no procfs (macOS): the signal check is all there is
        return True
    expected = data_dir.resolve()
    deadline = time.monotonic() + IDENTITY_SETTLE_S
    while True:
        try:
            if (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return False
            if Path(os.readlink(proc / "cwd")) == expected:
                return True
        except FileNotFoundError:  # it exited
            return False
        except (OSError, IndexError):
            pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(IDENTITY_POLL_S)


def _alive(instance: EngineInstance) -> bool:
    return _process_alive(instance.pid, instance.data_dir)


def _terminate(instance: EngineInstance, grace: float = STOP_GRACE_S) -> None:
    """SIGTERM to the instance's process group, SIGKILL after `grace` seconds."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        if _gone(instance):
            return
        _signal(instance.pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if _gone(instance):
                return
            time.sleep(0.2)
    if not _gone(instance):
        raise EngineError(f"could not stop pid {instance.pid}")


def _gone(instance: EngineInstance) -> bool:
    """Whether the instance no longer runs; a daemon of this process that exited is reaped."""
    if _alive(instance):
        return False
    daemon = _daemons.get(instance.pid)
    if daemon is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):  # exiting: reaped in a moment
            daemon.wait(timeout=REAP_TIMEOUT_S)
            del _daemons[instance.pid]
    return True


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        if os.getpgid(pid) == pid:  # the launcher's daemon leads its own session and group
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)


def _write_state(layout: CacheLayout, spec: EngineSpec, instance: EngineInstance) -> None:
    path = layout.state_file(spec, instance.port)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(instance.to_json(), indent=2) + "\n")
    temporary.replace(path)


def _recorded_instance(layout: CacheLayout, spec: EngineSpec, port: int) -> EngineInstance | None:
    path = layout.state_file(spec, port)
    try:
        return EngineInstance.from_json(json.loads(path.read_text()))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        logger.warning("ignoring unreadable state file %s", path)
        return None


def _forget(layout: CacheLayout, spec: EngineSpec, instance: EngineInstance) -> None:
    layout.state_file(spec, instance.port).unlink(missing_ok=True)
    instance.pid_file.unlink(missing_ok=True)
