"""What the declarations of the sidecar's config keys guarantee (`pruner.serving.settings`): every
declared key is read from YAML into its field, every one is described, an unknown key and every kind
of bad value is one `ConfigError` line naming the full key, the planner's limits keep the planner's
defaults, and the docs name only declared keys."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import pytest

from pruner.planner.limits import DEFAULT_LIMITS, PruneLimits
from pruner.serving.config import ConfigError, Limits, ServeConfig, available_cores, planner_limit_names
from pruner.serving.settings import (
    NON_NEGATIVE_INTEGER,
    PORT_NUMBER,
    POSITIVE_INTEGER,
    POSITIVE_SECONDS,
    SHARE_FROM_0_TO_1,
    Declaration,
    declared_keys,
)

ROOT = Path(__file__).parents[3]
DECLARED = list(declared_keys(ServeConfig))
KEYS = [d.key for d in DECLARED]
WAREHOUSES = {"warehouses": {"d": "/x"}}

# Per key, a YAML value other than the default and the value the field then holds.
SAMPLES: dict[str, tuple[object, object]] = {
    "warehouses": ({"w": "/data/w"}, {"w": "/data/w"}),
    "listen.host": ("0.0.0.0", "0.0.0.0"),
    "listen.grpc_port": (1234, 1234),
    "listen.thrift_port": ("off", None),
    "listen.metrics_port": (2345, 2345),
    "listen.advertise": (["h:1", "g:2"], ("h:1", "g:2")),
    "listen.worker_grpc_port": (3000, 3000),
    "workers": (available_cores() + 1, available_cores() + 1),
    "cache.max_bytes": ("1MiB", 1024**2),
    "limits.max_discrete_values": (5, 5),
    "limits.max_splits_per_response": (7, 7),
    "limits.request_timeout_seconds": (0.5, 0.5),
    "limits.max_frame_bytes": ("1k", 1024),
    "limits.thrift_max_connections": (9, 9),
    "limits.thrift_idle_timeout_seconds": (61, 61.0),
    "limits.thrift_frame_timeout_seconds": (2.5, 2.5),
    "limits.prune_deadline_seconds": (0.25, 0.25),
    "limits.lookup_free_keys": (0, 0),
    "limits.lookup_min_pruned_share": (1, 1.0),
    "limits.range_max_index_share": (0, 0.0),
    "limits.remembered_prunes": (3, 3),
    "security.token": ("tok", "tok"),
    "security.tls_cert_file": ("tls.crt", "tls.crt"),  # relative: resolved against the base dir
    "security.tls_key_file": ("tls.key", "tls.key"),
    "security.split_key": ("0123456789abcdef", b"0123456789abcdef"),
    "s3.endpoint": ("http://127.0.0.1:9000", "http://127.0.0.1:9000"),
    "s3.region": ("eu-west-1", "eu-west-1"),
    "s3.access_key_id": ("k", "k"),
    "s3.secret_access_key": ("s", "s"),
    "workload.enabled": ("false", False),
    "workload.directory": ("workload-log", "workload-log"),  # relative: resolved against the base dir
    "workload.max_bytes": ("2MiB", 2 * 1024**2),
    "workload.record_values": (True, True),
}

# Per kind (by its name), a YAML value it refuses and what the error says after the key.
BAD_BY_KIND = {
    "mapping of schema name to warehouse root": (["/x"], "must be a mapping"),
    "integer": (-1, "must be a non-negative integer, got -1"),
    "number": (0, "must be a positive number, got 0"),
    "share from 0 to 1": (1.5, "must be a share from 0 to 1, got 1.5"),
    "size (bytes, or 512MiB, 2GiB, 64m)": ("huge", "must be a size such as 536870912 or 512MiB, got 'huge'"),
    "port number, or off": ("7777", "must be a port number or off, got '7777'"),
    "text": ([1], "must be text, got [1]"),
    "text (empty: the default)": ([1], "must be text, got [1]"),
    "list of text (or text with commas)": ({"a": 1}, "must be a list"),
    "file path (relative: to the config file)": ([1], "must be text, got [1]"),
    "secret, inline or in the file KEY_file": ([1], "must be text, got [1]"),
    "secret of at least 16 characters": ("short", "must be at least 16 characters"),
    "integer, or auto": ("two", "must be a positive integer (planning processes), got 'two'"),
    "true or false": ("yes", "must be true or false, got 'yes'"),
}

# Per rule, a value of the field's type that it refuses and what the error says after the key.
BAD_BY_RULE = {
    POSITIVE_INTEGER: (0, "must be a positive integer, got 0"),
    NON_NEGATIVE_INTEGER: (-1, "must be a non-negative integer, got -1"),
    POSITIVE_SECONDS: (0, "must be a positive number of seconds, got 0"),
    SHARE_FROM_0_TO_1: (2, "must be a share from 0 to 1, got 2"),
    PORT_NUMBER: (70000, "70000 is not a port number (0-65535; 0 picks a free port)"),
}
BAD_BY_KEY = {  # the keys with a rule of their own
    "listen.advertise": (("nohost",), "address 'nohost' must be HOST:PORT"),
    "workers": (0, "must be a positive integer (planning processes), got 0"),
    "cache.max_bytes": (-1, "(the cache size) must not be negative, got -1"),
    "security.token": (" ", "is empty: give a token, or none to disable the check"),
    "s3.endpoint": ("ftp://h", "must be http(s)://HOST[:PORT], got 'ftp://h'"),
    "s3.region": ("EU", "must be a region name such as us-east-1, got 'EU'"),
    "workload.max_bytes": (0, "must be a positive size, got 0"),
}


def mapping(values: dict[str, object]) -> dict[str, Any]:
    """The YAML mapping with these values by full key."""
    data: dict[str, Any] = {}
    for key, value in values.items():
        *sections, name = key.split(".")
        within = data
        for section in sections:
            within = within.setdefault(section, {})
        within[name] = value
    return data


def value_of(config: ServeConfig, declaration: Declaration) -> object:
    return functools.reduce(getattr, declaration.path, config)


def test_every_declared_key_has_a_sample() -> None:
    assert sorted(SAMPLES) == sorted(KEYS)
    assert len(set(KEYS)) == len(KEYS)


def test_every_declared_key_is_read_from_yaml_into_its_field(tmp_path: Path) -> None:
    for name in ("tls.crt", "tls.key"):
        (tmp_path / name).write_text("pem")
    loaded = ServeConfig.from_mapping(mapping({k: v for k, (v, _) in SAMPLES.items()}), base_dir=tmp_path)
    defaults = ServeConfig({"d": "/x"})
    for declaration in DECLARED:
        expected = SAMPLES[declaration.key][1]
        if declaration.setting.kind.name.startswith("file path"):
            expected = str(tmp_path / str(expected))
        assert value_of(loaded, declaration) == expected, declaration.key
        assert value_of(defaults, declaration) != expected, f"{declaration.key}: the sample is the default"


def test_every_declared_key_is_described_in_one_line() -> None:
    for declaration in DECLARED:
        description = declaration.setting.description
        assert description.strip() and "\n" not in description, declaration.key
        assert declaration.setting.kind.name in BAD_BY_KIND, declaration.key


@pytest.mark.parametrize("section", ["", "listen.", "cache.", "limits.", "security.", "s3."])
def test_an_unknown_key_is_named_in_every_section(section: str) -> None:
    with pytest.raises(ConfigError, match=rf"^unknown config key {re.escape(section)}bogus$"):
        ServeConfig.from_mapping(mapping({**{"warehouses": {"d": "/x"}}, f"{section}bogus": 1}))


@pytest.mark.parametrize("declaration", DECLARED, ids=lambda d: d.key)
def test_a_value_its_kind_refuses_is_one_line_naming_the_key(declaration: Declaration) -> None:
    value, complaint = BAD_BY_KIND[declaration.setting.kind.name]
    with pytest.raises(ConfigError) as raised:
        ServeConfig.from_mapping(mapping({"warehouses": {"d": "/x"}, declaration.key: value}))
    assert str(raised.value) == f"{declaration.key} {complaint}"


@pytest.mark.parametrize("declaration", [d for d in DECLARED if d.setting.rule], ids=lambda d: d.key)
def test_a_value_its_rule_refuses_is_one_line_naming_the_key(declaration: Declaration) -> None:
    rule = declaration.setting.rule
    value, complaint = BAD_BY_KEY.get(declaration.key) or BAD_BY_RULE[rule]  # type: ignore[index]
    given = {"warehouses": {"d": "/x"}} if declaration.owner is ServeConfig else {}
    with pytest.raises(ConfigError) as raised:
        declaration.owner(**given, **{declaration.name: value})  # type: ignore[call-arg]
    assert str(raised.value) == f"{declaration.key} {complaint}"


def test_the_planner_limits_keep_the_planners_defaults() -> None:
    names = planner_limit_names()
    assert names == [
        "max_discrete_values",
        "lookup_free_keys",
        "lookup_min_pruned_share",
        "range_max_index_share",
    ]
    for name in names:
        assert getattr(Limits(), name) == getattr(DEFAULT_LIMITS, name) == getattr(PruneLimits, name), name
    given = Limits(
        max_discrete_values=3, lookup_free_keys=4, lookup_min_pruned_share=0.5, range_max_index_share=1
    )
    planned = given.prune_limits()
    assert [getattr(planned, name) for name in names] == [3, 4, 0.5, 1]


def test_the_docs_name_only_declared_keys() -> None:
    pages = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
    sections = "|".join(sorted({k.split(".")[0] for k in KEYS if "." in k}))
    named = {m for page in pages for m in re.findall(rf"`((?:{sections})\.[a-z0-9_]+)`", page.read_text())}
    assert "limits.max_discrete_values" in named and named <= set(KEYS), named - set(KEYS)
