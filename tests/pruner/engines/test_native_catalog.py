"""The native connector's catalog: the exact property names the Java connector defines, defaults,
optional token and TLS, checks of addresses and durations, and the committed template."""

from __future__ import annotations

from pathlib import Path

import pytest

from pruner.engines.catalog import parse_properties
from pruner.engines.errors import InvalidEngineConfigError
from pruner.engines.native_catalog import (
    DEFAULT_GRPC,
    NativeCatalog,
    grpc_of,
    native_catalog_file,
    native_catalog_properties,
)
from pruner.engines.spec import TRINO

REPO = Path(__file__).resolve().parents[3]


def test_committed_native_catalog_file_matches_the_code() -> None:
    committed = REPO / "connector-config" / "trino" / "catalog" / "lakeprune.properties"
    assert committed.read_text() == native_catalog_file(TRINO, NativeCatalog(DEFAULT_GRPC)), (
        f"{committed} differs from the launcher's native catalog; regenerate it with "
        f"`lakeprune trino catalog --grpc {DEFAULT_GRPC} > {committed.relative_to(REPO)}`"
    )


def test_defaults_and_property_names() -> None:
    values = parse_properties(native_catalog_file(TRINO, NativeCatalog(" a:1 , b:2 ")))
    assert values == {
        "connector.name": "lakeprune",
        "lakeprune.sidecar.addresses": "a:1,b:2",
        "lakeprune.sidecar.request-timeout": "30s",
        "lakeprune.sidecar.max-attempts": "3",
        "lakeprune.sidecar.tls.enabled": "false",
        "lakeprune.dynamic-filtering.wait-timeout": "1s",
    }  # token and trust certificate are commented-out examples when unset


def test_token_tls_and_tuning(tmp_path: Path) -> None:
    catalog = NativeCatalog(
        "sidecar:7777",
        request_timeout="5s",
        max_attempts=1,
        token="t0ken",
        trust_certificate=tmp_path / "ca.crt",
        dynamic_filtering_wait_timeout="500ms",
    )
    assert catalog.tls  # a trust certificate implies TLS
    assert "t0ken" not in repr(catalog)
    values = parse_properties(native_catalog_file(TRINO, catalog))
    assert values["lakeprune.sidecar.token"] == "t0ken"
    assert values["lakeprune.sidecar.tls.enabled"] == "true"
    assert values["lakeprune.sidecar.tls.trust-certificate"] == str(tmp_path / "ca.crt")
    assert values["lakeprune.sidecar.request-timeout"] == "5s"
    assert values["lakeprune.sidecar.max-attempts"] == "1"
    assert values["lakeprune.dynamic-filtering.wait-timeout"] == "500ms"
    assert (
        parse_properties(native_catalog_file(TRINO, NativeCatalog("s:1", tls=True)))[
            "lakeprune.sidecar.tls.enabled"
        ]
        == "true"
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"addresses": "nohost"}, "sidecar address must be HOST:PORT \\(e.g. 127.0.0.1:7777\\)"),
        ({"addresses": ""}, "sidecar address is empty"),
        ({"addresses": "a:1", "request_timeout": "30"}, "request timeout must be a duration"),
        ({"addresses": "a:1", "dynamic_filtering_wait_timeout": "1 s"}, "wait timeout must be a duration"),
        ({"addresses": "a:1", "max_attempts": 0}, "max attempts must be at least 1"),
        ({"addresses": "a:1", "token": " "}, "token is empty"),
        ({"addresses": "a:1", "token": "a\nb"}, "spans lines"),
    ],
)
def test_bad_values_fail_in_one_line(arguments: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidEngineConfigError, match=message) as caught:
        NativeCatalog(**arguments)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)


def test_every_property_is_explained_and_lines_fit() -> None:
    properties = native_catalog_properties(NativeCatalog(DEFAULT_GRPC))
    assert len({p.key for p in properties}) == len(properties)
    assert all(p.comment.strip() for p in properties)
    for line in native_catalog_file(TRINO, NativeCatalog(DEFAULT_GRPC)).splitlines():
        assert not line or line.startswith("# ") or "=" in line
        assert len(line) <= 100


def test_grpc_of_reads_only_native_catalogs() -> None:
    assert grpc_of(native_catalog_file(TRINO, NativeCatalog("x:1,y:2"))) == "x:1,y:2"
    assert grpc_of("connector.name=trino_thrift\nlakeprune.sidecar.addresses=x:1\n") is None
