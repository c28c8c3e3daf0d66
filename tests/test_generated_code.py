"""The committed generated code is what `bash scripts/generate.sh <section>` produces today: gRPC
stubs from proto/lakeprune (`pruner/service/gen`) and Thrift bindings from the Trino IDL
(`pruner/thrift/gen`, only checked where the Apache Thrift compiler is installed); and the Trino
connector's copy of the function registry's answers is what `scripts/trino_function_cases.py`
writes today; and the engine-parity table of docs/trino-presto.md is what `scripts/engine_parity.py`
makes of the cases the tests run."""

from __future__ import annotations

import filecmp
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

SECTIONS = [
    pytest.param("grpc", Path("pruner/service/gen"), id="grpc"),
    pytest.param(
        "thrift",
        Path("pruner/thrift/gen"),
        id="thrift",
        marks=pytest.mark.skipif(
            shutil.which("thrift") is None,
            reason="the Apache Thrift compiler is not installed (apt-get install -y thrift-compiler)",
        ),
    ),
]


def _files(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


@pytest.mark.parametrize(("section", "generated"), SECTIONS)
def test_committed_code_matches_a_fresh_generation(section: str, generated: Path, tmp_path: Path) -> None:
    subprocess.run(
        ["bash", "scripts/generate.sh", "--out", str(tmp_path), section],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=120,
    )
    fresh, committed = tmp_path / generated, REPO / generated
    hint = f"run `bash scripts/generate.sh {section}`"
    assert _files(fresh) == _files(committed), f"files differ: {hint}"
    changed = [str(p) for p in _files(fresh) if not filecmp.cmp(fresh / p, committed / p, shallow=False)]
    assert not changed, f"stale generated code in {changed}: {hint}"


def test_trino_connector_function_tables_match_the_registry(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "scripts/trino_function_cases.py", "--out", str(tmp_path)],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=300,
    )
    written = [p.relative_to(tmp_path) for p in tmp_path.rglob("*.tsv")]
    assert len(written) == 2
    stale = [str(p) for p in written if (tmp_path / p).read_bytes() != (REPO / p).read_bytes()]
    assert not stale, f"stale {stale}: run `python scripts/trino_function_cases.py`"


def test_the_engine_parity_table_is_what_the_cases_say() -> None:
    checked = subprocess.run(
        [sys.executable, "scripts/engine_parity.py", "--check"],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
