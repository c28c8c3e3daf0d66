"""The native connector's catalog (`connector.name=lakeprune`, Trino only), as data: Trino plans with
the sidecar over gRPC (metadata, statistics, pruned splits, dynamic filters) and reads the Parquet
files itself. `NativeCatalog` holds what a caller chooses (the sidecars' gRPC addresses, timeouts,
retries, the bearer token and TLS); `native_catalog_properties` turns it into every property with
the comment that explains it, rendered into the committed template
(`connector-config/trino/catalog/lakeprune.properties`, checked equal by a test) and into each
launched instance's `etc/catalog/lakeprune.properties`. The property names are the Java
connector's (`connector/trino/`); a value is checked here so that a typo fails before Trino
starts."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pruner.engines.catalog import (
    CATALOG_NAME,
    CatalogProperty,
    parse_properties,
    parse_sidecar_addresses,
    render_catalog,
)
from pruner.engines.errors import InvalidEngineConfigError
from pruner.engines.spec import EngineSpec

DEFAULT_GRPC = "127.0.0.1:7777"  # the sidecar's gRPC port
NATIVE_CONNECTOR_NAME = "lakeprune"
ADDRESSES_PROPERTY = "lakeprune.sidecar.addresses"
TOKEN_PROPERTY = "lakeprune.sidecar.token"
_DURATION_RE = re.compile(r"\d+(\.\d+)?(ns|us|ms|s|m|h|d)")  # airlift Duration, matched whole


def check_duration(name: str, value: str) -> str:
    """`value` if it is a duration Trino reads (`500ms`, `30s`, `1m`), else a one-line error."""
    if not _DURATION_RE.fullmatch(value):
        raise InvalidEngineConfigError(f"{name} must be a duration such as 500ms, 30s or 1m, got {value!r}")
    return value


@dataclass(frozen=True)
class NativeCatalog:
    """What the native catalog points at and how it talks to the sidecars."""

    addresses: str  # host:port[,host:port...], the sidecars' gRPC endpoints
    request_timeout: str = "30s"
    max_attempts: int = 3
    token: str | None = field(default=None, repr=False)
    tls: bool = False
    trust_certificate: Path | None = None  # PEM; implies TLS
    dynamic_filtering_wait_timeout: str = "1s"

    def __post_init__(self) -> None:
        object.__setattr__(self, "addresses", ",".join(parse_sidecar_addresses(self.addresses, DEFAULT_GRPC)))
        check_duration("the request timeout", self.request_timeout)
        check_duration("the dynamic filtering wait timeout", self.dynamic_filtering_wait_timeout)
        if self.max_attempts < 1:
            raise InvalidEngineConfigError(f"max attempts must be at least 1, got {self.max_attempts}")
        if self.token is not None and (not self.token.strip() or any(c in self.token for c in "\r\n")):
            raise InvalidEngineConfigError("the gRPC token is empty or spans lines: give a one-line token")
        if self.trust_certificate is not None:
            object.__setattr__(self, "trust_certificate", self.trust_certificate.expanduser().absolute())
            object.__setattr__(self, "tls", True)


def native_catalog_properties(catalog: NativeCatalog) -> tuple[CatalogProperty, ...]:
    """Every property of the native catalog, in file order (optional ones commented out when unset)."""
    certificate = catalog.trust_certificate
    return (
        CatalogProperty(
            "connector.name",
            NATIVE_CONNECTOR_NAME,
            "lakeprune's own Trino connector (the plugin directory lakeprune-trino-<version>, built by "
            "connector/trino/build.sh, installed as plugin/lakeprune/).",
        ),
        CatalogProperty(
            ADDRESSES_PROPERTY,
            catalog.addresses,
            "The lakeprune sidecars' gRPC endpoints, host:port[,host:port...] (required). A call that "
            "fails on one is retried on the next.",
        ),
        CatalogProperty(
            "lakeprune.sidecar.request-timeout",
            catalog.request_timeout,
            "Time allowed for one gRPC call (table metadata, statistics, one page of pruned splits); "
            "a slow or dead sidecar fails the query with an error naming it after this long.",
        ),
        CatalogProperty(
            "lakeprune.sidecar.max-attempts",
            str(catalog.max_attempts),
            "Attempts per call across the address list before the query fails (1 = no retry).",
        ),
        CatalogProperty(
            TOKEN_PROPERTY,
            catalog.token if catalog.token is not None else "<token>",
            "Bearer token sent with every call, the one the sidecar checks (`lakeprune serve "
            "--token-file`, or security.token in its config). Unset: no token is sent.",
            enabled=catalog.token is not None,
        ),
        CatalogProperty(
            "lakeprune.sidecar.tls.enabled",
            "true" if catalog.tls else "false",
            "TLS to the sidecars (their security.tls_cert_file / tls_key_file).",
        ),
        CatalogProperty(
            "lakeprune.sidecar.tls.trust-certificate",
            str(certificate) if certificate is not None else "/etc/lakeprune/tls/ca.crt",
            "PEM certificate(s) to trust for the sidecars' TLS; unset: the JVM's default trust store.",
            enabled=certificate is not None,
        ),
        CatalogProperty(
            "lakeprune.dynamic-filtering.wait-timeout",
            catalog.dynamic_filtering_wait_timeout,
            "How long split listing waits for a join's dynamic filter before pruning without it; "
            "with it, the sidecar prunes the probe table by the build side's keys.",
        ),
    )


def native_catalog_file(spec: EngineSpec, catalog: NativeCatalog) -> str:
    """The commented native `lakeprune.properties` for `spec`."""
    header = (
        f"The lakeprune catalog for {spec.display_name} {spec.version} with lakeprune's native "
        f"connector: queries on {CATALOG_NAME}.<schema>.<table> ask the sidecar over gRPC for the "
        "table and for the files a matching row can be in, and Trino reads those Parquet files "
        "itself, with exact types. Put this file in the engine's etc/catalog/ and the plugin in its "
        f"plugin/{spec.native_plugin_dir}/. Generated by `lakeprune {spec.kind} catalog --grpc ...`; "
        f"`lakeprune {spec.kind} start --grpc ...` writes the same file and installs the plugin."
    )
    return render_catalog(header, native_catalog_properties(catalog))


def grpc_of(catalog_text: str) -> str | None:
    """The gRPC addresses a native catalog file points at (None for any other catalog)."""
    values = parse_properties(catalog_text)
    if values.get("connector.name") != NATIVE_CONNECTOR_NAME:
        return None
    return values.get(ADDRESSES_PROPERTY)
