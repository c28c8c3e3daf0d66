"""Process management without Java: argument and port errors come before any download, recorded
instances are recognised by their working directory, and stop / status work on a stand-in
process (a `sleep` in its own session) as they would on an engine."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pruner.engines import process
from pruner.engines.cache import CacheLayout
from pruner.engines.catalog import catalog_file
from pruner.engines.config import InstanceConfig
from pruner.engines.errors import (
    EngineAlreadyRunningError,
    EngineStartError,
    InvalidEngineConfigError,
    PluginNotFoundError,
    PortInUseError,
    UnknownEngineError,
)
from pruner.engines.native_catalog import NativeCatalog, native_catalog_file
from pruner.engines.process import EngineInstance, start, status, stop
from pruner.engines.spec import PRESTO, TRINO


@pytest.fixture
def layout(tmp_path: Path) -> CacheLayout:
    return CacheLayout(tmp_path / "cache")  # empty: any attempt to fetch would fail loudly


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


def instance_for(layout: CacheLayout, pid: int, port: int, data_dir: Path) -> EngineInstance:
    instance = EngineInstance(
        "trino", "476", port, pid, data_dir, "127.0.0.1:7778", Path("/java"), time.time()
    )
    path = layout.state_file(TRINO, port)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(instance.to_json()))
    return instance


@pytest.fixture
def stand_in(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A process that looks like a launched engine: own session, working directory = data dir."""
    data_dir = tmp_path / "data"
    (data_dir / "etc" / "catalog").mkdir(parents=True)
    (data_dir / "etc" / "catalog" / "lakeprune.properties").write_text(catalog_file(TRINO, "sidecar:7778"))
    child = subprocess.Popen(["sleep", "300"], cwd=data_dir, start_new_session=True)
    yield child
    child.kill()
    child.wait()


def test_user_errors_come_first_and_in_one_line(layout: CacheLayout, busy_port: int) -> None:
    cases = [
        (UnknownEngineError, lambda: start("spark", 1, layout=layout)),
        (InvalidEngineConfigError, lambda: start("trino", 1, "nohost", layout=layout)),
        (InvalidEngineConfigError, lambda: start("trino", 70000, layout=layout)),
        (PortInUseError, lambda: start("presto", busy_port, layout=layout)),
        (InvalidEngineConfigError, lambda: start("trino", 0, heap_mb=100, layout=layout)),
        (InvalidEngineConfigError, lambda: start("trino", 0, extra_catalogs={"x": {}}, layout=layout)),
    ]
    for error, call in cases:
        with pytest.raises(error) as caught:
            call()
        assert "\n" not in str(caught.value)
    assert not layout.root.exists()  # nothing was fetched or written


def test_port_in_use_message(layout: CacheLayout, busy_port: int) -> None:
    with pytest.raises(PortInUseError) as caught:
        start("trino", busy_port, layout=layout)
    assert (
        str(caught.value)
        == f"port {busy_port} is already in use by another process; choose another with --port"
    )


def test_nothing_recorded(layout: CacheLayout) -> None:
    assert stop("trino", 18080, layout=layout) is None
    state = status("presto", layout=layout)
    assert (state.running, state.port, state.instance, state.uptime_seconds) == (False, 8081, None, None)
    assert state.to_json()["version"] == "0.287"


def test_a_stale_record_is_not_running_and_stop_forgets_it(layout: CacheLayout, tmp_path: Path) -> None:
    instance_for(layout, 2**22 + 7, 18080, tmp_path)  # a pid that does not exist
    assert not status("trino", 18080, layout=layout).running
    assert stop("trino", 18080, layout=layout) is None
    assert not layout.state_file(TRINO, 18080).exists()


