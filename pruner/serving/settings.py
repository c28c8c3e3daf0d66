"""How one key of the sidecar's configuration is declared, once, on its dataclass field: `setting`
gives the field its default and a `Setting` (the YAML key and section, the `Kind` that reads the
YAML value, the `Rule` a value must keep, a one-line description). From those declarations alone,
`read_settings` builds a config dataclass from a YAML mapping (refusing any key nobody declared),
`check_settings` validates an instance however it was built, and `declared_keys` lists every key;
each mistake is one `ConfigError` line naming the full key (`limits.max_frame_bytes`). The kinds
and rules that several keys share are here; the config module (`pruner.serving.config`) declares
the keys."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, NamedTuple, Protocol, TypeGuard, TypeVar

from pruner.errors import LakepruneError

SETTING = "lakeprune.setting"  # the key of a field's `Setting` in its metadata
UNSET: Any = object()  # what a kind reads when the field keeps its default
_SIZE = re.compile(r"\s*([0-9]+)\s*([kmg]i?b?|b)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


class ConfigError(LakepruneError):
    """The sidecar configuration is invalid."""


class Declared(Protocol):
    """A config dataclass: its keys lie under `SECTION` (empty: the top of the file)."""

    SECTION: ClassVar[str]


C = TypeVar("C", bound=Declared)


class Section:
    """One YAML section being read: typed access to its keys that remembers which were used, so
    that any other key is refused; relative paths in it resolve against `base_dir`."""

    def __init__(self, data: object, prefix: str, base_dir: Path | None) -> None:
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise ConfigError(f"{prefix.rstrip('.') or 'config'} must be a mapping")
        self.data: Mapping[str, Any] = data
        self.prefix = prefix
        self.base_dir = base_dir
        self.used: set[str] = set()

    def get(self, key: str) -> Any:
        self.used.add(key)
        return self.data.get(key)

    def child(self, key: str) -> Section:
        """The section under `key` (absent: empty)."""
        return Section(self.get(key), f"{self.prefix}{key}.", self.base_dir)

    def local(self, path: str | None) -> str | None:
        """`path` resolved against the file's directory (URIs and absolute paths unchanged)."""
        if path is None or self.base_dir is None or "://" in path:
            return path
        return str(self.base_dir / os.path.expanduser(path))

    def reject_unknown(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            raise ConfigError(f"unknown config key {self.prefix}{unknown[0]}")


@dataclass(frozen=True)
class Kind:
    """What a key holds (`name`, as the docs say it) and how its YAML value is read: `read` takes
    the section and the key and returns the field's value, or `UNSET` to keep the default."""

    name: str
    read: Callable[[Section, str], Any]


@dataclass(frozen=True)
class Rule:
    """What a valid value is: `complaint` returns what is wrong with a value (the error message
    after the key), or None when it is valid."""

    complaint: Callable[[Any], str | None]


@dataclass(frozen=True)
class Setting:
    """One key's declaration: `kind`, `rule`, `description`; `key` when the YAML name differs from
    the field's, `section` when the key lies in a section of its own within its dataclass's."""

    kind: Kind
    description: str
    rule: Rule | None = None
    key: str | None = None
    section: str | None = None
    nested: type[Declared] | None = None  # the field holds this dataclass's section


def setting(
    default: Any = MISSING,
    *,
    kind: Kind,
    describe: str,
    rule: Rule | None = None,
    key: str | None = None,
    section: str | None = None,
    default_factory: Callable[[], Any] | None = None,
    repr: bool = True,
    nested: type[Declared] | None = None,
) -> Any:
    """A dataclass field declaring one config key (see `Setting`), with its default."""
    metadata = {SETTING: Setting(kind, describe, rule, key, section, nested)}
    if default_factory is not None:
        return field(default_factory=default_factory, repr=repr, metadata=metadata)
    return field(default=default, repr=repr, metadata=metadata)


def settings_of(cls: type[Any]) -> Iterator[tuple[str, Setting]]:
    """The fields of `cls` that declare a key, with their settings, in declaration order."""
    for f in fields(cls):
        if SETTING in f.metadata:
            yield f.name, f.metadata[SETTING]


def key_of(cls: type[Declared], name: str, declared: Setting) -> str:
    """The full key of field `name`, as the file spells it: `listen.grpc_port`, `cache.max_bytes`."""
    path = (cls.SECTION, declared.section or "", declared.key or name)
    return ".".join(part for part in path if part)


class Declaration(NamedTuple):
    """One declared key: its full `key`, the dataclass (`owner`) and field (`name`) declaring it,
    the `path` of attributes that reach its value from the top config, and its `setting`."""

    key: str
    owner: type[Declared]
    name: str
    path: tuple[str, ...]
    setting: Setting


def declared_keys(cls: type[Declared], path: tuple[str, ...] = ()) -> Iterator[Declaration]:
    """Every key `cls` declares, with the keys of its nested sections."""
    for name, declared in settings_of(cls):
        if declared.nested is not None:
            yield from declared_keys(declared.nested, (*path, name))
        else:
            yield Declaration(key_of(cls, name, declared), cls, name, (*path, name), declared)


def check_settings(config: Declared) -> None:
    """Refuse `config` with one line naming the key when a field breaks its declared rule."""
    cls = type(config)
    for name, declared in settings_of(cls):
        complaint = declared.rule.complaint(getattr(config, name)) if declared.rule else None
        if complaint is not None:
            raise ConfigError(f"{key_of(cls, name, declared)} {complaint}")


def read_settings(cls: type[C], section: Section) -> C:
    """Build `cls` from `section`: each declared key its kind reads (absent: the default), any
    undeclared key refused, the result validated by the class itself."""
    sections: dict[str, Section] = {}
    values: dict[str, Any] = {}
    for name, declared in settings_of(cls):
        within = section
        if declared.section:
            if declared.section not in sections:
                sections[declared.section] = section.child(declared.section)
            within = sections[declared.section]
        value = declared.kind.read(within, declared.key or name)
        if value is not UNSET:
            values[name] = value
    for within in (*sections.values(), section):
        within.reject_unknown()
    return cls(**values)


def nested(cls: type[Declared], describe: str) -> Any:
    """A field holding the section `cls.SECTION`, read and checked by its own declarations."""

    def read(section: Section, key: str) -> Any:
        return read_settings(cls, section.child(key))

    kind = Kind("section", read)
    return setting(kind=kind, describe=describe, key=cls.SECTION, default_factory=cls, nested=cls)


def plain(name: str, parse: Callable[[Any, str], Any]) -> Kind:
    """A kind whose key is read alone: `parse(value, full_key)` when it is given."""

    def read(section: Section, key: str) -> Any:
        value = section.get(key)
        return UNSET if value is None else parse(value, section.prefix + key)

    return Kind(name, read)


def parse_text(value: object, key: str) -> str:
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise ConfigError(f"{key} must be text, got {value!r}")
    return str(value)


def parse_size(value: object, key: str) -> int:
    """A byte size: an integer, or text such as `512MiB`, `16MB`, `1g`."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    match = _SIZE.fullmatch(str(value)) if isinstance(value, str) else None
    if match is None:
        raise ConfigError(f"{key} must be a size such as 536870912 or 512MiB, got {value!r}")
    unit = (match.group(2) or "").lower()[:1]
    return int(match.group(1)) * _UNITS[unit]


def is_integer(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _parse_integer(value: object, key: str) -> int:
    if not is_integer(value) or value < 0:
        raise ConfigError(f"{key} must be a non-negative integer, got {value!r}")
    return value


def _parse_number(value: object, key: str) -> float:
    if not _is_number(value) or value <= 0:
        raise ConfigError(f"{key} must be a positive number, got {value!r}")
    return float(value)


def _parse_share(value: object, key: str) -> float:
    if not _is_number(value) or not 0 <= value <= 1:
        raise ConfigError(f"{key} {_share_complaint(value)}")
    return float(value)


def _parse_port(value: object, key: str) -> int | None:
    if value is False or value == "off":
        return None
    if not is_integer(value):
        raise ConfigError(f"{key} must be a port number or off, got {value!r}")
    return value


def _parse_boolean(value: object, key: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ConfigError(f"{key} must be true or false, got {value!r}")


def _parse_text_list(value: object, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if not isinstance(value, list):
        raise ConfigError(f"{key} must be a list")
    return tuple(parse_text(v, key) for v in value)


def _read_path(section: Section, key: str) -> Any:
    value = section.get(key)
    return UNSET if value is None else section.local(parse_text(value, section.prefix + key))


def read_secret(section: Section, key: str) -> Any:
    """A secret given inline (`token`) or in a file (`token_file`), never both."""
    inline, path = section.get(key), section.get(f"{key}_file")
    name = section.prefix + key
    if inline is not None and path is not None:
        raise ConfigError(f"{name} and {name}_file are mutually exclusive")
    if path is None:
        return UNSET if inline is None else parse_text(inline, name)
    path = section.local(parse_text(path, f"{name}_file"))
    try:
        secret = Path(path or "").read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"cannot read {name}_file {path}: {exc.strerror or exc}") from exc
    if not secret:
        raise ConfigError(f"{name}_file {path} is empty")
    return secret


INTEGER = plain("integer", _parse_integer)
NUMBER = plain("number", _parse_number)
SHARE = plain("share from 0 to 1", _parse_share)
SIZE = plain("size (bytes, or 512MiB, 2GiB, 64m)", parse_size)
PORT = plain("port number, or off", _parse_port)
BOOLEAN = plain("true or false", _parse_boolean)
TEXT = plain("text", parse_text)
TEXT_LIST = plain("list of text (or text with commas)", _parse_text_list)
PATH = Kind("file path (relative: to the config file)", _read_path)
SECRET = Kind("secret, inline or in the file KEY_file", read_secret)


def _positive_integer(value: object) -> str | None:
    valid = is_integer(value) and value > 0
    return None if valid else f"must be a positive integer, got {value!r}"


def _non_negative_integer(value: object) -> str | None:
    valid = is_integer(value) and value >= 0
    return None if valid else f"must be a non-negative integer, got {value!r}"


def _positive_seconds(value: object) -> str | None:
    valid = _is_number(value) and value > 0
    return None if valid else f"must be a positive number of seconds, got {value!r}"


def _share_complaint(value: object) -> str | None:
    valid = _is_number(value) and 0 <= value <= 1
    return None if valid else f"must be a share from 0 to 1, got {value!r}"


def _port_complaint(value: int | None) -> str | None:
    if value is None or 0 <= value <= 65535:
        return None
    return f"{value} is not a port number (0-65535; 0 picks a free port)"


POSITIVE_INTEGER = Rule(_positive_integer)
NON_NEGATIVE_INTEGER = Rule(_non_negative_integer)
POSITIVE_SECONDS = Rule(_positive_seconds)
SHARE_FROM_0_TO_1 = Rule(_share_complaint)
PORT_NUMBER = Rule(_port_complaint)


def placed(cls: type[Declared], values: Mapping[str, Any]) -> dict[str, Any]:
    """The YAML mapping that gives the fields of `cls` these values (by field name): each one
    under its declared key, in its declared section."""
    data: dict[str, Any] = {}
    declared = dict(settings_of(cls))
    for name, value in values.items():
        section, key = declared[name].section, declared[name].key or name
        within = data.setdefault(section, {}) if section else data
        within[key] = value
    return data


def count(default: int, describe: str) -> Any:
    """A key holding a positive integer."""
    return setting(default, kind=INTEGER, rule=POSITIVE_INTEGER, describe=describe)


def seconds(default: float, describe: str) -> Any:
    """A key holding a positive number of seconds."""
    return setting(default, kind=NUMBER, rule=POSITIVE_SECONDS, describe=describe)


def share(default: float, describe: str) -> Any:
    """A key holding a share from 0 to 1."""
    return setting(default, kind=SHARE, rule=SHARE_FROM_0_TO_1, describe=describe)
