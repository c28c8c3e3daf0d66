"""The native connector's catalog: the exact property names the Java connector defines, defaults,
optional token and TLS, S3 access from the AWS SDKs' variables, checks of addresses and durations,
and the committed template."""

from __future__ import annotations

from pathlib import Path

import pytest

from pruner.engines.catalog import parse_properties
from pruner.engines.errors import InvalidEngineConfigError
from pruner.engines.native_catalog import (
    DEFAULT_GRPC,
    NativeCatalog,
    S3Access,
    grpc_of,
    native_catalog_file,
    native_catalog_properties,
    s3_access_from_environment,
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


SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
S3_KEYS = {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": SECRET}


def test_no_aws_variables_no_s3_properties() -> None:
    assert s3_access_from_environment({}) is None
    assert (
        s3_access_from_environment({"AWS_REGION": " ", "AWS_CA_BUNDLE": "/etc/ca.pem", "HOME": "/root"})
        is None
    )
    values = parse_properties(native_catalog_file(TRINO, NativeCatalog("a:1", s3=None)))
    assert not any(key.startswith(("fs.", "s3.")) for key in values)  # only commented-out examples


def test_s3_from_a_custom_endpoint_with_keys() -> None:
    environ = {"AWS_ENDPOINT_URL": "http://127.0.0.1:8333/", **S3_KEYS}
    s3 = s3_access_from_environment(environ)
    assert s3 == S3Access(
        endpoint="http://127.0.0.1:8333",
        region="us-east-1",
        path_style_access=True,
        access_key="${ENV:AWS_ACCESS_KEY_ID}",
        secret_key="${ENV:AWS_SECRET_ACCESS_KEY}",
    )
    text = native_catalog_file(TRINO, NativeCatalog("a:1", s3=s3))
    values = parse_properties(text)
    assert {key: value for key, value in values.items() if key.startswith(("fs.", "s3."))} == {
        "fs.native-s3.enabled": "true",
        "s3.endpoint": "http://127.0.0.1:8333",
        "s3.region": "us-east-1",
        "s3.path-style-access": "true",
        "s3.aws-access-key": "${ENV:AWS_ACCESS_KEY_ID}",
        "s3.aws-secret-key": "${ENV:AWS_SECRET_ACCESS_KEY}",
    }
    # neither key is in the file: Trino reads them from its own environment
    assert SECRET not in text
    assert "AKIDEXAMPLE" not in text


def test_s3_variable_precedence_and_aws_defaults() -> None:
    s3 = s3_access_from_environment(
        {
            "AWS_ENDPOINT_URL": "http://general:1",
            "AWS_ENDPOINT_URL_S3": "https://s3-only:2",
            "AWS_DEFAULT_REGION": "eu-west-1",
            "AWS_REGION": "eu-central-1",
        }
    )
    assert s3 is not None
    assert (s3.endpoint, s3.region, s3.path_style_access) == ("https://s3-only:2", "eu-central-1", True)
    assert s3.access_key is None and s3.secret_key is None  # the AWS SDK's default chain

    aws = s3_access_from_environment({"AWS_DEFAULT_REGION": "eu-west-1", **S3_KEYS})
    assert aws is not None
    assert (aws.endpoint, aws.region, aws.path_style_access) == (None, "eu-west-1", False)
    values = parse_properties(native_catalog_file(TRINO, NativeCatalog("a:1", s3=aws)))
    assert "s3.endpoint" not in values
    assert values["s3.path-style-access"] == "false"
    assert values["s3.aws-secret-key"] == "${ENV:AWS_SECRET_ACCESS_KEY}"


def test_temporary_or_partial_credentials_are_left_to_the_sdk() -> None:
    # Trino's S3 properties have no session token: the SDK's chain reads all three itself
    with_token = s3_access_from_environment({**S3_KEYS, "AWS_SESSION_TOKEN": "token"})
    only_id = s3_access_from_environment({"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE"})
    for s3 in (with_token, only_id):
        assert s3 is not None
        assert s3.access_key is None and s3.secret_key is None
        values = parse_properties(native_catalog_file(TRINO, NativeCatalog("a:1", s3=s3)))
        assert values["fs.native-s3.enabled"] == "true"
        assert "s3.aws-access-key" not in values and "s3.aws-secret-key" not in values


def test_explicit_s3_credentials_stay_out_of_repr() -> None:
    s3 = S3Access(endpoint="http://minio:9000", access_key="AKIDEXAMPLE", secret_key=SECRET)
    catalog = NativeCatalog("a:1", s3=s3)
    assert SECRET not in repr(catalog) and "AKIDEXAMPLE" not in repr(catalog)
    assert parse_properties(native_catalog_file(TRINO, catalog))["s3.aws-secret-key"] == SECRET


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"endpoint": "127.0.0.1:8333"}, "endpoint must be http\\(s\\)://HOST\\[:PORT\\]"),
        ({"endpoint": "http://host:1/path"}, "endpoint must be"),
        ({"region": "a\nb"}, "region is empty or spans lines"),
        ({"access_key": "AKIDEXAMPLE"}, "both the S3 access key and the secret key"),
        ({"access_key": "AKIDEXAMPLE", "secret_key": "a\nb"}, "secret key is empty or spans lines"),
    ],
)
def test_bad_s3_values_fail_in_one_line(arguments: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidEngineConfigError, match=message) as caught:
        S3Access(**arguments)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)
    assert SECRET not in str(caught.value)
