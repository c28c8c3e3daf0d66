"""The native connector's catalog (`connector.name=lakeprune`, Trino only), as data: Trino plans with
the sidecar over gRPC (metadata, statistics, pruned splits, dynamic filters) and reads the Parquet
files itself. `NativeCatalog` holds what a caller chooses (the sidecars' gRPC addresses, timeouts,
retries, the bearer token and TLS, and `S3Access`: how Trino's native S3 file system reads tables
on S3, taken from the AWS SDKs' variables by `s3_access_from_environment`);
`native_catalog_properties` turns it into every property with the comment that explains it,
rendered into the committed template (`connector-config/trino/catalog/lakeprune.properties`,
checked equal by a test) and into each launched instance's `etc/catalog/lakeprune.properties`. The
property names are the Java connector's (`connector/trino/`); a value is checked here so that a
typo fails before Trino starts."""

from __future__ import annotations

import re
from collections.abc import Mapping
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
from pruner.object_store import AWS_VARIABLES, is_endpoint_url, s3_endpoint, s3_region

DEFAULT_GRPC = "127.0.0.1:7777"  # the sidecar's gRPC port
NATIVE_CONNECTOR_NAME = "lakeprune"
ADDRESSES_PROPERTY = "lakeprune.sidecar.addresses"
TOKEN_PROPERTY = "lakeprune.sidecar.token"
_DURATION_RE = re.compile(r"(\d+(?:\.\d+)?)(ns|us|ms|s|m|h|d)")  # airlift Duration, matched whole
_UNIT_MILLIS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4, "h": 3.6e6, "d": 8.64e7}
DEFAULT_S3_REGION = "us-east-1"  # the AWS SDKs' and pyarrow's region when none is set
# Trino's substitution of an environment variable of its own process: the secret stays out of files
ACCESS_KEY_REFERENCE = "${ENV:AWS_ACCESS_KEY_ID}"
SECRET_KEY_REFERENCE = "${ENV:AWS_SECRET_ACCESS_KEY}"
# Any of them set: the catalog reads tables on S3 (a session token alone says nothing of where).
S3_VARIABLES = tuple(name for name in AWS_VARIABLES if name != "AWS_SESSION_TOKEN")


def check_duration(name: str, value: str) -> str:
    """`value` if it is a duration Trino reads (`500ms`, `30s`, `1m`), else a one-line error."""
    if not _DURATION_RE.fullmatch(value):
        raise InvalidEngineConfigError(f"{name} must be a duration such as 500ms, 30s or 1m, got {value!r}")
    return value


def duration_millis(value: str) -> float:
    """A duration as Trino writes it (`12.34ms`, `1.20s`) in milliseconds; ValueError otherwise."""
    matched = _DURATION_RE.fullmatch(value)
    if matched is None:
        raise ValueError(f"not a Trino duration: {value!r}")
    return float(matched[1]) * _UNIT_MILLIS[matched[2]]


def _one_line(name: str, value: str) -> str:
    if not value.strip() or any(c in value for c in "\r\n"):
        raise InvalidEngineConfigError(f"the S3 {name} is empty or spans lines")
    return value.strip()


@dataclass(frozen=True)
class S3Access:
    """How the native connector reads tables on S3: Trino's native S3 file system
    (`fs.native-s3.enabled`), its endpoint (None: AWS's own), region, path-style access (default:
    on exactly when there is a custom endpoint) and credentials (None: the AWS SDK's default chain
    in the Trino process). Credentials are written into the catalog as given: the launcher gives
    `${ENV:...}` references, never the secret itself."""

    endpoint: str | None = None
    region: str = DEFAULT_S3_REGION
    path_style_access: bool | None = None
    access_key: str | None = field(default=None, repr=False)
    secret_key: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.endpoint is not None:
            endpoint = _one_line("endpoint", self.endpoint)
            if not is_endpoint_url(endpoint):
                raise InvalidEngineConfigError(
                    f"the S3 endpoint must be http(s)://HOST[:PORT], got {endpoint!r}"
                )
            object.__setattr__(self, "endpoint", endpoint.rstrip("/"))
        object.__setattr__(self, "region", _one_line("region", self.region))
        if self.path_style_access is None:
            object.__setattr__(self, "path_style_access", self.endpoint is not None)
        if (self.access_key is None) != (self.secret_key is None):
            raise InvalidEngineConfigError("give both the S3 access key and the secret key, or neither")
        if self.access_key is not None and self.secret_key is not None:
            object.__setattr__(self, "access_key", _one_line("access key", self.access_key))
            object.__setattr__(self, "secret_key", _one_line("secret key", self.secret_key))


