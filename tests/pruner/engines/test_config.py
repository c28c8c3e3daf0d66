"""The files of one instance's etc/: node, JVM, server, log and catalog configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from pruner.engines.catalog import catalog_file, parse_properties
from pruner.engines.config import InstanceConfig, config_files, write_config
from pruner.engines.errors import InvalidEngineConfigError
from pruner.engines.spec import PRESTO, TRINO


def test_trino_single_node_config(tmp_path: Path) -> None:
    files = config_files(InstanceConfig(TRINO, 18080, tmp_path, "127.0.0.1:7778"))
    assert set(files) == {
        "etc/node.properties",
        "etc/jvm.config",
        "etc/config.properties",
        "etc/log.properties",
        "etc/catalog/lakeprune.properties",
    }
    node = parse_properties(files["etc/node.properties"])
    assert node["node.environment"] == "lakeprune"
    assert node["node.id"] == "lakeprune-trino-18080"
    assert node["node.data-dir"] == str(tmp_path)
    assert node["node.bind-ip"] == node["node.internal-address"] == "127.0.0.1"
    server = parse_properties(files["etc/config.properties"])
    assert server["coordinator"] == server["node-scheduler.include-coordinator"] == "true"
    assert server["http-server.http.port"] == "18080"
    assert server["discovery.uri"] == "http://127.0.0.1:18080"
    assert server["query.max-memory-per-node"] == "1024MB"
    assert "discovery-server.enabled" not in server
    assert parse_properties(files["etc/log.properties"])["io.trino"] == "INFO"
    assert files["etc/catalog/lakeprune.properties"] == catalog_file(TRINO, "127.0.0.1:7778")


def test_presto_enables_its_embedded_discovery_server(tmp_path: Path) -> None:
    files = config_files(InstanceConfig(PRESTO, 8081, tmp_path, "h:1"))
    server = parse_properties(files["etc/config.properties"])
    assert server["discovery-server.enabled"] == "true"
    assert server["discovery.uri"] == "http://127.0.0.1:8081"
    assert parse_properties(files["etc/log.properties"])["com.facebook.presto"] == "INFO"
    assert parse_properties(files["etc/catalog/lakeprune.properties"])["connector.name"] == "presto-thrift"


def test_jvm_config_has_the_heap_and_no_flags_removed_from_newer_javas(tmp_path: Path) -> None:
    flags = config_files(InstanceConfig(TRINO, 1, tmp_path, "h:1", heap_mb=3072))["etc/jvm.config"].split()
    assert flags[:2] == ["-server", "-Xmx3072M"]
    assert "-XX:+UseG1GC" in flags and "-Duser.timezone=UTC" in flags
    assert not any("BiasedLocking" in flag for flag in flags)
    server = parse_properties(
        config_files(InstanceConfig(TRINO, 1, tmp_path, "h:1", heap_mb=3072))["etc/config.properties"]
    )
    assert server["query.max-memory"] == "1536MB"
    with pytest.raises(InvalidEngineConfigError, match="heap must be at least 512 MB, got 256"):
        config_files(InstanceConfig(TRINO, 1, tmp_path, "h:1", heap_mb=256))


def test_write_config_writes_extra_catalogs_and_drops_stale_ones(tmp_path: Path) -> None:
    stale = tmp_path / "etc" / "catalog" / "old.properties"
    stale.parent.mkdir(parents=True)
    stale.write_text("connector.name=memory\n")
    hive = {"connector.name": "hive", "hive.metastore": "file", "hive.metastore.catalog.dir": "file:///hms"}
    write_config(InstanceConfig(TRINO, 18080, tmp_path, "h:1", extra_catalogs={"hive": hive}))
    catalogs = sorted(p.name for p in (tmp_path / "etc" / "catalog").iterdir())
    assert catalogs == ["hive.properties", "lakeprune.properties"]
    assert parse_properties((tmp_path / "etc" / "catalog" / "hive.properties").read_text()) == hive
    assert (tmp_path / "etc" / "jvm.config").is_file()


def test_a_bad_extra_catalog_fails_before_anything_is_written(tmp_path: Path) -> None:
    config = InstanceConfig(
        TRINO, 18080, tmp_path, "h:1", extra_catalogs={"lakeprune": {"connector.name": "x"}}
    )
    with pytest.raises(InvalidEngineConfigError, match="reserved"):
        write_config(config)
    assert not (tmp_path / "etc").exists()
