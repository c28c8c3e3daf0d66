"""Apache Hudi 1.2 for the peers benchmark (`peers.py`), kept apart from the project: Hudi's Spark
bundle needs Spark 3.5 while lakeprune runs on the project's Spark, so the bench makes its own
environment under `~/.cache/lakeprune/peers/` (a venv with `pyspark==3.5.*`, on the system's Java,
and `org.apache.hudi:hudi-spark3.5-bundle_2.12:1.2.0` from Maven Central through the launcher's
Maven cache) the first time it is needed (`ensure_environment`), and runs Hudi's side in a child
process on that venv's interpreter (`run_job`: the script `peers_hudi_job.py`, which imports only
pyspark 3.5 and the standard library), getting its JSON result back. Run on its own
(`python bench/peers_hudi.py`) it only makes the environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from peers_data import DIMENSION, FACT, REGIONS, UPSERT_KEYS
from support import progress
from trino_vs_hive_table import data_files

from pruner.engines.cache import CacheLayout
from pruner.engines.fetch import ensure_artifact
from pruner.engines.spec import MavenArtifact

SPARK_PIN = "pyspark==3.5.*"
HUDI_BUNDLE = MavenArtifact("org.apache.hudi", "hudi-spark3.5-bundle_2.12", "1.2.0", "jar")
JOB = Path(__file__).with_name("peers_hudi_job.py")


@dataclass(frozen=True)
class HudiEnvironment:
    python: Path  # the venv's interpreter, with pyspark 3.5
    bundle: Path  # the Hudi Spark bundle jar
    spark_version: str


def environment_root() -> Path:
    return CacheLayout.default().root / "peers"


def venv_environment() -> dict[str, str]:
    """This process's environment without what points at the project's own Python and Spark (the
    bench runs with `PYTHONPATH=.`, where pip in the venv would see the project as installed)."""
    project = {"PYTHONPATH", "SPARK_HOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"}
    return {key: value for key, value in os.environ.items() if key not in project}


def ensure_environment() -> HudiEnvironment:
    """The Spark 3.5 venv and the Hudi bundle, made or downloaded first where missing."""
    root = environment_root()
    venv = root / "spark35"
    python = venv / "bin" / "python"
    has_pip = [str(python), "-m", "pip", "--version"]
    if not python.is_file() or subprocess.run(has_pip, capture_output=True, check=False).returncode:
        progress(f"making a venv for Spark 3.5 in {venv}")
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    env = venv_environment()
    probe = [str(python), "-c", "import pyspark; print(pyspark.__version__)"]
    found = subprocess.run(probe, capture_output=True, text=True, check=False, env=env)
    if found.returncode != 0 or not found.stdout.startswith("3.5."):
        progress(f"pip install {SPARK_PIN} into {venv}")
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", SPARK_PIN],
            check=True,
            env=env,
        )
        found = subprocess.run(probe, capture_output=True, text=True, check=True, env=env)
    bundle = ensure_artifact(CacheLayout.default(), HUDI_BUNDLE)
    return HudiEnvironment(python, bundle, found.stdout.strip())


def run_job(environment: HudiEnvironment, command: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Run `peers_hudi_job.py <command>` on the Spark 3.5 venv with `spec` (JSON on stdin) and
    return the JSON it prints last; Spark's own output goes to `spec["log"]` if given."""
    env = venv_environment() | {
        "PYSPARK_PYTHON": str(environment.python),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "TZ": "UTC",
    }
    done = subprocess.run(
        [str(environment.python), str(JOB), command, str(environment.bundle)],
        input=json.dumps(spec),
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the Hudi job '{command}' failed:\n{done.stderr[-6000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def write_hudi(
    environment: HudiEnvironment, warehouse: Path, root: Path, files: int, table_version: int = 8
) -> dict[str, Any]:
    """Hudi's copies of lakeprune's `sales` and `customers` (same rows: its data files) under
    `root`, written by the job as Hudi table version `table_version` (8, which Trino 476 reads, or 9,
    Hudi 1.2's default); what it reports, with the Spark and bundle versions."""
    spec = {
        "source": str(warehouse / FACT),
        "source_files": [str(p) for p in data_files(warehouse / FACT)],
        "dimension_files": [str(p) for p in data_files(warehouse / DIMENSION)],
        "target": str(root / FACT),
        "dimension_target": str(root / DIMENSION),
        "files": files,
        "regions": len(REGIONS),
        "scratch": str(root.with_name("hudi_plain_parquet")),
        "table_version": str(table_version),
    }
    progress(f"Hudi (Spark {environment.spark_version}): bulk insert and indexes into {root}")
    result = run_job(environment, "write", spec)
    progress(f"Hudi: {result['files']} files, {result['seconds']}")
    return result | {"hudi_bundle": HUDI_BUNDLE.coordinate, "table_version": table_version}


def upsert_hudi(environment: HudiEnvironment, root: Path, table_version: int) -> dict[str, Any]:
    """Upsert 1% of the keys (`UPSERT_KEYS`) of Hudi's `sales` under `root`; seconds and rows."""
    progress("Hudi: 1% upsert")
    spec = {"target": str(root / FACT), "keys": UPSERT_KEYS, "table_version": str(table_version)}
    return run_job(environment, "upsert", spec)


if __name__ == "__main__":
    made = ensure_environment()
    progress(f"Spark {made.spark_version} at {made.python}, Hudi bundle {made.bundle}")
