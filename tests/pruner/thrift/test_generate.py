"""The committed generated code is what `scripts/generate.sh` produces from the IDL today."""

from __future__ import annotations

import filecmp
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
GENERATED = Path("pruner/thrift/gen")


def _files(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


@pytest.mark.skipif(
    shutil.which("thrift") is None,
    reason="the Apache Thrift compiler is not installed (apt-get install -y thrift-compiler)",
)
def test_committed_thrift_code_matches_the_idl(tmp_path: Path) -> None:
    subprocess.run(
        ["bash", "scripts/generate.sh", "--out", str(tmp_path), "thrift"],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=60,
    )
    fresh, committed = tmp_path / GENERATED, REPO / GENERATED
    assert _files(fresh) == _files(committed), "files differ: run `bash scripts/generate.sh thrift`"
    changed = [str(p) for p in _files(fresh) if not filecmp.cmp(fresh / p, committed / p, shallow=False)]
    assert not changed, f"stale generated code in {changed}: run `bash scripts/generate.sh thrift`"
