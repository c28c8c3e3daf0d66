"""Finding and installing the native connector's plugin without Trino: the order of the sources
(option, environment, the checkout's build output, built on demand), one-line errors, and an
install that is skipped while the content is unchanged and replaced when it changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from pruner.engines.cache import CacheLayout
from pruner.engines.errors import PluginNotFoundError
from pruner.engines.plugin import (
    PLUGIN_ENV,
    STAMP_FILE,
    build_output,
    content_stamp,
    install_plugin,
    locate_plugin,
)
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


def test_install_replaces_the_plugin_only_when_its_content_changes(tmp_path: Path) -> None:
    layout = CacheLayout(tmp_path / "cache")
    home = layout.engine_home(TRINO)
    (home / "plugin").mkdir(parents=True)
    source = plugin_dir(tmp_path / "build")
    installed = install_plugin(TRINO, home, source, layout)
    assert installed == home / "plugin" / "lakeprune"
    assert sorted(p.name for p in installed.iterdir()) == sorted(
        [STAMP_FILE, "grpc-api-1.0.jar", "lakeprune-trino-476.jar"]
    )
    marker = installed / "marker"
    marker.write_text("left alone")
    install_plugin(TRINO, home, source, layout)
    assert marker.exists()  # same content: not copied again
    plugin_dir(source, b"rebuilt jar")
    (source / "grpc-api-1.0.jar").unlink()
    install_plugin(TRINO, home, source, layout)
    assert not marker.exists() and not (installed / "grpc-api-1.0.jar").exists()
    assert (installed / "lakeprune-trino-476.jar").read_bytes() == b"rebuilt jar"
    assert (installed / STAMP_FILE).read_text().strip() == content_stamp(source)
    assert [p.name for p in (home / "plugin").iterdir()] == ["lakeprune"]  # no temporary left


def test_the_stamp_covers_names_and_bytes(tmp_path: Path) -> None:
    a = plugin_dir(tmp_path / "a")
    stamp = content_stamp(a)
    assert content_stamp(plugin_dir(tmp_path / "b")) == stamp  # same content elsewhere
    (a / "lakeprune-trino-476.jar").rename(a / "renamed.jar")
    assert content_stamp(a) != stamp
