"""The sidecar's configuration: which schema names map to which warehouse roots, where the gRPC,
Thrift and metrics endpoints listen, which Thrift addresses are advertised as split hosts, how many
planning processes serve those ports (`workers`), the index cache size (per worker), request
limits, the security settings and S3 settings that override the AWS SDKs' variables for this
sidecar. It is read from a YAML file (`lakeprune serve --config FILE`, example in
`connector-config/sidecar.yaml`) or built from command-line options, and validated once at start:
every mistake is reported as one `ConfigError` line naming the key, never as a traceback and never
discovered later at the first request."""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pruner.errors import InvalidLocationError, LakepruneError
from pruner.object_store import is_endpoint_url
from pruner.planner.limits import DEFAULT_LIMITS, PruneLimits
from pruner.storage_failures import check_scheme

SCHEMA_NAME = re.compile(r"[a-z][a-z0-9_]*")  # matched whole: `$` lets a final newline through
MAX_NAME_CHARS = 128
"""The longest schema or table name: longer names in requests are NOT_FOUND before any storage access."""
DEFAULT_HOST = "127.0.0.1"
DEFAULT_GRPC_PORT = 7777
DEFAULT_THRIFT_PORT = 7778
DEFAULT_METRICS_PORT = 9464
_SIZE = re.compile(r"\s*([0-9]+)\s*([kmg]i?b?|b)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def available_cores() -> int:
    """The cores this process may run on (its affinity mask), else the machine's: the default
    number of planning processes."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class ConfigError(LakepruneError):
    """The sidecar configuration is invalid."""


_INTEGER_LIMITS = (
    "max_discrete_values",
    "max_splits_per_response",
    "max_frame_bytes",
    "thrift_max_connections",
)
_SECONDS_LIMITS = (
    "request_timeout_seconds",
    "prune_deadline_seconds",
    "thrift_idle_timeout_seconds",
    "thrift_frame_timeout_seconds",
)
# The planner's cost guard (`pruner.planner.limits.PruneLimits`, where the defaults are declared).
_SHARE_LIMITS = ("lookup_min_pruned_share", "range_max_index_share")


# The share of a request's time the planner may spend before its remaining steps fall back.
PLANNING_SHARE = 0.8


@dataclass(frozen=True)
class Limits:
    """Per-request limits, refused with a clear error beyond them, and the Thrift port's
    connection limits."""

    max_discrete_values: int = DEFAULT_LIMITS.max_discrete_values  # values in one IN list / value set
    max_splits_per_response: int = 10_000  # gRPC Prune; larger results use PruneStream
    request_timeout_seconds: float = 60.0  # used when the caller sets no deadline
    max_frame_bytes: int = 16 * 1024**2  # Thrift frame limit, as Trino's default
    thrift_max_connections: int = 256  # open Thrift connections; more are closed at once
    thrift_idle_timeout_seconds: float = 300.0  # a connection with no request for this long is closed
    thrift_frame_timeout_seconds: float = 30.0  # a frame (request or reply) must move within this
    # The planning of one prune: past this, steps still to run keep their files (a counted fallback).
    prune_deadline_seconds: float = 2.0
    # The planner's cost guard for EQUAL / IN lookups and secondary-index ranges (see PruneLimits).
    lookup_free_keys: int = DEFAULT_LIMITS.lookup_free_keys
    lookup_min_pruned_share: float = DEFAULT_LIMITS.lookup_min_pruned_share
    range_max_index_share: float = DEFAULT_LIMITS.range_max_index_share

    def __post_init__(self) -> None:
        for key in _INTEGER_LIMITS:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"limits.{key} must be a positive integer, got {value!r}")
        for key in _SECONDS_LIMITS:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ConfigError(f"limits.{key} must be a positive number of seconds, got {value!r}")
        free = self.lookup_free_keys
        if isinstance(free, bool) or not isinstance(free, int) or free < 0:
            raise ConfigError(f"limits.lookup_free_keys must be a non-negative integer, got {free!r}")
        for key in _SHARE_LIMITS:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ConfigError(f"limits.{key} must be a share from 0 to 1, got {value!r}")

    def prune_limits(self, timeout: float | None = None) -> PruneLimits:
        """The planner's limits for a request with `timeout` seconds left (None: the configured
        request timeout): its planning deadline falls after `prune_deadline_seconds`, or at
        `PLANNING_SHARE` of the time left if that is sooner, so that a slow index falls back
        (keeping files) while there is still time to answer."""
        seconds = self.request_timeout_seconds if timeout is None else timeout
        limits = PruneLimits(
            max_discrete_values=self.max_discrete_values,
            lookup_free_keys=self.lookup_free_keys,
            lookup_min_pruned_share=self.lookup_min_pruned_share,
            range_max_index_share=self.range_max_index_share,
        )
        return limits.within(min(self.prune_deadline_seconds, PLANNING_SHARE * seconds))


@dataclass(frozen=True)
class Security:
    """Bearer token for gRPC, TLS for gRPC, and the key that authenticates Thrift split ids."""

    token: str | None = field(default=None, repr=False)
    tls_cert_file: str | None = None
    tls_key_file: str | None = None
    # Several sidecars behind one catalog must share this key so that any of them accepts a split
    # another one issued; without one configured, a random key is made at start (one for all the
    # workers of a sidecar: the supervisor hands its config, key included, to each of them).
    split_key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)

    def __post_init__(self) -> None:
        if self.token is not None and not self.token.strip():
            raise ConfigError("security.token is empty: give a token, or none to disable the check")

    @property
    def tls(self) -> bool:
        return self.tls_cert_file is not None


@dataclass(frozen=True)
class S3Settings:
    """S3 settings of the config file's `s3:` section; each one given overrides its AWS SDK
    variable for the sidecar's process (`environment`), so every S3 client in it (pyarrow's, the
    conditional-PUT one) uses it. None: the variable, as set or unset, stays."""

    endpoint: str | None = None
    region: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.endpoint is not None and not is_endpoint_url(self.endpoint):
            raise ConfigError(f"s3.endpoint must be http(s)://HOST[:PORT], got {self.endpoint!r}")
        if self.region is not None and not re.fullmatch(r"[a-z0-9-]+", self.region):
            raise ConfigError(f"s3.region must be a region name such as us-east-1, got {self.region!r}")
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


@dataclass(frozen=True)
class ServeConfig:
    warehouses: Mapping[str, str]
    host: str = DEFAULT_HOST
    grpc_port: int | None = DEFAULT_GRPC_PORT  # None: endpoint disabled; 0: any free port
    thrift_port: int | None = DEFAULT_THRIFT_PORT
    metrics_port: int | None = DEFAULT_METRICS_PORT
    advertise: tuple[str, ...] = ()  # host:port of the Thrift endpoints engines use for GetRows
    # With N workers, worker i (1..N) also serves gRPC alone on worker_grpc_port + i - 1 (0: a free
    # port each; None: only the shared port). A client that lists these ports and spreads its calls
    # over them (Trino's connector does) reaches every worker, whatever connections it holds.
    worker_grpc_port: int | None = None
    # Planning processes behind the same ports (1: this process serves alone); each holds its own
    # index cache of `cache_bytes`.
    workers: int = field(default_factory=available_cores)
    cache_bytes: int = 512 * 1024**2
    limits: Limits = field(default_factory=Limits)
    security: Security = field(default_factory=Security)
    s3: S3Settings = field(default_factory=S3Settings)

    def __post_init__(self) -> None:
        if not self.warehouses:
            raise ConfigError("no warehouses configured: give at least one schema name -> warehouse root")
        for name, root in self.warehouses.items():
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
        for key in ("grpc_port", "thrift_port", "metrics_port"):
            port = getattr(self, key)
            if port is not None and not 0 <= port <= 65535:
                raise ConfigError(f"{key} {port} is not a port number (0-65535; 0 picks a free port)")
        bound = [(k, p) for k in ("grpc_port", "thrift_port", "metrics_port") if (p := getattr(self, k))]
        for i, (key, port) in enumerate(bound):
            for other, other_port in bound[i + 1 :]:
                if port == other_port:
                    raise ConfigError(f"{key} and {other} are both {port}")
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
            raise ConfigError(
                f"workers must be a positive integer (planning processes), got {self.workers!r}"
            )
        if self.worker_grpc_port:
            last = self.worker_grpc_port + self.workers - 1
            if not 0 < self.worker_grpc_port <= last <= 65535:
                raise ConfigError(
                    f"worker_grpc_port {self.worker_grpc_port} with {self.workers} workers needs ports "
                    f"{self.worker_grpc_port}-{last}, beyond 65535 (0 picks free ports)"
                )
            for key, port in bound:
                if self.worker_grpc_port <= port <= last:
                    raise ConfigError(
                        f"{key} {port} is among the workers' own gRPC ports {self.worker_grpc_port}-{last}"
                    )
        elif self.worker_grpc_port is not None and self.worker_grpc_port < 0:
            raise ConfigError(f"worker_grpc_port {self.worker_grpc_port} is not a port number")
        if self.cache_bytes < 0:
            raise ConfigError(f"cache size must not be negative, got {self.cache_bytes}")
        for address in self.advertise:
            _split_address(address, "advertise")
        if (self.security.tls_cert_file is None) != (self.security.tls_key_file is None):
            raise ConfigError("security.tls needs both cert_file and key_file")
        for path in (self.security.tls_cert_file, self.security.tls_key_file):
            if path is not None and not os.path.isfile(path):
                raise ConfigError(f"TLS file {path} does not exist")

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
        reader = _Reader(data, "")
        warehouses = reader.mapping("warehouses", required=True)
        workers = reader.get("workers")
        if workers == "auto":
            workers = None
        listen = _Reader(reader.mapping("listen"), "listen.")
        cache = _Reader(reader.mapping("cache"), "cache.")
        limits = _Reader(reader.mapping("limits"), "limits.")
        security = _Reader(reader.mapping("security"), "security.")
        s3 = _Reader(reader.mapping("s3"), "s3.")
        reader.reject_unknown()

        def local(value: str | None) -> str | None:
            if value is None or base_dir is None or "://" in value:
                return value
            return str(base_dir / os.path.expanduser(value))

        defaults = Limits()
        built = cls(
            warehouses={str(k): local(_text(v, f"warehouses.{k}")) or "" for k, v in warehouses.items()},
            host=listen.text("host") or DEFAULT_HOST,
            grpc_port=listen.port("grpc_port", DEFAULT_GRPC_PORT),
            thrift_port=listen.port("thrift_port", DEFAULT_THRIFT_PORT),
            metrics_port=listen.port("metrics_port", DEFAULT_METRICS_PORT),
            advertise=tuple(listen.text_list("advertise")),
            worker_grpc_port=listen.port("worker_grpc_port", None),
            **({} if workers is None else {"workers": workers}),
            cache_bytes=cache.size("max_bytes", 512 * 1024**2),
            limits=Limits(
                max_discrete_values=limits.integer("max_discrete_values", defaults.max_discrete_values),
                max_splits_per_response=limits.integer(
                    "max_splits_per_response", defaults.max_splits_per_response
                ),
                request_timeout_seconds=limits.number(
                    "request_timeout_seconds", defaults.request_timeout_seconds
                ),
                max_frame_bytes=limits.size("max_frame_bytes", defaults.max_frame_bytes),
                thrift_max_connections=limits.integer(
                    "thrift_max_connections", defaults.thrift_max_connections
                ),
                thrift_idle_timeout_seconds=limits.number(
                    "thrift_idle_timeout_seconds", defaults.thrift_idle_timeout_seconds
                ),
                thrift_frame_timeout_seconds=limits.number(
                    "thrift_frame_timeout_seconds", defaults.thrift_frame_timeout_seconds
                ),
                prune_deadline_seconds=limits.number(
                    "prune_deadline_seconds", defaults.prune_deadline_seconds
                ),
                lookup_free_keys=limits.integer("lookup_free_keys", defaults.lookup_free_keys),
                lookup_min_pruned_share=limits.share(
                    "lookup_min_pruned_share", defaults.lookup_min_pruned_share
                ),
                range_max_index_share=limits.share("range_max_index_share", defaults.range_max_index_share),
            ),
            security=Security(
                token=_secret(security, "token", local),
                tls_cert_file=local(security.text("tls_cert_file")),
                tls_key_file=local(security.text("tls_key_file")),
                **_split_key(security, local),
            ),
            s3=S3Settings(
                endpoint=s3.text("endpoint"),
                region=s3.text("region"),
                access_key_id=s3.text("access_key_id"),
                secret_access_key=_secret(s3, "secret_access_key", local),
            ),
        )
        for reader_ in (listen, cache, limits, security, s3):
            reader_.reject_unknown()
        return built

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
        listen = {
            key: value
            for key, value in (
                ("host", host),
                ("grpc_port", grpc_port),
                ("thrift_port", thrift_port),
                ("metrics_port", metrics_port),
                ("worker_grpc_port", worker_grpc_port),
            )
            if value is not None
        }
        security = {"token_file": token_file} if token_file is not None else {}
        cache = {"max_bytes": cache_size} if cache_size is not None else {}
        sections = {"warehouses": roots, "listen": listen, "cache": cache, "security": security}
        return cls.from_mapping(sections | ({} if workers is None else {"workers": workers}))

    def thrift_hosts(self, bound_port: int) -> list[tuple[str, int]]:
        """The split hosts for GetRows: the advertised addresses, else this sidecar's own."""
        if self.advertise:
            return [_split_address(a, "advertise") for a in self.advertise]
        host = self.host if self.host not in ("0.0.0.0", "::", "") else DEFAULT_HOST
        return [(host, bound_port)]


