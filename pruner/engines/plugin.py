"""The native connector's plugin in a cached engine: where it comes from and how it gets in. The
build (`connector/trino/build.sh`) produces a plugin directory of jars,
`connector/trino/target/lakeprune-<engine>-<version>/`; the launcher finds it through, in order, an
explicit path (`--connector-plugin`), `$LAKEPRUNE_TRINO_PLUGIN`, or the build output of the
checkout lakeprune runs from (running the build first if it is missing there), and gives each
instance a plugin directory of its own (`plugin.dir` under the instance's data directory): the
cached engine's plugins symlinked, and a copy of the native connector's. The cached engine is never
changed, so instances with different builds of the plugin run side by side."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from pruner.engines.errors import PluginNotFoundError
from pruner.engines.spec import EngineSpec

logger = logging.getLogger(__name__)

PLUGIN_ENV = "LAKEPRUNE_TRINO_PLUGIN"
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
        run_build(script, output)
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


def instance_plugins(spec: EngineSpec, home: Path, source: Path, plugin_dir: Path) -> Path:
    """Make `plugin_dir` (an instance's own `plugin.dir`) hold every plugin of the cached engine
    `home` (symlinked: they are never changed) and a copy of the native connector's `source` as
    `<native_plugin_dir>/`; returns `plugin_dir`. The cached engine itself is left as fetched, so
    instances started from one cache with different builds of the plugin (another checkout,
    another branch) never replace each other's jars, and a rebuild never touches a running
    instance. The instance's data directory is its own (no other instance runs there), so no lock
    is needed."""
    if spec.native_plugin_dir is None:
        raise PluginNotFoundError(f"{spec.display_name} has no native lakeprune connector")
    if plugin_dir.exists():
        shutil.rmtree(plugin_dir)
    plugin_dir.mkdir(parents=True)
    for bundled in sorted((home / "plugin").iterdir()):
        if bundled.is_dir() and bundled.name != spec.native_plugin_dir:
            (plugin_dir / bundled.name).symlink_to(bundled, target_is_directory=True)
    shutil.copytree(source, plugin_dir / spec.native_plugin_dir, symlinks=False)
    logger.info(
        "the lakeprune plugin of this instance: %s (from %s)", plugin_dir / spec.native_plugin_dir, source
    )
    return plugin_dir


def run_build(script: Path, output: Path, env: Mapping[str, str] | None = None) -> None:
    """Run the build script (with `env` added to the environment), reporting progress every
    PROGRESS_INTERVAL_S; its output goes to a log file that an error names. `output` (a file or
    directory) must exist afterwards."""
    with tempfile.NamedTemporaryFile(prefix="lakeprune-plugin-build-", suffix=".log", delete=False) as log:
        logger.info("building %s with %s (log %s)", output.name, script, log.name)
        started = time.monotonic()
        process = subprocess.Popen(
            ["bash", str(script)],
            cwd=script.parent,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
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
                logger.info("  ... building %s, %.0f s", output.name, elapsed)
    if process.returncode != 0:
        raise PluginNotFoundError(f"{script} failed (exit {process.returncode}); see {log.name}")
    if not output.exists():
        raise PluginNotFoundError(f"{script} succeeded but did not produce {output}; see {log.name}")
    logger.info("built %s in %.0f s", output.name, time.monotonic() - started)
