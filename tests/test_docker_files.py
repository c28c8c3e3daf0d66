"""The files docker/compose.yaml mounts are valid: the sidecar config loads, and the Trino catalog
is the launcher's catalog for the compose service address (no Docker engine needed)."""

from __future__ import annotations

from pathlib import Path

from pruner.engines.catalog import catalog_file
from pruner.engines.spec import engine_spec
from pruner.serving.config import ServeConfig

DOCKER = Path(__file__).parent.parent / "docker"


def test_compose_sidecar_config_loads() -> None:
    config = ServeConfig.load(DOCKER / "sidecar.yaml")
    assert dict(config.warehouses) == {"demo": "/warehouse"}
    assert config.thrift_hosts(7778) == [("sidecar", 7778)]


def test_compose_trino_catalog_points_at_the_sidecar_service() -> None:
    text = (DOCKER / "trino" / "catalog" / "lakeprune.properties").read_text()
    assert text == catalog_file(engine_spec("trino"), "sidecar:7778")