def test_a_reused_pid_is_not_taken_for_the_engine(
    layout: CacheLayout, stand_in: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    instance_for(layout, stand_in.pid, 18080, tmp_path / "elsewhere")
    assert not status("trino", 18080, layout=layout).running
    assert stop("trino", 18080, layout=layout) is None
    assert stand_in.poll() is None  # never signalled


def test_an_engine_stepping_out_of_its_data_dir_for_a_moment_is_still_running(tmp_path: Path) -> None:
    """A starting JVM visits /tmp/hsperfdata_<user> for a moment; liveness must not end there."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    outside = tmp_path / "stepped-out"
    script = f"cd / && touch {outside} && sleep 0.3 && cd {data_dir} && exec sleep 300"
    child = subprocess.Popen(["sh", "-c", script], cwd=data_dir, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not outside.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert outside.exists()
        assert process._process_alive(child.pid, data_dir)
        assert not process._process_alive(child.pid, tmp_path / "elsewhere")
    finally:
        child.kill()
        child.wait()


def test_status_and_stop_of_a_running_instance(
    layout: CacheLayout, stand_in: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    instance = instance_for(layout, stand_in.pid, 18080, tmp_path / "data")
    state = status("trino", 18080, layout=layout)
    assert state.running and not state.answering
    assert state.sidecar == "sidecar:7778"  # read from the instance's catalog file
    report = state.to_json()
    assert report["pid"] == stand_in.pid and report["url"] == "http://127.0.0.1:18080"
    with pytest.raises(
        EngineAlreadyRunningError, match=f"already runs on port 18080 \\(pid {stand_in.pid}\\)"
    ):
        start("trino", 18080, layout=layout)
    stopped = stop("trino", 18080, layout=layout, grace=5)
    assert stopped == instance
    assert stand_in.wait(timeout=5) == -15  # SIGTERM reached it through its process group
    assert not layout.state_file(TRINO, 18080).exists()
    assert not status("trino", 18080, layout=layout).running


def test_status_reads_both_catalogs_of_a_native_instance(
    layout: CacheLayout, stand_in: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    instance_for(layout, stand_in.pid, 18080, tmp_path / "data")
    catalogs = tmp_path / "data" / "etc" / "catalog"
    (catalogs / "lakeprune.properties").write_text(native_catalog_file(TRINO, NativeCatalog("g:7777")))
    (catalogs / "lakeprune_thrift.properties").write_text(catalog_file(TRINO, "t:7778"))
    state = status("trino", 18080, layout=layout)
    assert (state.grpc, state.sidecar) == ("g:7777", "t:7778")
    assert state.to_json()["grpc"] == "g:7777"


def test_catalog_sidecars_are_what_the_readiness_check_connects_to(tmp_path: Path) -> None:
    config = InstanceConfig(TRINO, 1, tmp_path, "t:7778,u:7778", grpc=NativeCatalog("g:7777"))
    assert process.catalog_sidecars(config) == {
        "lakeprune": ("g:7777",),
        "lakeprune_thrift": ("t:7778", "u:7778"),
    }
    assert process.catalog_sidecars(InstanceConfig(PRESTO, 1, tmp_path, None)) == {
        "lakeprune": ("127.0.0.1:7778",)
    }


def test_grpc_without_a_plugin_fails_before_anything_is_fetched(
    layout: CacheLayout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAKEPRUNE_TRINO_PLUGIN", str(tmp_path / "no-plugin"))
    with pytest.raises(PluginNotFoundError, match=r"LAKEPRUNE_TRINO_PLUGIN: .* is not a directory"):
        start("trino", 0, grpc=NativeCatalog("127.0.0.1:7777"), layout=layout)
    assert not layout.root.exists()


def test_a_data_dir_in_use_by_another_engine_is_refused(
    layout: CacheLayout, stand_in: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    (data_dir / "var" / "run").mkdir(parents=True)
    (data_dir / "var" / "run" / "launcher.pid").write_text(f"{stand_in.pid}\n")
    with pytest.raises(EngineAlreadyRunningError, match="already runs from data directory"):
        start("presto", 0, data_dir=data_dir, layout=layout)


def test_instance_record_round_trip(tmp_path: Path) -> None:
    instance = EngineInstance("presto", "0.287", 8081, 42, tmp_path, "h:1", Path("/j"), 1.5, 12.5)
    assert EngineInstance.from_json(json.loads(json.dumps(instance.to_json()))) == instance
    native = EngineInstance(
        "trino", "476", 1, 2, tmp_path, None, Path("/j"), 1.5, grpc="g:1", warnings=("catalog x: down",)
    )
    assert EngineInstance.from_json(json.loads(json.dumps(native.to_json()))) == native
    assert instance.server_log == tmp_path / "var" / "log" / "server.log"
    assert instance.url == "http://127.0.0.1:8081"


def test_log_excerpt_starts_at_the_first_error(tmp_path: Path) -> None:
    instance = EngineInstance("trino", "476", 1, 1, tmp_path, "h:1", Path("/j"), 0.0)
    assert "no log written" in process._log_excerpt(instance)
    instance.launcher_log.parent.mkdir(parents=True)
    instance.launcher_log.write_text("Unrecognized VM option 'Foo'\nError: Could not create the Java VM.\n")
    assert process._log_excerpt(instance).endswith("Error: Could not create the Java VM.")
    lines = [f"2026-01-01T00:00:00Z\tINFO\tmain\tline {i}" for i in range(50)]
    lines[30] = "2026-01-01T00:00:00Z\tERROR\tmain\tio.trino.server.Server\tNo factory for connector 'x'"
    instance.server_log.write_text("\n".join(lines))
    excerpt = process._log_excerpt(instance)
    assert excerpt.splitlines()[0] == f"from {instance.server_log}:"
    assert "No factory for connector 'x'" in excerpt.splitlines()[1]
    assert len(excerpt.splitlines()) == 1 + process.LOG_EXCERPT_LINES


def test_presto_and_trino_records_are_separate(layout: CacheLayout, tmp_path: Path) -> None:
    instance_for(layout, 2**22 + 7, 8081, tmp_path)
    assert layout.state_file(TRINO, 8081).exists()
    assert not layout.state_file(PRESTO, 8081).exists()


# A stand-in for an engine's launcher: `run` writes the pid file and becomes the server (a `sleep`)
# in place, as the launchers do with Java; with $FAIL set it reports an error and exits instead.
FAKE_LAUNCHER = """#!/bin/sh
for arg in "$@"; do
  case "$arg" in --pid-file=*) pid_file="${arg#*=}" ;; esac