def s3_access_from_environment(environ: Mapping[str, str]) -> S3Access | None:
    """S3 access from the AWS SDKs' standard variables, None when none of them is set (local tables
    only). The endpoint is `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`; the region `AWS_REGION`,
    else `AWS_DEFAULT_REGION`, else us-east-1. With both `AWS_ACCESS_KEY_ID` and
    `AWS_SECRET_ACCESS_KEY` set (and no `AWS_SESSION_TOKEN`, which Trino's S3 properties cannot
    carry), the catalog names them as `${ENV:...}` references that Trino resolves in its own
    environment; otherwise it names no credentials and the AWS SDK's default chain applies."""
    values = {name: environ[name].strip() for name in S3_VARIABLES if environ.get(name, "").strip()}
    if not values:
        return None
    keys = (
        "AWS_ACCESS_KEY_ID" in values
        and "AWS_SECRET_ACCESS_KEY" in values
        and not environ.get("AWS_SESSION_TOKEN", "").strip()
    )
    return S3Access(
        endpoint=s3_endpoint(values),
        region=s3_region(values) or DEFAULT_S3_REGION,
        access_key=ACCESS_KEY_REFERENCE if keys else None,
        secret_key=SECRET_KEY_REFERENCE if keys else None,
    )


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
    s3: S3Access | None = None  # None: local tables only

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
    return (*_sidecar_properties(catalog, certificate), *_s3_properties(catalog.s3))


def _sidecar_properties(catalog: NativeCatalog, certificate: Path | None) -> tuple[CatalogProperty, ...]:
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


def _s3_properties(s3: S3Access | None) -> tuple[CatalogProperty, ...]:
    """Trino's native S3 file system; commented-out examples when the catalog has no S3 access."""
    example = s3 is None
    shown = s3 or S3Access(endpoint="http://127.0.0.1:8333")
    keys = shown.access_key is not None or example
    return (
        CatalogProperty(
            "fs.native-s3.enabled",
            "true",
            "Tables on S3 (s3:// warehouses): Trino's native S3 file system reads their files. The "
            "launcher sets this and the s3.* properties below from the AWS SDKs' variables "
            "(AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, AWS_REGION or AWS_DEFAULT_REGION, "
            "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) when they are set; local tables need none.",
            enabled=not example,
        ),
        CatalogProperty(
            "s3.endpoint",
            shown.endpoint or "http://127.0.0.1:8333",
            "A custom S3 endpoint (MinIO, SeaweedFS, ...); unset: AWS's own.",
            enabled=not example and shown.endpoint is not None,
        ),
        CatalogProperty("s3.region", shown.region, "The S3 region.", enabled=not example),
        CatalogProperty(
            "s3.path-style-access",
            "true" if shown.path_style_access else "false",
            "Bucket in the URL's path rather than its host name: on with a custom endpoint.",
            enabled=not example,
        ),
        CatalogProperty(
            "s3.aws-access-key",
            shown.access_key or ACCESS_KEY_REFERENCE,
            "S3 credentials. ${ENV:NAME} is the Trino process's environment variable NAME, so the "
            "secret is in no file; unset: the AWS SDK's default credentials (environment, profile, "
            "instance role).",
            enabled=not example and keys,
        ),
        CatalogProperty(
            "s3.aws-secret-key",
            shown.secret_key or SECRET_KEY_REFERENCE,
            "The S3 secret key, named the same way (Trino redacts it in its log).",
            enabled=not example and keys,
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
