"""The sidecar's configuration: which schema names map to which warehouse roots, where the gRPC,
Thrift and metrics endpoints listen, which Thrift addresses are advertised as split hosts, how many
planning processes serve those ports (`workers`), the index cache size (per worker), request
limits, the security settings and S3 settings that override the AWS SDKs' variables for this
sidecar. It is read from a YAML file (`lakeprune serve --config FILE`, example in
`connector-config/sidecar.yaml`) or built from command-line options, and validated once at start:
every mistake is reported as one `ConfigError` line naming the key, never as a traceback and never
discovered later at the first request. Each key is declared once, on its dataclass field here (its
default, kind, rule and description: `pruner.serving.settings` reads and checks them all); the
limits the planner also has take the planner's defaults (`pruner.planner.limits.PruneLimits`)."""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

import yaml

from pruner.advisor.workload import DEFAULT_MAX_BYTES, WorkloadLog, default_directory
from pruner.errors import InvalidLocationError
from pruner.object_store import is_endpoint_url
from pruner.planner.limits import DEFAULT_LIMITS, PruneLimits
from pruner.serving.settings import (
    BOOLEAN,
    INTEGER,
    NON_NEGATIVE_INTEGER,
    PATH,
    PORT,
    PORT_NUMBER,
    POSITIVE_INTEGER,
    SECRET,
    SIZE,
    TEXT,
    TEXT_LIST,
    UNSET,
    Kind,
    Rule,
    Section,
    check_settings,
    count,
    is_integer,
    nested,
    parse_text,
    placed,
    plain,
    read_secret,
    read_settings,
    seconds,
    setting,
    share,
)

# Re-exported: the sidecar's modules and callers know them from here.
from pruner.serving.settings import ConfigError as ConfigError  # noqa: PLC0414
from pruner.serving.settings import parse_size as parse_size  # noqa: PLC0414
from pruner.storage_failures import check_scheme

SCHEMA_NAME = re.compile(r"[a-z][a-z0-9_]*")  # matched whole: `$` lets a final newline through
MAX_NAME_CHARS = 128
"""The longest schema or table name: longer names in requests are NOT_FOUND before any storage access."""
DEFAULT_HOST = "127.0.0.1"
DEFAULT_GRPC_PORT = 7777
DEFAULT_THRIFT_PORT = 7778
DEFAULT_METRICS_PORT = 9464
MIN_SPLIT_KEY_CHARS = 16

# The share of a request's time the planner may spend before its remaining steps fall back.
PLANNING_SHARE = 0.8


def available_cores() -> int:
    """The cores this process may run on (its affinity mask), else the machine's: the default
    number of planning processes."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Limits:
    """Per-request limits, refused with a clear error beyond them, and the Thrift port's
    connection limits. The planner's own (`PruneLimits`, same names) take its defaults."""

    SECTION: ClassVar[str] = "limits"

    max_discrete_values: int = count(
        DEFAULT_LIMITS.max_discrete_values, "values in one IN list (or ranges in one domain) of a request"
    )
    max_splits_per_response: int = count(10_000, "splits in one Prune response; larger results: PruneStream")
    request_timeout_seconds: float = seconds(60.0, "deadline for requests whose caller sets none")
    max_frame_bytes: int = setting(
        16 * 1024**2,
        kind=SIZE,
        rule=POSITIVE_INTEGER,
        describe="largest Thrift frame accepted (Trino's default); read as bytes arrive",
    )
    thrift_max_connections: int = count(256, "open Thrift connections; more are closed at once")
    thrift_idle_timeout_seconds: float = seconds(
        300.0, "a connection with no request in flight and none sent is closed"
    )
    thrift_frame_timeout_seconds: float = seconds(
        30.0, "a request or reply frame must move whole within this"
    )
    prune_deadline_seconds: float = seconds(
        2.0, "planning of one prune: past this, the steps still to run keep their files (a fallback)"
    )
    lookup_free_keys: int = setting(
        DEFAULT_LIMITS.lookup_free_keys,
        kind=INTEGER,
        rule=NON_NEGATIVE_INTEGER,
        describe="an EQUAL / IN lookup of at most this many keys always runs (the planner's cost guard)",
    )
    lookup_min_pruned_share: float = share(
        DEFAULT_LIMITS.lookup_min_pruned_share,
        "share of the files in play a larger lookup must be expected to prune (0: always run)",
    )
    range_max_index_share: float = share(
        DEFAULT_LIMITS.range_max_index_share,
        "a secondary-index range is scanned only if it reads at most this share of the index",
    )
    remembered_prunes: int = setting(
        256,
        kind=INTEGER,
        rule=NON_NEGATIVE_INTEGER,
        describe="finished prunes of a pinned snapshot kept to answer the same request again "
        "(0: none; identical requests running together share one plan either way)",
    )

    def __post_init__(self) -> None:
        check_settings(self)

    def prune_limits(self, timeout: float | None = None) -> PruneLimits:
        """The planner's limits for a request with `timeout` seconds left (None: the configured
        request timeout): its planning deadline falls after `prune_deadline_seconds`, or at
        `PLANNING_SHARE` of the time left if that is sooner, so that a slow index falls back
        (keeping files) while there is still time to answer."""
        time_left = self.request_timeout_seconds if timeout is None else timeout
        limits = PruneLimits(**{name: getattr(self, name) for name in planner_limit_names()})
        return limits.within(min(self.prune_deadline_seconds, PLANNING_SHARE * time_left))


