"""ServeConfig: the example file loads and documents every key, defaults, relative paths, command-line
options, and one `ConfigError` naming the key for every kind of mistake."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from pruner.advisor.workload import STATE_HOME_VARIABLE
from pruner.planner.limits import DEFAULT_LIMITS
from pruner.serving.config import (
    DEFAULT_GRPC_PORT,
    PLANNING_SHARE,
    ConfigError,
    Limits,
    S3Settings,
    Security,
    ServeConfig,
    WorkloadSettings,
    available_cores,
    parse_size,
    parse_warehouse_option,
)

EXAMPLE = Path(__file__).parents[3] / "connector-config" / "sidecar.yaml"


def config(**sections: Any) -> ServeConfig:
    return ServeConfig.from_mapping({"warehouses": {"demo": "/data/wh"}, **sections})


def test_the_example_loads_with_its_defaults() -> None:
    loaded = ServeConfig.load(EXAMPLE)
    assert loaded.warehouses == {"demo": str(EXAMPLE.parent / "../demo-output/warehouse")}
    defaults = ServeConfig({"demo": "x"})
    for name in ("host", "grpc_port", "thrift_port", "metrics_port", "advertise", "cache_bytes", "limits"):
        assert getattr(loaded, name) == getattr(defaults, name), name
    assert loaded.security.token is None and not loaded.security.tls


def test_the_example_mentions_every_key_and_its_commented_keys_work(tmp_path: Path) -> None:
    text = EXAMPLE.read_text()
    sections = (ServeConfig, Limits, Security, S3Settings, WorkloadSettings)
    fields = [f.name for cls in sections for f in dataclasses.fields(cls)]
    keys = {"cache_bytes": "max_bytes"}  # the one key spelt differently in the file
    for name in fields:
        assert f"{keys.get(name, name)}:" in text, f"{name} is not in the example"
    data = yaml.safe_load(text)
    for name in ("token", "tls.crt", "tls.key", "split.key"):
        (tmp_path / name).write_text(f"secret-{name}-0123456789\n")
    data["security"] = {
        "token_file": "token",
        "tls_cert_file": "tls.crt",
        "tls_key_file": "tls.key",
        "split_key_file": "split.key",
    }
    loaded = ServeConfig.from_mapping(data, base_dir=tmp_path)
    assert loaded.security.token == "secret-token-0123456789"
    assert loaded.security.tls and loaded.security.tls_key_file == str(tmp_path / "tls.key")
    assert loaded.security.split_key == b"secret-split.key-0123456789"


def test_the_s3_section_overrides_the_aws_variables(tmp_path: Path) -> None:
    (tmp_path / "s3.secret").write_text("the-secret\n")
    loaded = config(
        s3={
            "endpoint": "http://127.0.0.1:8333",
            "region": "eu-west-3",
            "access_key_id": "lakeprune",
            "secret_access_key_file": str(tmp_path / "s3.secret"),
        }
    ).s3
    assert loaded.environment() == {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:8333",
        "AWS_ENDPOINT_URL_S3": None,  # would win over AWS_ENDPOINT_URL
        "AWS_REGION": "eu-west-3",
        "AWS_ACCESS_KEY_ID": "lakeprune",
        "AWS_SECRET_ACCESS_KEY": "the-secret",
        "AWS_SESSION_TOKEN": None,  # belongs to other keys
    }
    assert "the-secret" not in repr(loaded) + loaded.describe()
    assert loaded.describe() == "endpoint=http://127.0.0.1:8333 region=eu-west-3 credentials=config"
    assert config().s3.environment() == {} and config(s3=None).s3 == S3Settings()


@pytest.mark.parametrize(
    ("s3", "message"),
    [
        ({"endpoint": "127.0.0.1:8333"}, "s3.endpoint must be http(s)://HOST[:PORT]"),
        ({"endpoint": "http://h/path"}, "s3.endpoint must be http(s)://HOST[:PORT]"),
        ({"region": "EU West"}, "s3.region must be a region name"),
        ({"access_key_id": "k"}, "give both or neither"),
        ({"secret_access_key": "s"}, "give both or neither"),
        ({"secret_access_key": "s", "secret_access_key_file": "f"}, "are mutually exclusive"),
        ({"bucket": "b"}, "unknown config key s3.bucket"),
        ({"secret_access_key_file": "/nonexistent/s3.secret"}, "cannot read s3.secret_access_key_file"),
    ],
)
def test_s3_mistakes_name_the_key(s3: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        config(s3=s3)


def test_defaults() -> None:
    built = config()
    assert built.grpc_port == DEFAULT_GRPC_PORT and built.host == "127.0.0.1"
    assert built.cache_bytes == 512 * 1024**2
    assert built.limits == Limits() and built.limits.max_discrete_values == 100_000
    assert built.thrift_hosts(7778) == [("127.0.0.1", 7778)]


def test_every_section(tmp_path: Path) -> None:
    (tmp_path / "cfg.yaml").write_text(
        """
