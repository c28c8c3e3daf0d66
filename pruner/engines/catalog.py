"""The Thrift catalog an engine uses to reach the sidecar, as data: every property with its value and
the comment that explains it, rendered both into the committed templates
(`connector-config/<engine>/catalog/`, checked equal by a test) and into each launched instance's
`etc/catalog/`, as `lakeprune` (or, on Trino beside the native connector's `lakeprune` catalog,
as `lakeprune_thrift`). Also the rendering of commented catalog files, the checks on sidecar
addresses and on extra catalogs a caller adds (a Hive catalog over a file metastore, say), and a
helper that builds that one for the engine's Hive connector."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pruner.engines.errors import InvalidEngineConfigError
from pruner.engines.spec import EngineSpec

CATALOG_NAME = "lakeprune"
THRIFT_CATALOG_NAME = "lakeprune_thrift"  # the Thrift catalog's name beside the native one
DEFAULT_SIDECAR = "127.0.0.1:7778"  # the sidecar's Thrift port (gRPC is 7777, metrics 9464)
RESERVED_CATALOGS = frozenset({CATALOG_NAME, THRIFT_CATALOG_NAME, "system"})
_CATALOG_NAME_RE = re.compile(r"[a-z][a-z0-9_]*")  # matched whole
_HOST_RE = re.compile(r"(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)")  # matched whole
_WIDTH = 100


@dataclass(frozen=True)
class CatalogProperty:
    """One property of a catalog file; `enabled=False` renders it commented out (an optional
    property shown with an example value)."""

    key: str
    value: str
    comment: str
    enabled: bool = True


def parse_sidecar_addresses(value: str, example: str = DEFAULT_SIDECAR) -> tuple[str, ...]:
    """`host:port[,host:port...]` -> the addresses; hosts are names, IPv4 or [IPv6] literals."""
    addresses = tuple(part.strip() for part in value.split(",") if part.strip())
    if not addresses:
        raise InvalidEngineConfigError(f"sidecar address is empty: expected HOST:PORT, e.g. {example}")
    for address in addresses:
        host, sep, port = address.rpartition(":")
        valid_port = port.isascii() and port.isdigit() and 0 < int(port) < 65536
        if not sep or not _HOST_RE.fullmatch(host) or not valid_port:
            raise InvalidEngineConfigError(
                f"sidecar address must be HOST:PORT (e.g. {example}), got {address!r}"
            )
    return addresses


def catalog_properties(spec: EngineSpec, sidecar: str = DEFAULT_SIDECAR) -> tuple[CatalogProperty, ...]:
    """Every property of the lakeprune catalog for `spec`, in file order."""
    addresses = ",".join(parse_sidecar_addresses(sidecar))
    client = f"{spec.property_prefix}.thrift.client"
    connector = f"{spec.property_prefix}-thrift"
    transport = "Frame format on the wire: FRAMED (4-byte big-endian length, then the message)."
    if spec.thrift_default_transport != "FRAMED":
        transport = (
            f"Frame format on the wire. {spec.display_name}'s client defaults to "
            f"{spec.thrift_default_transport} (THeader); lakeprune pins FRAMED, Trino's transport, so "
            "that one sidecar serves both engines with the same wire format."
        )
    timeout = "Time allowed for one call (split listing, one page of rows)."
    if spec.thrift_default_request_timeout != "1m":
        timeout = (
            f"Time allowed for one call. {spec.display_name}'s default is "
            f"{spec.thrift_default_request_timeout}; lakeprune uses Trino's 1m so that a split listing "
            "over a large, cold index is not cut short."
        )
    return (
        CatalogProperty(
            "connector.name",
            spec.connector_name,
            f"The Thrift connector of {spec.display_name} {spec.version} (its plugin ships in the "
            "server tarball).",
        ),
        CatalogProperty(
            f"{client}.addresses",
            addresses,
            "The lakeprune sidecars' Thrift endpoints, host:port[,host:port...]. Metadata and split "
            "calls go to any of them; row calls go to the hosts a split names, else to these.",
        ),
        CatalogProperty(
            f"{connector}.max-response-size",
            "16MB",
            "Largest page of rows the engine asks for in one call (1MB-32MB); the sidecar keeps each "
            "reply under it and under max-frame-size.",
        ),
        CatalogProperty(
            f"{connector}.metadata-refresh-threads",
            "1",
            "Threads that refresh the engine's cache of table metadata in the background (entries "
            "live 10 minutes and are refreshed after 2).",
        ),
        CatalogProperty(
            f"{connector}.lookup-requests-concurrency",
            "1",
            "Concurrent index-lookup calls per query (index joins on the record key).",
        ),
        CatalogProperty(f"{client}.transport", "FRAMED", transport),
        CatalogProperty(f"{client}.protocol", "BINARY", "Message encoding: the Thrift binary protocol."),
        CatalogProperty(
            f"{client}.max-frame-size",
            "16MB",
            "Largest frame the client accepts; replies larger than this fail.",
        ),
        CatalogProperty(f"{client}.connect-timeout", "500ms", "Time allowed to open a connection."),
        CatalogProperty(f"{client}.request-timeout", "1m", timeout),
        CatalogProperty(
            f"{client}.max-retries",
            "5",
            "Retries of a failed call: connection errors and errors the sidecar marks retryable; "
            "a retry may go to another address.",
        ),
        CatalogProperty(f"{client}.min-backoff-delay", "100ms", "First delay between retries."),
        CatalogProperty(f"{client}.max-backoff-delay", "30s", "Longest delay between retries."),
        CatalogProperty(
            f"{client}.max-retry-time",
            "1m",
            "Give up retrying a call after this long (so a query against a sidecar that is down "
            "fails after about a minute).",
        ),
    )


def render_catalog(header: str, properties: tuple[CatalogProperty, ...]) -> str:
    """A catalog file: the header and each property's explanation as comments, then the property
    (commented out when it is not enabled)."""
    lines = [f"# {line}" for line in textwrap.wrap(header, _WIDTH - 2)]
    for prop in properties:
        lines.append("")
        lines.extend(f"# {line}" for line in textwrap.wrap(prop.comment, _WIDTH - 2))
        lines.append(f"{'' if prop.enabled else '#'}{prop.key}={prop.value}")
    return "\n".join(lines) + "\n"


def catalog_file(spec: EngineSpec, sidecar: str = DEFAULT_SIDECAR) -> str:
    """The commented Thrift catalog file for `spec`."""
    if spec.native_plugin_dir is None:
        naming = f"Name it {CATALOG_NAME}.properties"
    else:
        naming = (
            f"Name it {THRIFT_CATALOG_NAME}.properties beside the native connector's "
            f"{CATALOG_NAME}.properties (`lakeprune {spec.kind} start --grpc ... --sidecar ...` does "
            f"that), or {CATALOG_NAME}.properties where it is the only lakeprune catalog"
        )
    header = (
        f"The lakeprune Thrift catalog for {spec.display_name} {spec.version}: queries on its "
        "<schema>.<table> go to the lakeprune sidecar over Thrift, which prunes the files no matching "
        f"row can be in and returns the rows. {naming}; put it in the engine's etc/catalog/ and point "
        f"the addresses at your sidecar(s). Generated by `lakeprune {spec.kind} catalog`; `lakeprune "
        f"{spec.kind} start` writes the same file with its --sidecar."
    )
    return render_catalog(header, catalog_properties(spec, sidecar))


def parse_properties(text: str) -> dict[str, str]:
    """key=value lines of a .properties file (comments and blank lines skipped)."""
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip()
    return values


def sidecar_of(spec: EngineSpec, catalog_text: str) -> str | None:
    """The sidecar addresses a catalog file points at."""
    return parse_properties(catalog_text).get(f"{spec.property_prefix}.thrift.client.addresses")


def check_extra_catalogs(catalogs: Mapping[str, Mapping[str, str]] | None) -> dict[str, dict[str, str]]:
    """Validate extra catalogs (name -> properties); returns plain-dict copies."""
    checked: dict[str, dict[str, str]] = {}
    for name, properties in (catalogs or {}).items():
        if not _CATALOG_NAME_RE.fullmatch(name):
            raise InvalidEngineConfigError(f"catalog name must match [a-z][a-z0-9_]*, got {name!r}")
        if name in RESERVED_CATALOGS:
            raise InvalidEngineConfigError(f"catalog name {name!r} is reserved")
        if "connector.name" not in properties:
            raise InvalidEngineConfigError(f"catalog {name!r} needs a connector.name property")
        for key, value in properties.items():
            if not key or any(c in key for c in "=:\n\r# ") or any(c in str(value) for c in "\n\r"):
                raise InvalidEngineConfigError(f"catalog {name!r}: invalid property {key!r}={value!r}")
        checked[name] = {key: str(value) for key, value in properties.items()}
    return checked


def hive_location(spec: EngineSpec, path: Path) -> str:
    """How the engine's Hive connector names a local directory: `local:///...` for Trino's native
    local file system (rooted at `/` by `hive_file_catalog`), `file:///...` for Hadoop's."""
    uri = path.absolute().as_uri()
    return "local" + uri.removeprefix("file") if spec.hive_native_local_fs else uri


def hive_file_catalog(spec: EngineSpec, metastore_dir: Path) -> dict[str, str]:
    """A Hive catalog whose metastore is a local directory (no metastore service): tables are
    created with `CREATE TABLE ... WITH (external_location = '<hive_location(...)>', format =
    'PARQUET')`."""
    catalog = {"connector.name": spec.hive_connector_name}
    if spec.hive_native_local_fs:
        catalog |= {"fs.native-local.enabled": "true", "local.location": "/"}
    catalog |= {"hive.metastore": "file", "hive.metastore.catalog.dir": hive_location(spec, metastore_dir)}
    return catalog
