"""Where the launcher keeps its downloads and instances: one cache root (`$LAKEPRUNE_CACHE`, default
`~/.cache/lakeprune`) outside the repository, holding the Maven local repository (`m2/`), unpacked
engines (`engines/<engine>-<version>/`), Java runtimes installed from PyPI (`jdk/<name>/`) and
running instances (`run/<engine>-<port>.json` plus the default data directory
`run/<engine>-<port>/`). Nothing here touches the disk; it only names paths."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pruner.engines.spec import EngineSpec, JavaRuntimeSpec, MavenArtifact

CACHE_ENV = "LAKEPRUNE_CACHE"


@dataclass(frozen=True)
class CacheLayout:
    root: Path

    @classmethod
    def default(cls) -> CacheLayout:
        """The cache named by `$LAKEPRUNE_CACHE`, else `~/.cache/lakeprune`."""
        configured = os.environ.get(CACHE_ENV, "").strip()
        root = Path(configured).expanduser() if configured else Path.home() / ".cache" / "lakeprune"
        return cls(root.absolute())

    @property
    def m2(self) -> Path:
        return self.root / "m2"

    @property
    def engines(self) -> Path:
        return self.root / "engines"

    @property
    def jdks(self) -> Path:
        return self.root / "jdk"

    @property
    def run(self) -> Path:
        return self.root / "run"

    def artifact(self, artifact: MavenArtifact) -> Path:
        return self.m2 / artifact.path

    def engine_home(self, spec: EngineSpec) -> Path:
        return self.engines / spec.dirname

    def java_target(self, java: JavaRuntimeSpec) -> Path:
        """The `pip install --target` directory of a runtime."""
        return self.jdks / java.name

    def java_home(self, java: JavaRuntimeSpec) -> Path:
        return self.java_target(java) / java.home_in_target

    def state_file(self, spec: EngineSpec, port: int) -> Path:
        return self.run / f"{spec.kind}-{port}.json"

    def default_data_dir(self, spec: EngineSpec, port: int) -> Path:
        return self.run / f"{spec.kind}-{port}"