def planner_limit_names() -> list[str]:
    """The `limits:` keys that are the planner's own `PruneLimits` fields, passed on as they are."""
    planner = {f.name for f in fields(PruneLimits)}
    return [f.name for f in fields(Limits) if f.name in planner]


def _not_blank(token: str | None) -> str | None:
    if token is not None and not token.strip():
        return "is empty: give a token, or none to disable the check"
    return None


def _read_split_key(section: Section, key: str) -> Any:
    split_key = read_secret(section, key)
    if split_key is UNSET:
        return UNSET
    if len(split_key) < MIN_SPLIT_KEY_CHARS:
        raise ConfigError(f"{section.prefix}{key} must be at least {MIN_SPLIT_KEY_CHARS} characters")
    return split_key.encode("utf-8")


@dataclass(frozen=True)
class Security:
    """Bearer token for gRPC, TLS for gRPC, and the key that authenticates Thrift split ids."""

    SECTION: ClassVar[str] = "security"

    token: str | None = setting(
        None,
        kind=SECRET,
        rule=Rule(_not_blank),
        repr=False,
        describe="bearer token every gRPC call must carry (health checks exempt); none: no check",
    )
    tls_cert_file: str | None = setting(
        None, kind=PATH, describe="TLS for gRPC: PEM certificate chain (with tls_key_file, or neither)"
    )
    tls_key_file: str | None = setting(None, kind=PATH, describe="TLS for gRPC: PEM private key")
    # Several sidecars behind one catalog must share this key so that any of them accepts a split
    # another one issued; without one configured, a random key is made at start (one for all the
    # workers of a sidecar: the supervisor hands its config, key included, to each of them).
    split_key: bytes = setting(
        kind=Kind(f"secret of at least {MIN_SPLIT_KEY_CHARS} characters", _read_split_key),
        default_factory=lambda: secrets.token_bytes(32),
        repr=False,
        describe="key that authenticates Thrift split ids; shared by the sidecars behind one catalog",
    )

    def __post_init__(self) -> None:
        check_settings(self)

    @property
    def tls(self) -> bool:
        return self.tls_cert_file is not None


def _endpoint_complaint(endpoint: str | None) -> str | None:
    if endpoint is None or is_endpoint_url(endpoint):
        return None
    return f"must be http(s)://HOST[:PORT], got {endpoint!r}"


def _region_complaint(region: str | None) -> str | None:
    if region is None or re.fullmatch(r"[a-z0-9-]+", region):
        return None
    return f"must be a region name such as us-east-1, got {region!r}"


