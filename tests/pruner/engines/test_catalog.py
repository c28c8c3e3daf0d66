"""The Thrift catalog: its properties per engine, the committed template files (which must equal
what the code generates), sidecar addresses, extra catalogs and the Hive helper."""

from __future__ import annotations

from pathlib import Path

import pytest

from pruner.engines.catalog import (
    catalog_file,
    catalog_properties,
    check_extra_catalogs,
    hive_file_catalog,
    hive_location,
    parse_properties,
    parse_sidecar_addresses,
    sidecar_of,
)
from pruner.engines.errors import InvalidEngineConfigError
from pruner.engines.spec import ENGINES, PRESTO, TRINO, EngineSpec

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("spec", ENGINES.values(), ids=list(ENGINES))
def test_committed_thrift_catalog_file_matches_the_code(spec: EngineSpec) -> None:
    # Trino's lakeprune.properties is the native connector's (test_native_catalog.py).
    name = "lakeprune_thrift" if spec.native_plugin_dir else "lakeprune"
    committed = REPO / "connector-config" / spec.kind / "catalog" / f"{name}.properties"
    assert committed.read_text() == catalog_file(spec), (
        f"{committed} differs from the launcher's catalog; regenerate it with "
        f"`lakeprune {spec.kind} catalog > {committed.relative_to(REPO)}`"
    )


def test_trino_catalog_properties() -> None:
    text = catalog_file(TRINO, "sidecar-1:7778,sidecar-2:7778")
    values = parse_properties(text)
    assert values["connector.name"] == "trino_thrift"
    assert "Name it lakeprune_thrift.properties beside the native connector's" in text.replace("\n# ", " ")
    assert values["trino.thrift.client.addresses"] == "sidecar-1:7778,sidecar-2:7778"
    assert values["trino-thrift.max-response-size"] == "16MB"
    assert values["trino.thrift.client.transport"] == "FRAMED"
    assert values["trino.thrift.client.protocol"] == "BINARY"
    assert all(key == "connector.name" or key.startswith(("trino.", "trino-")) for key in values)


def test_presto_catalog_pins_framed_transport_and_a_one_minute_timeout() -> None:
    text = catalog_file(PRESTO)
    values = parse_properties(text)
    assert values["connector.name"] == "presto-thrift"
    assert values["presto.thrift.client.addresses"] == "127.0.0.1:7778"
    assert values["presto.thrift.client.transport"] == "FRAMED"
    assert values["presto.thrift.client.request-timeout"] == "1m"
    assert "defaults to HEADER" in text and "default is 10s" in text
    assert all(key == "connector.name" or key.startswith(("presto.", "presto-")) for key in values)


@pytest.mark.parametrize("spec", ENGINES.values(), ids=list(ENGINES))
def test_every_property_is_explained_and_the_file_is_only_comments_and_properties(spec: EngineSpec) -> None:
    properties = catalog_properties(spec)
    assert len({p.key for p in properties}) == len(properties)
    assert all(p.comment.strip() for p in properties)
    for line in catalog_file(spec).splitlines():
        assert not line or line.startswith("# ") or "=" in line
        assert len(line) <= 100


def test_both_engines_set_the_same_properties_under_their_own_prefix() -> None:
    def shape(spec: EngineSpec) -> list[str]:
        return [p.key.replace(spec.property_prefix, "<p>", 1) for p in catalog_properties(spec)]

    assert shape(TRINO) == shape(PRESTO)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("127.0.0.1:7778", ("127.0.0.1:7778",)),
        (" a.example:1 , b:65535 ", ("a.example:1", "b:65535")),
        ("[::1]:7778", ("[::1]:7778",)),
        ("sidecar-0.sidecar.svc:7778", ("sidecar-0.sidecar.svc:7778",)),
    ],
)
def test_sidecar_addresses(value: str, expected: tuple[str, ...]) -> None:
    assert parse_sidecar_addresses(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "",
        "localhost",
        "host:",
        ":7778",
        "host:0",
        "host:70000",
        "ho st:1",
        "::1:7778",
        "host:\uff17\uff17\uff17\uff18",  # full-width digits: isdigit() alone accepts them
        "host:\u00b2",  # superscript two: isdigit() accepts it, int() does not
        "host\n:7778",
    ],
)
def test_bad_sidecar_addresses_are_rejected_in_one_line(value: str) -> None:
    with pytest.raises(InvalidEngineConfigError) as caught:
        parse_sidecar_addresses(value)
    assert "\n" not in str(caught.value)
    assert "HOST:PORT" in str(caught.value)


def test_sidecar_of_reads_the_addresses_back() -> None:
    assert sidecar_of(TRINO, catalog_file(TRINO, "s:1")) == "s:1"
    assert sidecar_of(PRESTO, catalog_file(PRESTO, "s:2,t:3")) == "s:2,t:3"
    assert sidecar_of(PRESTO, "connector.name=memory\n") is None


def test_extra_catalogs_are_checked() -> None:
    hive = {"connector.name": "hive", "hive.metastore": "file"}
    assert check_extra_catalogs({"hive": hive}) == {"hive": hive}
    assert check_extra_catalogs(None) == {}
    cases = {
        "Hive": (hive, "must match"),
        "lakeprune": (hive, "reserved"),
        "lakeprune_thrift": (hive, "reserved"),
        "system": (hive, "reserved"),
        "memory": ({"memory.max-data-per-node": "1GB"}, "connector.name"),
        "bad": ({"connector.name": "memory", "a=b": "c"}, "invalid property"),
        "bad2": ({"connector.name": "memory", "k": "two\nlines"}, "invalid property"),
    }
    for name, (properties, message) in cases.items():
        with pytest.raises(InvalidEngineConfigError, match=message):
            check_extra_catalogs({name: properties})


def test_hive_file_catalog(tmp_path: Path) -> None:
    # Trino 476: no Hadoop; local files through the native file system rooted at /.
    assert hive_file_catalog(TRINO, tmp_path / "hms") == {
        "connector.name": "hive",
        "fs.native-local.enabled": "true",
        "local.location": "/",
        "hive.metastore": "file",
        "hive.metastore.catalog.dir": f"local://{tmp_path}/hms",
    }
    assert hive_file_catalog(PRESTO, tmp_path) == {
        "connector.name": "hive-hadoop2",
        "hive.metastore": "file",
        "hive.metastore.catalog.dir": tmp_path.as_uri(),
    }
    assert hive_location(TRINO, tmp_path / "a b") == f"local://{tmp_path}/a%20b"
    assert hive_location(PRESTO, tmp_path / "t") == f"file://{tmp_path}/t"
