"""Fetching an engine into the cache: the server tarball (and, where the engine needs one, the Thrift
connector's plugin zip) come from Maven Central through `mvn dependency:get` into the cache's own
Maven repository; the tarball is unpacked once into `engines/<engine>-<version>/`. Trino 476's
tarball bundles the Thrift connector it runs with (`plugin/thrift`); Presto's bundled copy is
replaced by its plugin zip (the same jars; installing both would register the connector twice).
Unpacking goes to a temporary directory that is renamed into place at the end, under a lock, so an
interrupted or concurrent fetch never leaves a half-unpacked engine that a later start would use.
Long steps report progress through logging (the CLI shows it on stderr)."""

from __future__ import annotations

import logging
import shutil
import subprocess
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

from pruner.engines.cache import CacheLayout
from pruner.engines.errors import ArtifactFetchError
from pruner.engines.locking import exclusive, remove_leftovers
from pruner.engines.spec import EngineSpec, MavenArtifact

logger = logging.getLogger(__name__)

PROGRESS_INTERVAL_S = 10.0
MiB = 1024 * 1024


def maven_command(layout: CacheLayout, artifact: MavenArtifact, mvn: str = "mvn") -> list[str]:
    return [
        mvn,
        "-B",
        "-q",
        f"-Dmaven.repo.local={layout.m2}",
        "dependency:get",
        f"-Dartifact={artifact.coordinate}",
        "-Dtransitive=false",
    ]


def ensure_artifact(layout: CacheLayout, artifact: MavenArtifact, *, mvn: str = "mvn") -> Path:
    """The artifact's path in the cache's Maven repository, downloading it first if missing."""
    target = layout.artifact(artifact)
    if target.is_file():
        return target
    executable = shutil.which(mvn)
    if executable is None:
        raise ArtifactFetchError(
            f"Maven ({mvn}) is not on PATH: install it (e.g. apt-get install maven) "
            f"or put {artifact.coordinate} at {target}"
        )
    layout.m2.mkdir(parents=True, exist_ok=True)
    logger.info("downloading %s from Maven Central into %s", artifact.coordinate, layout.m2)
    started = time.monotonic()
    partial = target.with_name(target.name + ".part")
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(
            maven_command(layout, artifact, executable), stdout=output, stderr=subprocess.STDOUT
        )
        while True:
            try:
                process.wait(timeout=PROGRESS_INTERVAL_S)
                break
            except subprocess.TimeoutExpired:
                size = partial.stat().st_size if partial.exists() else 0
                logger.info(
                    "  ... %s: %d MiB after %.0f s",
                    artifact.artifact,
                    size // MiB,
                    time.monotonic() - started,
                )
        output.seek(0)
        lines = [line.strip() for line in output.read().decode(errors="replace").splitlines()]
    if process.returncode != 0 or not target.is_file():
        last = next((line for line in reversed(lines) if line), "no output")
        raise ArtifactFetchError(
            f"Maven could not download {artifact.coordinate} (exit {process.returncode}): {last}"
        )
    logger.info(
        "downloaded %s (%d MiB) in %.0f s",
        target.name,
        target.stat().st_size // MiB,
        time.monotonic() - started,
    )
    return target


def engine_lock(layout: CacheLayout, spec: EngineSpec) -> Path:
    """The lock file of one engine's install directory (unpacking it, installing plugins into it)."""
    return layout.engines / f".{spec.dirname}.lock"


def is_installed(home: Path, spec: EngineSpec) -> bool:
    return (home / spec.launcher).is_file() and (
        home / "plugin" / spec.plugin_dir / spec.plugin_jar
    ).is_file()


def fetch_engine(spec: EngineSpec, layout: CacheLayout | None = None, *, mvn: str = "mvn") -> Path:
    """The engine's install directory in the cache, downloading and unpacking it first if needed."""
    layout = layout or CacheLayout.default()
    home = layout.engine_home(spec)
    if is_installed(home, spec):
        return home
    layout.engines.mkdir(parents=True, exist_ok=True)
    with exclusive(engine_lock(layout, spec)):
        if is_installed(home, spec):  # another process finished it while we waited
            return home
        prefix = f".{spec.dirname}.tmp-"
        remove_leftovers(layout.engines, prefix)
        if home.exists():
            logger.info("removing incomplete %s", home)
            shutil.rmtree(home)
        tarball = ensure_artifact(layout, spec.server, mvn=mvn)
        staging = Path(tempfile.mkdtemp(prefix=prefix, dir=layout.engines))
        try:
            server = _unpack_tarball(tarball, staging / "server")
            if not (server / spec.launcher).is_file():
                raise ArtifactFetchError(f"{tarball} holds no {spec.launcher}: not an engine server tarball")
            plugin = server / "plugin" / spec.plugin_dir
            source = tarball
            if spec.plugin is not None:
                # The tarball already bundles the same jars in plugin/<dir>; the zip replaces
                # that directory (a second copy beside it would register the connector twice,
                # which the engine refuses).
                source = ensure_artifact(layout, spec.plugin, mvn=mvn)
                _unpack_plugin(source, staging / "plugin", plugin)
            if not (plugin / spec.plugin_jar).is_file():
                raise ArtifactFetchError(f"{source} does not contain {spec.plugin_dir}/{spec.plugin_jar}")
            server.rename(home)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    logger.info("%s %s is ready in %s", spec.display_name, spec.version, home)
    return home


def _unpack_tarball(tarball: Path, destination: Path) -> Path:
    """Extract a .tar.gz with progress; returns its single top-level directory."""
    destination.mkdir(parents=True)
    total = max(tarball.stat().st_size, 1)
    logger.info("unpacking %s (%d MiB)", tarball.name, total // MiB)
    started = time.monotonic()
    next_report = 25
    try:
        with open(tarball, "rb") as raw, tarfile.open(fileobj=raw, mode="r|gz") as archive:
            for member in archive:
                archive.extract(member, destination, filter="data")
                percent = raw.tell() * 100 // total
                if percent >= next_report:
                    logger.info("  ... %d%% after %.0f s", percent, time.monotonic() - started)
                    next_report = (percent // 25 + 1) * 25
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ArtifactFetchError(f"cannot unpack {tarball}: {exc}") from None
    logger.info("unpacked %s in %.0f s", tarball.name, time.monotonic() - started)
    return _single_top_dir(destination, tarball)


def _unpack_plugin(archive: Path, scratch: Path, plugin_dir: Path) -> None:
    """Extract a plugin zip (one top-level directory of jars) into `plugin_dir`."""
    logger.info("unpacking %s into plugin/%s", archive.name, plugin_dir.name)
    try:
        with zipfile.ZipFile(archive) as bundle:
            bundle.extractall(scratch)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ArtifactFetchError(f"cannot unpack {archive}: {exc}") from None
    if plugin_dir.exists():  # a directory of that name without the connector jar: replace it
        shutil.rmtree(plugin_dir)
    plugin_dir.parent.mkdir(parents=True, exist_ok=True)
    _single_top_dir(scratch, archive).rename(plugin_dir)


def _single_top_dir(directory: Path, archive: Path) -> Path:
    entries = list(directory.iterdir())
    if len(entries) != 1 or not entries[0].is_dir():
        raise ArtifactFetchError(f"{archive} should hold exactly one top-level directory")
    return entries[0]