done
[ "$1" = run ] || { echo "ERROR: only run is expected, got $1"; exit 3; }
[ -z "${FAIL:-}" ] || { echo "ERROR: JVM config file is missing"; exit 1; }
echo "server starting"
mkdir -p "$(dirname "$pid_file")" && echo $$ > "$pid_file"
exec sleep 300
"""


@pytest.fixture
def fake_home(tmp_path: Path) -> Path:
    home = tmp_path / "engine"
    (home / "bin").mkdir(parents=True)
    launcher = home / TRINO.launcher
    launcher.write_text(FAKE_LAUNCHER)
    launcher.chmod(0o755)
    return home


def _launch(home: Path, data_dir: Path) -> EngineInstance:
    data_dir.mkdir(parents=True, exist_ok=True)
    return process._launch(TRINO, home, Path("/java"), InstanceConfig(TRINO, 18080, data_dir, "h:1"))


def test_the_launched_server_is_the_launchers_own_process_in_its_own_session(
    fake_home: Path, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    instance = _launch(fake_home, data_dir)
    try:
        deadline = time.monotonic() + 10
        while not instance.pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert instance.pid_file.read_text().strip() == str(instance.pid)
        assert os.getsid(instance.pid) == instance.pid  # stopping signals its process group
        assert process._alive(instance)
        assert instance.launcher_log.read_text() == "server starting\n"
    finally:
        process._terminate(instance, grace=5)
    assert not process._alive(instance)
    assert instance.pid not in process._daemons  # reaped, no zombie left


def test_a_launcher_that_fails_is_reported_from_its_log(
    fake_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAIL", "1")
    instance = _launch(fake_home, tmp_path / "data")
    deadline = time.monotonic() + 10
    while process._alive(instance) and time.monotonic() < deadline:
        time.sleep(0.05)
    process._terminate(instance, grace=1)
    assert "ERROR: JVM config file is missing" in process._log_excerpt(instance)


def test_a_launcher_that_cannot_run_is_a_clear_error(fake_home: Path, tmp_path: Path) -> None:
    (fake_home / TRINO.launcher).chmod(0o644)
    denied = r"cannot run Trino's launcher \S+/launcher: Permission denied"
    with pytest.raises(EngineStartError, match=denied):
        _launch(fake_home, tmp_path / "data")