def parse_warehouse_option(value: str) -> tuple[str, str]:
    """`NAME=ROOT` from the command line."""
    name, sep, root = value.partition("=")
    if not sep or not name or not root:
        raise ConfigError(f"--warehouse {value!r} must be NAME=ROOT (for example demo=/data/warehouse)")
    return name.strip(), root.strip()


def parse_size(value: object, key: str) -> int:
    """A byte size: an integer, or text such as `512MiB`, `16MB`, `1g`."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    match = _SIZE.fullmatch(str(value)) if isinstance(value, str) else None
    if match is None:
        raise ConfigError(f"{key} must be a size such as 536870912 or 512MiB, got {value!r}")
    unit = (match.group(2) or "").lower()[:1]
    return int(match.group(1)) * _UNITS[unit]


def _split_address(address: str, key: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not host or not (port.isascii() and port.isdigit()) or not 0 < int(port) <= 65535:
        raise ConfigError(f"{key} address {address!r} must be HOST:PORT")
    return host, int(port)


def _text(value: object, key: str) -> str:
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise ConfigError(f"{key} must be text, got {value!r}")
    return str(value)


def _secret(reader: _Reader, key: str, local: Any) -> str | None:
    """A secret given inline (`token`) or in a file (`token_file`), never both."""
    inline, path = reader.text(key), local(reader.text(f"{key}_file"))
    name = reader.prefix + key
    if inline is not None and path is not None:
        raise ConfigError(f"{name} and {name}_file are mutually exclusive")
    if path is None:
        return inline
    try:
        secret = Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"cannot read {name}_file {path}: {exc.strerror or exc}") from exc
    if not secret:
        raise ConfigError(f"{name}_file {path} is empty")
    return secret


def _split_key(reader: _Reader, local: Any) -> dict[str, bytes]:
    key = _secret(reader, "split_key", local)
    if key is None:
        return {}
    if len(key) < 16:
        raise ConfigError("security.split_key must be at least 16 characters")
    return {"split_key": key.encode("utf-8")}


class _Reader:
    """Typed access to one YAML section that remembers which keys were used."""

    def __init__(self, data: object, prefix: str) -> None:
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise ConfigError(f"{prefix.rstrip('.') or 'config'} must be a mapping")
        self.data: Mapping[str, Any] = data
        self.prefix = prefix
        self.used: set[str] = set()

    def get(self, key: str) -> Any:
        self.used.add(key)
        return self.data.get(key)

    def mapping(self, key: str, required: bool = False) -> Mapping[str, Any]:
        value = self.get(key)
        if value is None:
            if required:
                raise ConfigError(f"{self.prefix}{key} is required")
            return {}
        if not isinstance(value, Mapping):
            raise ConfigError(f"{self.prefix}{key} must be a mapping")
        return value

    def text(self, key: str) -> str | None:
        value = self.get(key)
        return None if value is None else _text(value, self.prefix + key)

    def text_list(self, key: str) -> list[str]:
        value = self.get(key)
        if value is None:
            return []
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list):
            raise ConfigError(f"{self.prefix}{key} must be a list")
        return [_text(v, self.prefix + key) for v in value]

    def integer(self, key: str, default: int) -> int:
        value = self.get(key)
        if value is None:
            return default
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ConfigError(f"{self.prefix}{key} must be a non-negative integer, got {value!r}")
        return value

    def number(self, key: str, default: float) -> float:
        value = self.get(key)
        if value is None:
            return default
        if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
            raise ConfigError(f"{self.prefix}{key} must be a positive number, got {value!r}")
        return float(value)

    def share(self, key: str, default: float) -> float:
        value = self.get(key)
        if value is None:
            return default
        if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 1:
            raise ConfigError(f"{self.prefix}{key} must be a share from 0 to 1, got {value!r}")
        return float(value)

    def port(self, key: str, default: int | None) -> int | None:
        value = self.get(key)
        if value is None:
            return default
        if value is False or value == "off":
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            raise ConfigError(f"{self.prefix}{key} must be a port number or off, got {value!r}")
        return value

    def size(self, key: str, default: int) -> int:
        value = self.get(key)
        return default if value is None else parse_size(value, self.prefix + key)

    def reject_unknown(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            raise ConfigError(f"unknown config key {self.prefix}{unknown[0]}")