warehouses: {a: wh_a, b: "s3://bucket/b", c: /abs/c}
listen: {host: 0.0.0.0, grpc_port: 0, thrift_port: off, metrics_port: 9999, advertise: "h1:1,h2:2"}
cache: {max_bytes: 2GiB}
limits:
  {max_discrete_values: 5, max_splits_per_response: 7, request_timeout_seconds: 0.5, max_frame_bytes: 1024,
   thrift_max_connections: 9, thrift_idle_timeout_seconds: 60, thrift_frame_timeout_seconds: 2.5,
   prune_deadline_seconds: 0.25, lookup_free_keys: 0, lookup_min_pruned_share: 0, range_max_index_share: 1,
   remembered_prunes: 0}
security: {token: " tok "}
"""
    )
    loaded = ServeConfig.load(tmp_path / "cfg.yaml")
    assert loaded.warehouses == {"a": str(tmp_path / "wh_a"), "b": "s3://bucket/b", "c": "/abs/c"}
    assert (loaded.grpc_port, loaded.thrift_port, loaded.metrics_port) == (0, None, 9999)
    assert loaded.advertise == ("h1:1", "h2:2") and loaded.thrift_hosts(1) == [("h1", 1), ("h2", 2)]
    assert loaded.cache_bytes == 2 * 1024**3
    assert loaded.limits == Limits(5, 7, 0.5, 1024, 9, 60.0, 2.5, 0.25, 0, 0.0, 1.0, 0)
    assert loaded.security.token == " tok "
    assert ServeConfig({"a": "x"}, host="0.0.0.0").thrift_hosts(5) == [("127.0.0.1", 5)]


def test_the_token_never_shows_in_a_repr() -> None:
    built = config(security={"token": "hunter2-secret"})
    assert "hunter2" not in repr(built) and "hunter2" not in repr(built.security)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (1234, 1234),
        ("512MiB", 512 * 1024**2),
        ("16 MB", 16 * 1024**2),
        ("1g", 1024**3),
        ("10kb", 10240),
        ("7", 7),
    ],
)
def test_sizes(text: object, value: int) -> None:
    assert parse_size(text, "cache.max_bytes") == value


@pytest.mark.parametrize(
    "text", ["1.5GiB", "-1", -1, "lots", True, "5TB", None, "\uff15\uff11\uff12MiB", "\u0665\u0661\u0662"]
)
def test_bad_sizes(text: object) -> None:
    with pytest.raises(ConfigError, match=r"cache\.max_bytes must be a size"):
        parse_size(text, "cache.max_bytes")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, r"warehouses is required"),
        ({"warehouses": {}}, r"no warehouses configured"),
        ({"warehouses": {"Demo": "/x"}}, r"warehouse name 'Demo' must match"),
        ({"warehouses": {"demo": ""}}, r"warehouse 'demo' has an empty root"),
        ({"warehouses": {"demo": None}}, r"warehouses\.demo must be text"),
        ({"warehouses": ["/x"]}, r"warehouses must be a mapping"),
        ({"warehouses": {"d": "/x"}, "extra": 1}, r"unknown config key extra"),
        ({"warehouses": {"d": "/x"}, "listen": {"grpc": 1}}, r"unknown config key listen\.grpc"),
        ({"warehouses": {"d": "/x"}, "limits": {"max_values": 1}}, r"unknown config key limits\.max_values"),
        ({"warehouses": {"d": "/x"}, "listen": "everywhere"}, r"listen must be a mapping"),
        ({"warehouses": {"d": "/x"}, "listen": {"grpc_port": 70000}}, r"grpc_port 70000 is not a port"),
        ({"warehouses": {"d": "/x"}, "listen": {"grpc_port": "7777"}}, r"listen\.grpc_port must be a port"),
        (
            {"warehouses": {"d": "/x"}, "listen": {"grpc_port": 5, "metrics_port": 5}},
            r"grpc_port and metrics_port",
        ),
        ({"warehouses": {"d": "/x"}, "listen": {"advertise": ["nohost"]}}, r"advertise address 'nohost'"),
        ({"warehouses": {"d": "/x"}, "cache": {"max_bytes": "huge"}}, r"cache\.max_bytes must be a size"),
        (
            {"warehouses": {"d": "/x"}, "limits": {"max_discrete_values": 0}},
            r"max_discrete_values must be a pos",
        ),
        ({"warehouses": {"d": "/x"}, "limits": {"max_splits_per_response": -3}}, r"non-negative integer"),
        ({"warehouses": {"d": "/x"}, "limits": {"request_timeout_seconds": 0}}, r"must be a positive number"),
        ({"warehouses": {"d": "/x"}, "limits": {"prune_deadline_seconds": -1}}, r"must be a positive number"),
        (
            {"warehouses": {"d": "/x"}, "limits": {"lookup_free_keys": 1.5}},
            r"lookup_free_keys must be a non-neg",
        ),
        (
            {"warehouses": {"d": "/x"}, "limits": {"lookup_min_pruned_share": 1.5}},
            r"limits\.lookup_min_pruned_share must be a share from 0 to 1, got 1\.5",
        ),
        (
            {"warehouses": {"d": "/x"}, "limits": {"range_max_index_share": "all"}},
            r"must be a share from 0 to 1",
        ),
        ({"warehouses": {"d": "/x"}, "security": {"token": ""}}, r"security\.token is empty"),
        ({"warehouses": {"d": "/x"}, "security": {"token": "a", "token_file": "f"}}, r"mutually exclusive"),
        (
            {"warehouses": {"d": "/x"}, "security": {"token_file": "/no/such"}},
            r"cannot read security\.token_file",
        ),
        (
            {"warehouses": {"d": "/x"}, "security": {"tls_cert_file": "/c"}},
            r"needs both cert_file and key_file",
        ),
        (
            {"warehouses": {"d": "/x"}, "security": {"tls_cert_file": "/c", "tls_key_file": "/k"}},
            r"/c does not",
        ),
        ({"warehouses": {"d": "/x"}, "security": {"split_key": "short"}}, r"at least 16 characters"),
        ({"warehouses": {"d": "/x"}, "workers": 0}, r"workers must be a positive integer .*got 0"),
        ({"warehouses": {"d": "/x"}, "workers": "two"}, r"workers must be a positive integer .*got 'two'"),
        ({"warehouses": {"d": "/x"}, "workers": "2"}, r"workers must be a positive integer .*got '2'"),
        ({"warehouses": {"d": "/x"}, "workers": True}, r"workers must be a positive integer .*got True"),
        ({"warehouses": {"d": "/x"}, "workers": 1.5}, r"workers must be a positive integer .*got 1.5"),
        (
            {"warehouses": {"d": "/x"}, "workload": {"enabled": "yes"}},
            r"workload\.enabled must be true or false",
        ),
        (
            {"warehouses": {"d": "/x"}, "workload": {"max_bytes": 0}},
            r"workload\.max_bytes must be a positive",
        ),
        ({"warehouses": {"d": "/x"}, "workload": {"dir": "/x"}}, r"unknown config key workload\.dir"),
    ],
)
def test_mistakes_are_one_config_error_naming_the_key(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ServeConfig.from_mapping(data)


@pytest.mark.parametrize(
    ("given", "workers"), [(None, available_cores()), ("auto", available_cores()), (3, 3)]
)
def test_workers_default_to_one_per_core(given: int | str | None, workers: int) -> None:
    data = {"warehouses": {"d": "/x"}} | ({} if given is None else {"workers": given})
    assert ServeConfig.from_mapping(data).workers == workers
    option = given if isinstance(given, int) else None  # the command line's "auto" is None here
    assert ServeConfig.from_options(["d=/x"], workers=option).workers == workers


def test_available_cores_is_the_affinity_mask() -> None:
    assert available_cores() == len(os.sched_getaffinity(0))


def test_an_empty_token_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("  \n")
    with pytest.raises(ConfigError, match=r"token_file .* is empty"):
        ServeConfig.from_mapping({"warehouses": {"d": "/x"}, "security": {"token_file": "token"}}, tmp_path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, r"cannot read config"),
        ("a: [", r"is not valid YAML"),
        ("- a\n- b\n", r"must be a YAML mapping"),
    ],
)
def test_unreadable_files(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "cfg.yaml"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError, match=message):
        ServeConfig.load(path)


def test_limits_and_security_check_themselves() -> None:
    with pytest.raises(ConfigError, match="max_frame_bytes"):
        Limits(max_frame_bytes=0)
    with pytest.raises(ConfigError, match="thrift_max_connections"):
        Limits(thrift_max_connections=0)
    for key in ("thrift_idle_timeout_seconds", "thrift_frame_timeout_seconds"):
        with pytest.raises(ConfigError, match=f"limits.{key} must be a positive number of seconds"):
            Limits(**{key: 0})
    with pytest.raises(
        ConfigError, match=r"limits\.prune_deadline_seconds must be a positive number of seconds"
    ):
        Limits(prune_deadline_seconds=0)
    with pytest.raises(ConfigError, match=r"limits\.lookup_free_keys must be a non-negative integer"):
        Limits(lookup_free_keys=-1)
    with pytest.raises(ConfigError, match=r"limits\.range_max_index_share must be a share from 0 to 1"):
        Limits(range_max_index_share=2)
    with pytest.raises(ConfigError, match="at most 128 characters"):
        ServeConfig({"a" * 129: "/x"})
    with pytest.raises(ConfigError, match="empty"):
        Security(token=" ")
    with pytest.raises(ConfigError, match="cache size"):
        ServeConfig({"d": "/x"}, cache_bytes=-1)


def test_the_planner_limits_come_from_the_config() -> None:
    limits = Limits(
        max_discrete_values=9, prune_deadline_seconds=1.5, lookup_free_keys=3, lookup_min_pruned_share=0.5
    )
    planned = limits.prune_limits(timeout=10.0)
    assert planned.max_discrete_values == 9 and planned.lookup_free_keys == 3
    assert planned.lookup_min_pruned_share == 0.5 and planned.range_max_index_share == 0.25
    assert planned.deadline is not None
    start = planned.clock()
    # The prune deadline, unless the request has less time left than it needs to answer.
    assert start < planned.deadline <= start + 1.5
    short = limits.prune_limits(timeout=1.0).deadline
    assert short is not None and short <= planned.clock() + PLANNING_SHARE * 1.0
    defaults = Limits().prune_limits()
    assert defaults.lookup_free_keys == DEFAULT_LIMITS.lookup_free_keys
    assert defaults.lookup_min_pruned_share == DEFAULT_LIMITS.lookup_min_pruned_share


def test_command_line_options(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("s3cret\n")
    built = ServeConfig.from_options(
        ["a=/wh/a", "b = s3://x/b"],
        host="0.0.0.0",
        grpc_port=0,
        thrift_port=False,
        metrics_port=None,
        cache_size="64MiB",
        token_file=str(tmp_path / "token"),
    )
    assert built.warehouses == {"a": "/wh/a", "b": "s3://x/b"}
    assert (built.host, built.grpc_port, built.thrift_port, built.metrics_port) == ("0.0.0.0", 0, None, 9464)
    assert built.cache_bytes == 64 * 1024**2 and built.security.token == "s3cret"
    assert ServeConfig.from_options(["a=/x"]).grpc_port == DEFAULT_GRPC_PORT


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["a"], r"--warehouse 'a' must be NAME=ROOT"),
        (["=x"], r"must be NAME=ROOT"),
        (["a=/x", "a=/y"], r"--warehouse a is given twice"),
        (["A=/x"], r"warehouse name 'A'"),
    ],
)
def test_bad_warehouse_options(options: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ServeConfig.from_options(options)


def test_parse_warehouse_option() -> None:
    assert parse_warehouse_option("demo=s3://b/k=v") == ("demo", "s3://b/k=v")


def test_the_workload_log_is_on_by_default_in_the_state_home_and_can_be_moved_or_turned_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(STATE_HOME_VARIABLE, str(tmp_path / "state"))
    log = config().workload.log()
    assert log is not None and log.directory == tmp_path / "state" / "workload" and not log.keep_literals
    moved = ServeConfig.from_mapping(
        {
            "warehouses": {"d": "/x"},
            "workload": {"directory": "w", "max_bytes": "1MiB", "record_values": True},
        },
        base_dir=tmp_path,
    ).workload.log()
    assert moved is not None and moved.directory == tmp_path / "w"
    assert moved.max_bytes == 1024**2 and moved.keep_literals
    assert config(workload={"enabled": False}).workload.log() is None
