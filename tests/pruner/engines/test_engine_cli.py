"""`lakeprune trino|presto ...` without starting an engine: the catalog printout, status of nothing,
and one-line errors with exit code 2. (The commands are mounted on a bare app here, as
`register` mounts them on the real one.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from builder.spark_output import log_spark_output_to
from pruner.cli import engine_cmds
from pruner.engines.cache import CACHE_ENV
from pruner.engines.native_catalog import S3_VARIABLES, NativeCatalog
from pruner.engines.process import EngineInstance
from pruner.engines.spec import TRINO

runner = CliRunner()
app = typer.Typer()
engine_cmds.register(app)
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # The bare app has no main callback to name a fresh Spark log: a JVM an earlier test's command
    # launched in this process is not these commands' (their errors would point at its log).
    log_spark_output_to(None)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    for name in (*S3_VARIABLES, "AWS_SESSION_TOKEN"):  # the committed catalogs: a user without S3
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "cache"


def test_native_catalog_reads_s3_settings_from_the_aws_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:8333")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    result = runner.invoke(app, ["trino", "catalog", "--grpc", "127.0.0.1:7777"])
    assert result.exit_code == 0, result.output
    assert "\nfs.native-s3.enabled=true\n" in result.stdout
    assert "\ns3.endpoint=http://127.0.0.1:8333\n" in result.stdout
    assert "\ns3.region=eu-west-1\n" in result.stdout
    assert "\ns3.path-style-access=true\n" in result.stdout
    assert "\ns3.aws-secret-key=${ENV:AWS_SECRET_ACCESS_KEY}\n" in result.stdout
    assert secret not in result.output and "AKIDEXAMPLE" not in result.output
    # the Thrift catalog has no S3 settings: the sidecar reads the files
    thrift = runner.invoke(app, ["trino", "catalog"])
    assert "s3." not in thrift.stdout


def test_catalog_prints_the_committed_files() -> None:
    committed = REPO / "connector-config"
    cases = [
        (["trino", "catalog", "--grpc", "127.0.0.1:7777"], committed / "trino/catalog/lakeprune.properties"),
        (["trino", "catalog"], committed / "trino/catalog/lakeprune_thrift.properties"),
        (["presto", "catalog"], committed / "presto/catalog/lakeprune.properties"),
    ]
    for args, path in cases:
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        assert result.stdout == path.read_text()
    custom = runner.invoke(app, ["trino", "catalog", "--sidecar", "sidecar:7778"])
    assert "trino.thrift.client.addresses=sidecar:7778\n" in custom.stdout
    native = runner.invoke(
        app,
        ["trino", "catalog", "--grpc", "s:1,t:2", "--grpc-request-timeout", "5s", "--grpc-max-attempts", "2"],
    )
    assert "lakeprune.sidecar.addresses=s:1,t:2\n" in native.stdout
    assert "lakeprune.sidecar.request-timeout=5s\n" in native.stdout
    assert "lakeprune.sidecar.max-attempts=2\n" in native.stdout


def test_grpc_options_become_the_native_catalog(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    ca = tmp_path / "ca.crt"
    ca.write_text("PEM")
    catalog = engine_cmds.native_catalog(
        "a:1,b:2",
        token_file=token,
        trust_certificate=ca,
        request_timeout="10s",
        max_attempts=5,
        dynamic_filtering_wait_timeout="2s",
    )
    assert catalog == NativeCatalog(
        "a:1,b:2",
        request_timeout="10s",
        max_attempts=5,
        token="s3cret",
        tls=True,
        trust_certificate=ca,
        dynamic_filtering_wait_timeout="2s",
    )
    assert engine_cmds.native_catalog(None) is None


def test_start_parses_the_grpc_options_and_passes_them_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[tuple[tuple[object, ...], dict[str, object]]] = []

    def fake_start(*args: object, **kwargs: object) -> EngineInstance:
        calls.append((args, kwargs))
        return EngineInstance(
            "trino", "476", 18080, 42, tmp_path, "127.0.0.1:7778", tmp_path, 0.0, 30.0, grpc="127.0.0.1:7777"
        )

    monkeypatch.setattr(engine_cmds.process, "start", fake_start)
    plugin = tmp_path / "plugin"
    result = runner.invoke(
        app,
        [
            *("trino", "start", "--port", "18080", "--grpc", "127.0.0.1:7777", "--sidecar", "127.0.0.1:7778"),
            *("--connector-plugin", str(plugin), "--dynamic-filtering-wait-timeout", "3s"),
        ],
    )
    assert result.exit_code == 0, result.output
    ((args, kwargs),) = calls
    assert args[:3] == (TRINO, 18080, "127.0.0.1:7778")
    assert kwargs["grpc"] == NativeCatalog("127.0.0.1:7777", dynamic_filtering_wait_timeout="3s")
    assert kwargs["plugin"] == plugin
    assert "catalog lakeprune -> gRPC 127.0.0.1:7777 (native connector); catalog lakeprune_thrift -> " in (
        " ".join(result.stdout.split())
    )
    calls.clear()
    assert runner.invoke(app, ["trino", "start", "--port", "18080"]).exit_code == 0
    ((args, kwargs),) = calls
    assert args[2] is None and kwargs["grpc"] is None  # the Thrift catalog at the default address


def test_status_of_nothing_exits_3() -> None:
    result = runner.invoke(app, ["presto", "status"])
    assert result.exit_code == 3
    assert "Presto 0.287 on port 8081: not running" in result.stdout
    result = runner.invoke(app, ["trino", "status", "--port", "9999", "--json"])
    assert result.exit_code == 3
    assert json.loads(result.stdout)["running"] is False


def test_stop_of_nothing_is_fine() -> None:
    result = runner.invoke(app, ["trino", "stop"])
    assert result.exit_code == 0
    assert "Trino 476 is not running on port 8080" in result.stdout


def test_user_errors_exit_2_in_one_line(tmp_path: Path, empty_cache: Path) -> None:
    cases = [
        (["trino", "start", "--sidecar", "nonsense"], "error: sidecar address must be HOST:PORT"),
        (["presto", "start", "--port", "0", "--heap-mb", "10"], "error: heap must be at least 512 MB"),
        (
            ["trino", "start", "--port", "0", "--catalog-file", str(tmp_path / "missing.properties")],
            "error: --catalog-file",
        ),
        (
            ["trino", "start", "--grpc", "nonsense"],
            "error: sidecar address must be HOST:PORT (e.g. 127.0.0.1:7777)",
        ),
        (
            ["trino", "start", "--grpc-tls"],
            "error: --grpc-token-file, --grpc-tls and --grpc-trust-certificate need --grpc",
        ),
        (
            ["trino", "start", "--grpc", "h:1", "--grpc-token-file", str(tmp_path / "none")],
            "error: --grpc-token-file",
        ),
        (
            ["trino", "start", "--grpc", "h:1", "--grpc-request-timeout", "soon"],
            "error: the request timeout must",
        ),
        (["trino", "catalog", "--grpc", "h:1", "--sidecar", "h:2"], "error: give --grpc (native catalog) or"),
    ]
    for args, message in cases:
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith(message) and result.stderr.count("\n") == 1, result.stderr
    assert not empty_cache.exists()


def test_presto_has_no_grpc_option() -> None:
    result = runner.invoke(app, ["presto", "start", "--grpc", "h:1"])
    assert result.exit_code == 2
    assert "No such option: --grpc" in result.output
