"""The committed gRPC code imports as the package `pruner.service.gen` (protoc's own absolute
imports rewritten). That it matches the protos is checked in tests/test_generated_code.py."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
GENERATED = Path("pruner/service/gen")


def test_generated_modules_import_within_the_package() -> None:
    from pruner.service.gen.lakeprune.v1 import pruning_service_pb2, pruning_service_pb2_grpc

    assert pruning_service_pb2.DESCRIPTOR.name == "lakeprune/v1/pruning_service.proto"
    assert (
        pruning_service_pb2_grpc.PruningServiceStub.__module__
        == "pruner.service.gen.lakeprune.v1.pruning_service_pb2_grpc"
    )
    for path in (REPO / GENERATED).rglob("*.py*"):
        assert "from lakeprune" not in path.read_text(), path