@dataclass(frozen=True)
class S3Settings:
    """S3 settings of the config file's `s3:` section; each one given overrides its AWS SDK
    variable for the sidecar's process (`environment`), so every S3 client in it (pyarrow's, the
    conditional-PUT one) uses it. None: the variable, as set or unset, stays."""

    SECTION: ClassVar[str] = "s3"

    endpoint: str | None = setting(
        None,
        kind=TEXT,
        rule=Rule(_endpoint_complaint),
        describe="a custom endpoint (MinIO, SeaweedFS), addressed path-style: AWS_ENDPOINT_URL",
    )
    region: str | None = setting(None, kind=TEXT, rule=Rule(_region_complaint), describe="AWS_REGION")
    access_key_id: str | None = setting(
        None, kind=TEXT, describe="AWS_ACCESS_KEY_ID (with secret_access_key, or neither)"
    )
    secret_access_key: str | None = setting(
        None, kind=SECRET, repr=False, describe="AWS_SECRET_ACCESS_KEY; never logged"
    )

    def __post_init__(self) -> None:
        check_settings(self)
        if (self.access_key_id is None) != (self.secret_access_key is None):
            raise ConfigError("s3.access_key_id and s3.secret_access_key go together: give both or neither")

    def environment(self) -> dict[str, str | None]:
        """The AWS variables these settings set (a value) or clear (None, for a variable that
        would otherwise take precedence over a setting given here)."""
        variables: dict[str, str | None] = {}
        if self.endpoint is not None:
            variables |= {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ENDPOINT_URL_S3": None}
        if self.region is not None:
            variables["AWS_REGION"] = self.region
        if self.access_key_id is not None and self.secret_access_key is not None:
            variables |= {
                "AWS_ACCESS_KEY_ID": self.access_key_id,
                "AWS_SECRET_ACCESS_KEY": self.secret_access_key,
                "AWS_SESSION_TOKEN": None,
            }
        return variables

    def describe(self) -> str:
        """What is overridden, for the log (never the secret)."""
        given = [
            f"endpoint={self.endpoint}" if self.endpoint else "",
            f"region={self.region}" if self.region else "",
            "credentials=config" if self.access_key_id else "",
        ]
        return " ".join(g for g in given if g)


def _read_warehouses(section: Section, key: str) -> dict[str, str]:
    roots = section.child(key)  # a mapping of its own, with no keys declared
    if not roots.data:
        if section.data.get(key) is None:
            raise ConfigError(f"{section.prefix}{key} is required")
        return {}
    return {
        str(name): section.local(parse_text(root, f"{roots.prefix}{name}")) or ""
        for name, root in roots.data.items()
    }


def _host_or_default(value: object, key: str) -> Any:
    return parse_text(value, key) or UNSET


def _workers_or_auto(value: object, key: str) -> Any:
    return UNSET if value == "auto" else value  # anything else is checked as the field's value


def _positive_workers(workers: object) -> str | None:
    if is_integer(workers) and workers >= 1:
        return None
    return f"must be a positive integer (planning processes), got {workers!r}"


def _not_negative_size(size: int) -> str | None:
    return None if size >= 0 else f"(the cache size) must not be negative, got {size}"


def _addresses_complaint(addresses: tuple[str, ...]) -> str | None:
    bad = [address for address in addresses if _split_address(address) is None]
    return f"address {bad[0]!r} must be HOST:PORT" if bad else None


def _port(describe: str, default: int | None) -> Any:
    return setting(default, kind=PORT, rule=PORT_NUMBER, section="listen", describe=describe)


def _positive_size(size: int) -> str | None:
    return None if size > 0 else f"must be a positive size, got {size}"


@dataclass(frozen=True)
class WorkloadSettings:
    """The workload log of the config file's `workload:` section (`pruner.advisor.workload`): the
    prunes the sidecar planned, per table, which `lakeprune advise` reads."""

    SECTION: ClassVar[str] = "workload"

    enabled: bool = setting(True, kind=BOOLEAN, describe="log the shape of every prune planned, per table")
    directory: str | None = setting(
        None,
        kind=PATH,
        describe="where; default $LAKEPRUNE_STATE_HOME/workload, else ~/.local/state/lakeprune/workload",
    )
    max_bytes: int = setting(
        DEFAULT_MAX_BYTES,
        kind=SIZE,
        rule=Rule(_positive_size),
        describe="per table; the oldest prunes go first",
    )
    record_values: bool = setting(
        False, kind=BOOLEAN, describe="keep the predicates' literal values too (default: their shapes only)"
    )

    def __post_init__(self) -> None:
        check_settings(self)

    def log(self) -> WorkloadLog | None:
        """The log these settings describe (None: disabled)."""
        if not self.enabled:
            return None
        directory = Path(self.directory) if self.directory else default_directory()
        return WorkloadLog(directory, self.max_bytes, self.record_values)


@dataclass(frozen=True)
class ServeConfig:
    """The whole configuration: the keys at the top of the file and in `listen:` and `cache:`,
    and the `limits:`, `security:` and `s3:` sections."""

    SECTION: ClassVar[str] = ""

    warehouses: Mapping[str, str] = setting(
        kind=Kind("mapping of schema name to warehouse root", _read_warehouses),
        describe="schema name -> warehouse root (a local path or a pyarrow.fs URI); required",
    )
    host: str = setting(
        DEFAULT_HOST,
        kind=plain("text (empty: the default)", _host_or_default),
        section="listen",
        describe="the address the endpoints listen on; 0.0.0.0 for other machines",
    )
    grpc_port: int | None = _port(
        "gRPC PruningService + health; 0: any free port; off: disabled", DEFAULT_GRPC_PORT
    )
    thrift_port: int | None = _port(
        "Trino / Presto Thrift connector service; off: disabled", DEFAULT_THRIFT_PORT
    )
    metrics_port: int | None = _port("Prometheus metrics and /health; off: disabled", DEFAULT_METRICS_PORT)
    advertise: tuple[str, ...] = setting(
        (),
        kind=TEXT_LIST,
        rule=Rule(_addresses_complaint),
        section="listen",
        describe="HOST:PORT of the Thrift endpoints engines send GetRows to (empty: this sidecar's)",
    )
    # With N workers, worker i (1..N) also serves gRPC alone on worker_grpc_port + i - 1 (0: a free
    # port each; None: only the shared port). A client that lists these ports and spreads its calls
    # over them (Trino's connector does) reaches every worker, whatever connections it holds.
    worker_grpc_port: int | None = setting(
        None,
        kind=PORT,
        section="listen",
        describe="worker i also serves gRPC alone on this port + i - 1 (0: free ports; off: none)",
    )
    # Planning processes behind the same ports (1: this process serves alone); each holds its own
    # index cache of `cache_bytes`.
    workers: int = setting(
        kind=plain("integer, or auto", _workers_or_auto),
        rule=Rule(_positive_workers),
        default_factory=available_cores,
        describe="planning processes behind the same ports; auto: one per core this process may use",
    )
    cache_bytes: int = setting(
        512 * 1024**2,
        kind=SIZE,
        rule=Rule(_not_negative_size),
        key="max_bytes",
        section="cache",
        describe="merged index buckets kept in memory, per worker (0: no cache)",
    )
    limits: Limits = nested(Limits, "per-request limits and the Thrift port's connection limits")
    security: Security = nested(Security, "bearer token and TLS for gRPC, the split-id key")
    s3: S3Settings = nested(S3Settings, "S3 settings overriding the AWS SDKs' variables")
    workload: WorkloadSettings = nested(
        WorkloadSettings, "the log of planned prunes that lakeprune advise reads"
    )

    def __post_init__(self) -> None:
        _check_warehouses(self.warehouses)
        check_settings(self)
        bound = [(k, p) for k in ("grpc_port", "thrift_port", "metrics_port") if (p := getattr(self, k))]
        _check_distinct_ports(bound)
        _check_worker_ports(self.worker_grpc_port, self.workers, bound)
        _check_tls(self.security)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ServeConfig:
        """Read and validate a YAML config file."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from exc
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"config {path} is not valid YAML: {exc}") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"config {path} must be a YAML mapping")
        return cls.from_mapping(data, base_dir=Path(path).resolve().parent)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], base_dir: Path | None = None) -> ServeConfig:
        """Build from parsed YAML; relative file paths are resolved against `base_dir`."""
        return read_settings(cls, Section(data, "", base_dir))

    @classmethod
    def from_options(
        cls,
        warehouses: list[str],
        host: str | None = None,
        grpc_port: int | bool | None = None,
        thrift_port: int | bool | None = None,
        metrics_port: int | bool | None = None,
        cache_size: str | None = None,
        token_file: str | None = None,
        workers: int | None = None,
        worker_grpc_port: int | None = None,
    ) -> ServeConfig:
        """Build from `lakeprune serve` options: `NAME=ROOT` warehouses; a port None takes the
        default and False turns the endpoint off. Validated exactly as a config file."""
        roots: dict[str, str] = {}
        for option in warehouses:
            name, root = parse_warehouse_option(option)
            if name in roots:
                raise ConfigError(f"--warehouse {name} is given twice")
            roots[name] = root
        options = {
            "warehouses": roots,
            "host": host,
            "grpc_port": grpc_port,
            "thrift_port": thrift_port,
            "metrics_port": metrics_port,
            "worker_grpc_port": worker_grpc_port,
            "cache_bytes": cache_size,
            "workers": workers,
            "security": {"token_file": token_file} if token_file is not None else None,
        }
        return cls.from_mapping(placed(cls, {k: v for k, v in options.items() if v is not None}))

    def thrift_hosts(self, bound_port: int) -> list[tuple[str, int]]:
        """The split hosts for GetRows: the advertised addresses, else this sidecar's own."""
        advertised = [_split_address(a) for a in self.advertise]
        if advertised:
            return [address for address in advertised if address is not None]
        host = self.host if self.host not in ("0.0.0.0", "::", "") else DEFAULT_HOST
        return [(host, bound_port)]


def _check_warehouses(warehouses: Mapping[str, str]) -> None:
    if not warehouses:
        raise ConfigError("no warehouses configured: give at least one schema name -> warehouse root")
    for name, root in warehouses.items():
        if not SCHEMA_NAME.fullmatch(name) or len(name) > MAX_NAME_CHARS:
            raise ConfigError(
                f"warehouse name {name!r} must match [a-z][a-z0-9_]* and have at most {MAX_NAME_CHARS} "
                "characters (it is the schema name engines see)"
            )
        if not root:
            raise ConfigError(f"warehouse {name!r} has an empty root")
        try:
            check_scheme(root)
        except InvalidLocationError as exc:
            raise ConfigError(f"warehouse {name!r}: {exc}") from None


def _check_distinct_ports(bound: list[tuple[str, int]]) -> None:
    for i, (key, port) in enumerate(bound):
        for other, other_port in bound[i + 1 :]:
            if port == other_port:
                raise ConfigError(f"{key} and {other} are both {port}")


def _check_worker_ports(first: int | None, workers: int, bound: list[tuple[str, int]]) -> None:
    """The workers' own gRPC ports `first`.. fit below 65536 and clash with no other endpoint."""
    if first is not None and first < 0:
        raise ConfigError(f"worker_grpc_port {first} is not a port number")
    if not first:
        return
    last = first + workers - 1
    if last > 65535:
        raise ConfigError(
            f"worker_grpc_port {first} with {workers} workers needs ports "
            f"{first}-{last}, beyond 65535 (0 picks free ports)"
        )
    for key, port in bound:
        if first <= port <= last:
            raise ConfigError(f"{key} {port} is among the workers' own gRPC ports {first}-{last}")


def _check_tls(security: Security) -> None:
    if (security.tls_cert_file is None) != (security.tls_key_file is None):
        raise ConfigError("security.tls needs both cert_file and key_file")
    for path in (security.tls_cert_file, security.tls_key_file):
        if path is not None and not os.path.isfile(path):
            raise ConfigError(f"TLS file {path} does not exist")


def parse_warehouse_option(value: str) -> tuple[str, str]:
    """`NAME=ROOT` from the command line."""
    name, sep, root = value.partition("=")
    if not sep or not name or not root:
        raise ConfigError(f"--warehouse {value!r} must be NAME=ROOT (for example demo=/data/warehouse)")
    return name.strip(), root.strip()


def _split_address(address: str) -> tuple[str, int] | None:
    """`HOST:PORT` as a pair, or None when it is not one."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not (port.isascii() and port.isdigit()) or not 0 < int(port) <= 65535:
        return None
    return host, int(port)
