"""The files docker/compose.yaml mounts are valid: the sidecar config loads, its health check probes
the config's metrics port at the health path, and the Trino catalog is the launcher's catalog for
the compose service address (no Docker engine needed)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from pruner.engines.catalog import catalog_file
from pruner.engines.spec import engine_spec
from pruner.serving.config import ServeConfig
from pruner.serving.http import HEALTH_PATH

DOCKER = Path(__file__).parent.parent / "docker"


def test_compose_sidecar_config_loads() -> None:
    config = ServeConfig.load(DOCKER / "sidecar.yaml")
    assert dict(config.warehouses) == {"demo": "/warehouse"}
    assert config.thrift_hosts(7778) == [("sidecar", 7778)]


def test_compose_trino_catalog_points_at_the_sidecar_service() -> None:
    text = (DOCKER / "trino" / "catalog" / "lakeprune.properties").read_text()
    assert text == catalog_file(engine_spec("trino"), "sidecar:7778")


def test_compose_health_check_probes_the_sidecar_health_endpoint() -> None:
    compose = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    config = ServeConfig.load(DOCKER / "sidecar.yaml")
    probe = " ".join(compose["services"]["sidecar"]["healthcheck"]["test"])
    assert re.search(rf"http://127\.0\.0\.1:{config.metrics_port}{HEALTH_PATH}\b", probe)
    assert compose["services"]["trino"]["depends_on"]["sidecar"] == {"condition": "service_healthy"}
