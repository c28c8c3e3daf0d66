"""Finding the native connector's plugin and giving an instance its plugins, without Trino: the
order of the sources (option, environment, the checkout's build output, built on demand), one-line
errors, and an instance plugin directory that holds the engine's plugins and its own copy of the
connector while the cached engine stays as fetched."""

from __future__ import annotations

from pathlib import Path

import pytest

from pruner.engines.cache import CacheLayout
from pruner.engines.errors import PluginNotFoundError
from pruner.engines.plugin import PLUGIN_ENV, build_output, instance_plugins, locate_plugin
from pruner.engines.spec import PRESTO, TRINO


def plugin_dir(path: Path, content: bytes = b"jar") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "lakeprune-trino-476.jar").write_bytes(content)
    (path / "grpc-api-1.0.jar").write_bytes(b"dependency")
    return path


@pytest.fixture(autouse=True)
def no_plugin_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PLUGIN_ENV, raising=False)


def test_an_explicit_path_wins_then_the_environment_then_the_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = tmp_path / "checkout"
    built = plugin_dir(build_output(TRINO, checkout))
    assert built == checkout / "connector/trino/target/lakeprune-trino-476"
    assert locate_plugin(TRINO, checkout=checkout) == built
    from_env = plugin_dir(tmp_path / "env")
    monkeypatch.setenv(PLUGIN_ENV, str(from_env))
    assert locate_plugin(TRINO, checkout=checkout) == from_env
    explicit = plugin_dir(tmp_path / "explicit")
    assert locate_plugin(TRINO, explicit, checkout=checkout) == explicit


def test_a_missing_build_output_is_built_with_the_checkouts_script(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    script = checkout / "connector" / "trino" / "build.sh"
    script.parent.mkdir(parents=True)
    script.write_text(
        "set -e\nmkdir -p target/lakeprune-trino-476\necho jar > target/lakeprune-trino-476/p.jar\n"
    )
    found = locate_plugin(TRINO, checkout=checkout)
    assert found == build_output(TRINO, checkout) and (found / "p.jar").is_file()


def test_a_failing_build_names_its_log(tmp_path: Path) -> None:
    script = tmp_path / "connector" / "trino" / "build.sh"
    script.parent.mkdir(parents=True)
    script.write_text("echo 'compilation failed' >&2\nexit 3\n")
    with pytest.raises(PluginNotFoundError) as caught:
        locate_plugin(TRINO, checkout=tmp_path)
    message = str(caught.value)
    assert "build.sh failed (exit 3); see " in message and "\n" not in message
    log = Path(message.rsplit("see ", 1)[1])
    assert "compilation failed" in log.read_text()
    log.unlink()


def test_nothing_found_is_one_clear_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(PluginNotFoundError) as caught:
        locate_plugin(TRINO, checkout=tmp_path)
    assert str(caught.value).startswith(
        "no lakeprune Trino plugin found: give --connector-plugin PATH or set LAKEPRUNE_TRINO_PLUGIN"
    )
    with pytest.raises(PluginNotFoundError, match=r"--connector-plugin: .* is not a directory"):
        locate_plugin(TRINO, tmp_path / "missing", checkout=tmp_path)
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv(PLUGIN_ENV, str(tmp_path / "empty"))
    with pytest.raises(PluginNotFoundError, match=r"\$LAKEPRUNE_TRINO_PLUGIN: .* holds no \.jar files"):
        locate_plugin(TRINO, checkout=tmp_path)
    with pytest.raises(PluginNotFoundError, match="Presto has no native lakeprune connector"):
        locate_plugin(PRESTO, checkout=tmp_path)


def test_each_instance_gets_its_own_copy_and_the_engine_stays_as_fetched(tmp_path: Path) -> None:
    layout = CacheLayout(tmp_path / "cache")
    home = layout.engine_home(TRINO)
    for bundled in ("hive", "thrift"):
        (home / "plugin" / bundled).mkdir(parents=True)
    (home / "plugin" / "lakeprune").mkdir()  # left by an older launcher: not this instance's
    first = instance_plugins(TRINO, home, plugin_dir(tmp_path / "build-a"), tmp_path / "a" / "plugin")
    second = instance_plugins(
        TRINO, home, plugin_dir(tmp_path / "build-b", b"other jar"), tmp_path / "b" / "plugin"
    )
    for directory in (first, second):
        assert sorted(p.name for p in directory.iterdir()) == ["hive", "lakeprune", "thrift"]
        assert (directory / "hive").resolve() == (home / "plugin" / "hive").resolve()
        assert not (directory / "lakeprune").is_symlink()
    assert (first / "lakeprune" / "lakeprune-trino-476.jar").read_bytes() == b"jar"
    assert (second / "lakeprune" / "lakeprune-trino-476.jar").read_bytes() == b"other jar"
    assert sorted(p.name for p in (home / "plugin").iterdir()) == ["hive", "lakeprune", "thrift"]
    assert not any((home / "plugin" / "lakeprune").iterdir())
    # a restart in the same data directory starts from a clean copy
    (first / "lakeprune" / "stale.jar").write_bytes(b"x")
    instance_plugins(TRINO, home, plugin_dir(tmp_path / "build-a"), first)
    assert not (first / "lakeprune" / "stale.jar").exists()
    with pytest.raises(PluginNotFoundError, match="Presto has no native lakeprune connector"):
        instance_plugins(PRESTO, home, tmp_path / "build-a", tmp_path / "p" / "plugin")
