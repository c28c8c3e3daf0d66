"""The files of one instance's etc/: node, JVM, server, log and catalog configuration, including
which lakeprune catalogs an instance gets from its Thrift and gRPC addresses."""

from __future__ import annotations

from pathlib import Path

import pytest

from pruner.engines.catalog import DEFAULT_SIDECAR, catalog_file, parse_properties
from pruner.engines.config import InstanceConfig, config_files, lakeprune_catalogs, write_config
from pruner.engines.errors import InvalidEngineConfigError
from pruner.engines.native_catalog import NativeCatalog, native_catalog_file
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
    assert "query.max-total-memory-per-node" not in server  # Trino 476 refuses it
    assert "discovery-server.enabled" not in server
    assert parse_properties(files["etc/log.properties"])["io.trino"] == "INFO"
    assert files["etc/catalog/lakeprune.properties"] == catalog_file(TRINO, "127.0.0.1:7778")


def test_presto_enables_its_embedded_discovery_server(tmp_path: Path) -> None:
    files = config_files(InstanceConfig(PRESTO, 8081, tmp_path, "h:1"))
    server = parse_properties(files["etc/config.properties"])
    assert server["discovery-server.enabled"] == "true"
    assert server["discovery.uri"] == "http://127.0.0.1:8081"
    assert server["query.max-total-memory-per-node"] == "1024MB"
    assert parse_properties(files["etc/log.properties"])["com.facebook.presto"] == "INFO"
    assert parse_properties(files["etc/catalog/lakeprune.properties"])["connector.name"] == "presto-thrift"


def test_jvm_config_has_the_heap_and_no_flags_removed_from_newer_javas(tmp_path: Path) -> None:
    flags = config_files(InstanceConfig(TRINO, 1, tmp_path, "h:1", heap_mb=3072))["etc/jvm.config"].split()
    assert flags[:2] == ["-server", "-Xmx3072M"]
    assert "-XX:+UseParallelGC" in flags and "-Duser.timezone=UTC" in flags
    assert not any("BiasedLocking" in flag for flag in flags)
    # the server log goes where `launcher start` would put it, not to the console
    assert f"-Dlog.output-file={tmp_path}/var/log/server.log" in flags
    assert "-Dlog.enable-console=false" in flags
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


def test_the_lakeprune_catalogs_follow_the_addresses_given(tmp_path: Path) -> None:
    native = NativeCatalog("127.0.0.1:7777")
    thrift_only = InstanceConfig(TRINO, 1, tmp_path, "127.0.0.1:7778")
    assert lakeprune_catalogs(thrift_only) == {"lakeprune": catalog_file(TRINO, "127.0.0.1:7778")}
    default = InstanceConfig(TRINO, 1, tmp_path, None)
    assert lakeprune_catalogs(default) == {"lakeprune": catalog_file(TRINO, DEFAULT_SIDECAR)}
    grpc_only = InstanceConfig(TRINO, 1, tmp_path, None, grpc=native)
    assert lakeprune_catalogs(grpc_only) == {"lakeprune": native_catalog_file(TRINO, native)}
    both = InstanceConfig(TRINO, 1, tmp_path, "127.0.0.1:7778", grpc=native)
    assert lakeprune_catalogs(both) == {
        "lakeprune": native_catalog_file(TRINO, native),
        "lakeprune_thrift": catalog_file(TRINO, "127.0.0.1:7778"),
    }
    assert set(config_files(both)) >= {
        "etc/catalog/lakeprune.properties",
        "etc/catalog/lakeprune_thrift.properties",
    }
    with pytest.raises(
        InvalidEngineConfigError, match="Presto has no native lakeprune connector: give it a Thrift --sidecar"
    ):
        config_files(InstanceConfig(PRESTO, 1, tmp_path, None, grpc=native))


def test_a_catalog_with_a_token_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    native = NativeCatalog("127.0.0.1:7777", token="s3cret")
    write_config(InstanceConfig(TRINO, 18080, tmp_path, None, grpc=native))
    catalog = tmp_path / "etc" / "catalog" / "lakeprune.properties"
    assert parse_properties(catalog.read_text())["lakeprune.sidecar.token"] == "s3cret"
    assert catalog.stat().st_mode & 0o777 == 0o600
