"""The committed gRPC code is what `bash scripts/generate.sh grpc` produces from proto/ today, and it
imports as the package `pruner.service.gen` (protoc's own absolute imports rewritten)."""

from __future__ import annotations

import filecmp
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
GENERATED = Path("pruner/service/gen")


def _files(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def test_committed_grpc_code_matches_the_protos(tmp_path: Path) -> None:
    subprocess.run(
        ["bash", "scripts/generate.sh", "--out", str(tmp_path), "grpc"],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=120,
    )
    fresh, committed = tmp_path / GENERATED, REPO / GENERATED
    assert _files(fresh) == _files(committed), "files differ: run `bash scripts/generate.sh grpc`"
    changed = [str(p) for p in _files(fresh) if not filecmp.cmp(fresh / p, committed / p, shallow=False)]
    assert not changed, f"stale generated code in {changed}: run `bash scripts/generate.sh grpc`"


def test_generated_modules_import_within_the_package() -> None:
    from pruner.service.gen.lakeprune.v1 import pruning_service_pb2, pruning_service_pb2_grpc

    assert pruning_service_pb2.DESCRIPTOR.name == "lakeprune/v1/pruning_service.proto"
    assert (
        pruning_service_pb2_grpc.PruningServiceStub.__module__
        == "pruner.service.gen.lakeprune.v1.pruning_service_pb2_grpc"
    )
    for path in (REPO / GENERATED).rglob("*.py*"):
        assert "from lakeprune" not in path.read_text(), path
