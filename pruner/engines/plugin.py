"""The native connector's plugin in a cached engine: where it comes from and how it gets in. The
build (`connector/trino/build.sh`) produces a plugin directory of jars,
`connector/trino/target/lakeprune-<engine>-<version>/`; the launcher finds it through, in order, an
explicit path (`--connector-plugin`), `$LAKEPRUNE_TRINO_PLUGIN`, or the build output of the
checkout lakeprune runs from (running the build first if it is missing there), and installs it as
`<engine home>/plugin/<native_plugin_dir>/`. A content stamp (a hash of every file's path and bytes)
is kept beside it, so a changed plugin replaces the installed one and an unchanged one is left
alone. Installing happens under the engine's cache lock, into a temporary directory renamed into
place, like the engine itself."""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from pruner.engines.cache import CacheLayout
from pruner.engines.errors import PluginNotFoundError
from pruner.engines.fetch import engine_lock
from pruner.engines.locking import exclusive, remove_leftovers
from pruner.engines.spec import EngineSpec

logger = logging.getLogger(__name__)

PLUGIN_ENV = "LAKEPRUNE_TRINO_PLUGIN"
STAMP_FILE = ".lakeprune-plugin-stamp"
BUILD_TIMEOUT_S = 1800.0
PROGRESS_INTERVAL_S = 15.0
# The repository root when lakeprune runs from a checkout (pruner/engines/plugin.py -> root).
CHECKOUT = Path(__file__).resolve().parents[2]


def build_output(spec: EngineSpec, checkout: Path = CHECKOUT) -> Path:
    """Where `connector/<engine>/build.sh` of a checkout puts the plugin directory."""
    return checkout / "connector" / spec.kind / "target" / f"lakeprune-{spec.kind}-{spec.version}"


def locate_plugin(
    spec: EngineSpec, explicit: Path | None = None, *, checkout: Path = CHECKOUT, build: bool = True
) -> Path:
    """The plugin directory to install: `explicit`, else `$LAKEPRUNE_TRINO_PLUGIN`, else the
    checkout's build output (built first if `build` and the build script is there)."""
    if spec.native_plugin_dir is None:
        raise PluginNotFoundError(
            f"{spec.display_name} has no native lakeprune connector; use its Thrift catalog"
        )
    if explicit is not None:
        return check_plugin_dir(explicit, "--connector-plugin")
    configured = os.environ.get(PLUGIN_ENV, "").strip()
    if configured:
        return check_plugin_dir(Path(configured), f"${PLUGIN_ENV}")
    output = build_output(spec, checkout)
    script = checkout / "connector" / spec.kind / "build.sh"
    if not output.is_dir() and build and script.is_file():
        _run_build(script, output)
    if output.is_dir():
        return check_plugin_dir(output, "the build output")
    raise PluginNotFoundError(
        f"no lakeprune {spec.display_name} plugin found: give --connector-plugin PATH or set {PLUGIN_ENV} "
        f"to a lakeprune-{spec.kind}-{spec.version} directory (built by connector/{spec.kind}/build.sh "
        "in a lakeprune checkout)"
    )


def check_plugin_dir(path: Path, origin: str) -> Path:
    """`path`, absolute, if it is a directory holding jars; else a one-line error naming `origin`."""
    directory = path.expanduser().absolute()
    if not directory.is_dir():
        raise PluginNotFoundError(f"{origin}: {directory} is not a directory (expected the plugin directory)")
    if not any(directory.glob("*.jar")):
        raise PluginNotFoundError(f"{origin}: {directory} holds no .jar files (not a Trino plugin directory)")
    return directory


def content_stamp(directory: Path) -> str:
    """A hash of every regular file under `directory`: its relative path and its bytes."""
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file() and p.name != STAMP_FILE):
        digest.update(path.relative_to(directory).as_posix().encode() + b"\0")
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()


def install_plugin(spec: EngineSpec, home: Path, source: Path, layout: CacheLayout | None = None) -> Path:
    """Install `source` as `home/plugin/<native_plugin_dir>/` unless the same content is there;
    returns the installed directory."""
    if spec.native_plugin_dir is None:
        raise PluginNotFoundError(f"{spec.display_name} has no native lakeprune connector")
    layout = layout or CacheLayout.default()
    target = home / "plugin" / spec.native_plugin_dir
    stamp = content_stamp(source)
    with exclusive(engine_lock(layout, spec)):
        if _installed_stamp(target) == stamp:
            return target
        prefix = f".{spec.native_plugin_dir}.tmp-"
        remove_leftovers(target.parent, prefix)
        staging = Path(tempfile.mkdtemp(prefix=prefix, dir=target.parent))
        try:
            copied = staging / "plugin"
            shutil.copytree(source, copied, symlinks=False)
            (copied / STAMP_FILE).write_text(stamp + "\n")
            if target.exists():
                shutil.rmtree(target)
            copied.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    logger.info("installed the lakeprune plugin from %s into %s", source, target)
    return target


def _installed_stamp(target: Path) -> str | None:
    try:
        return (target / STAMP_FILE).read_text().strip()
    except OSError:
        return None


def _run_build(script: Path, output: Path) -> None:
    """Run the build script, reporting progress every PROGRESS_INTERVAL_S; its output goes to a log
    file that an error names."""
    with tempfile.NamedTemporaryFile(prefix="lakeprune-plugin-build-", suffix=".log", delete=False) as log:
        logger.info("building the lakeprune plugin with %s (log %s)", script, log.name)
        started = time.monotonic()
        process = subprocess.Popen(
            ["bash", str(script)], cwd=script.parent, stdout=log, stderr=subprocess.STDOUT
        )
        while True:
            try:
                process.wait(timeout=PROGRESS_INTERVAL_S)
                break
            except subprocess.TimeoutExpired:
                elapsed = time.monotonic() - started
                if elapsed > BUILD_TIMEOUT_S:
                    process.kill()
                    process.wait()
                    raise PluginNotFoundError(
                        f"{script} did not finish within {BUILD_TIMEOUT_S:.0f} s; see {log.name}"
                    ) from None
                logger.info("  ... building the plugin, %.0f s", elapsed)
    if process.returncode != 0:
        raise PluginNotFoundError(f"{script} failed (exit {process.returncode}); see {log.name}")
    if not output.is_dir():
        raise PluginNotFoundError(f"{script} succeeded but did not produce {output}; see {log.name}")
    logger.info("built the plugin in %.0f s", time.monotonic() - started)
