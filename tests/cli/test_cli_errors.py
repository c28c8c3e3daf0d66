"""One-line errors of the command line for locations it cannot use: a URI scheme no file system
serves and a malformed URI, an object store whose endpoint cannot be reached (within a bounded wait,
naming the endpoint and never a secret), and a path that cannot be written. Each is `error: ...` on
one line and exit status 2, for every command that opens a location; a storage error that is none
of these still surfaces with its traceback."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any, cast

import pyarrow.fs as pafs
import pytest
from typer.testing import CliRunner

from pruner import storage
from pruner.cli.main import app
from pruner.storage_failures import ATTEMPTS, CONNECT_TIMEOUT_SECONDS, GCS_RETRY_SECONDS
from tests.support_servers import free_port

runner = CliRunner()
SECRET = "lakeprune-test-secret-key-do-not-show"
# How long a command may take beyond its bounded wait: the interpreter, typer and pyarrow loading
# on a busy 2-core machine.
SLACK_SECONDS = 20.0
UNKNOWN = "foo://x/t"
# Every command that opens a table (or an input) given as a location, with TABLE standing for it.
COMMANDS = [
    ("table", "show", "TABLE"),
    ("table", "read", "TABLE"),
    ("table", "history", "TABLE"),
    ("table", "create", "TABLE", "--schema", "id bigint", "--record-key", "id"),
    ("table", "alter-partitioning", "TABLE", "--unpartitioned"),
    ("write", "TABLE", "--input", "in.parquet", "--mode", "insert"),
    ("compact", "TABLE"),
    ("clean", "TABLE"),
    ("index", "build", "TABLE", "idx"),
    ("prune", "TABLE", "--where", "id = 1"),
    ("sql", "--table", "TABLE", "SHOW INDEXES ON t"),
]


def failing(*args: str) -> tuple[str, float]:
    """Run a command that must fail with a user error: its one line (stderr), and its duration."""
    start = time.monotonic()
    result = runner.invoke(app, list(args))
    elapsed = time.monotonic() - start
    assert result.exit_code == 2, result.stdout + result.stderr + repr(result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    return lines[0], elapsed


def with_location(command: tuple[str, ...], location: str) -> tuple[str, ...]:
    return tuple(location if part == "TABLE" else part for part in command)


@pytest.fixture
def no_aws(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No AWS variable from the environment (or a test's S3 server) points the clients anywhere."""
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "lakeprune-test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    return monkeypatch


# Unknown schemes and malformed URIs --------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_an_unknown_scheme_is_one_line_for_every_command(command: tuple[str, ...]) -> None:
    line, _ = failing(*with_location(command, UNKNOWN))
    assert line == (
        f"error: {UNKNOWN}: unknown URI scheme 'foo' (lakeprune opens local paths and s3://, gs://, "
        "abfs:// and hdfs:// URIs)"
    )


def test_an_unknown_scheme_as_input_or_schema_source_or_warehouse(tmp_path: Path) -> None:
    table = str(tmp_path / "t")
    runner.invoke(app, ["table", "create", table, "--schema", "id bigint", "--record-key", "id"])
    assert "unknown URI scheme 'foo'" in failing("write", table, "--input", UNKNOWN, "--mode", "upsert")[0]
    create = ("table", "create", str(tmp_path / "u"), "--schema-from", UNKNOWN, "--record-key", "id")
    assert "unknown URI scheme 'foo'" in failing(*create)[0]
    assert "foo://x/t/trips: unknown URI scheme" in failing("table", "show", "trips", "-w", UNKNOWN)[0]
    assert not (tmp_path / "u").exists()


def test_serve_refuses_a_warehouse_of_an_unknown_scheme_before_listening() -> None:
    line, _ = failing("serve", "-w", f"demo={UNKNOWN}", "--grpc-port", "0", "--workers", "1")
    assert line.startswith("error: warehouse 'demo': foo://x/t: unknown URI scheme 'foo'"), line


@pytest.mark.parametrize(
    ("location", "said"),
    [
        ("s3:///t", "cannot open s3:///t: Missing bucket name in S3 URI"),
        ("gs:///t", "cannot open gs:///t: Missing bucket name in GCS URI"),
        ("abfs:///t", "cannot open abfs:///t: AzureOptions doesn't contain a valid account name"),
        (f"abfs://acct:{SECRET}@host/c/a b", "cannot open abfs://acct:***@host/c/a b: Cannot parse URI"),
    ],
)
def test_a_malformed_uri_is_one_line_without_its_password(location: str, said: str) -> None:
    line, _ = failing("table", "show", location)
    assert line.startswith(f"error: {said}"), line
    assert SECRET not in line


# Unreachable endpoints ---------------------------------------------------------------------------


def s3_wait_bound() -> float:
    """The longest an S3 request that never connects may take: every attempt's connect timeout,
    and the back-offs between them (well under a second each)."""
    return ATTEMPTS * (CONNECT_TIMEOUT_SECONDS + 1.0)


def test_an_s3_endpoint_whose_name_does_not_resolve(no_aws: pytest.MonkeyPatch, tmp_path: Path) -> None:
    endpoint = "http://lakeprune-unreachable.invalid:9000"  # .invalid never resolves (RFC 6761)
    no_aws.setenv("AWS_ENDPOINT_URL", endpoint)
    for command in [COMMANDS[0], COMMANDS[3]]:  # table show, table create
        line, elapsed = failing(*with_location(command, "s3://bucket/t"))
        assert line.startswith(
            f"error: cannot reach {endpoint} (its host name does not resolve) for s3://bucket/t"
        )
        assert SECRET not in line
        assert elapsed < s3_wait_bound() + SLACK_SECONDS
    # an --input on such a store, for a table on a local disk
    table = str(tmp_path / "t")
    runner.invoke(app, ["table", "create", table, "--schema", "id bigint", "--record-key", "id"])
    line, _ = failing("write", table, "--input", "s3://bucket/in", "--mode", "upsert")
    assert line.startswith(
        f"error: cannot reach {endpoint} (its host name does not resolve) for s3://bucket/in"
    )


def test_an_s3_endpoint_that_refuses_connections(no_aws: pytest.MonkeyPatch) -> None:
    endpoint = f"http://127.0.0.1:{free_port('nothing')}"
    no_aws.setenv("AWS_ENDPOINT_URL", endpoint)
    line, elapsed = failing("prune", "s3://bucket/t", "--where", "id = 1")
    assert line.startswith(f"error: cannot reach {endpoint} (it refused the connection) for s3://bucket/t")
    assert elapsed < s3_wait_bound() + SLACK_SECONDS


def resolves(host: str) -> bool:
    try:
        socket.getaddrinfo(host, 443)
    except OSError:
        return False
    return True


def test_an_s3_bucket_whose_endpoint_does_not_resolve(no_aws: pytest.MonkeyPatch) -> None:
    """Without a custom endpoint, pyarrow looks the bucket's region up first, retrying for many
    seconds: a bounded request before it says the endpoint does not answer."""
    bucket = "lakeprune-no-such-bucket-0f3c9a"
    host = f"{bucket}.s3.us-east-1.amazonaws.com"
    if resolves(host):
        pytest.skip("this machine resolves AWS's names: the endpoint may well answer")
    line, elapsed = failing("table", "show", f"s3://{bucket}/t")
    assert line == f"error: cannot reach https://{host} (its host name does not resolve) for s3://{bucket}/t"
    assert elapsed < s3_wait_bound() + SLACK_SECONDS


def test_a_cloud_storage_endpoint_that_refuses_connections(monkeypatch: pytest.MonkeyPatch) -> None:
    endpoint = f"http://127.0.0.1:{free_port('nothing')}"
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", endpoint)
    line, elapsed = failing("table", "history", "gs://bucket/t")
    assert line.startswith(f"error: cannot reach {endpoint} (it refused the connection) for gs://bucket/t")
    assert elapsed < 2 * GCS_RETRY_SECONDS + SLACK_SECONDS


# Paths that cannot be written --------------------------------------------------------------------


def test_paths_that_cannot_be_written(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("a file, not a directory")
    under_a_file = str(tmp_path / "file" / "t")
    said = {  # the directory that could not be made, and why
        "/proc/lakeprune-x": ("/proc/lakeprune-x", "No such file or directory"),
        "/sys/kernel/lakeprune-x": ("/sys/kernel/lakeprune-x", "Operation not permitted"),
        under_a_file: (f"{under_a_file}/.lakeprune", "Not a directory"),
    }
    for location, (directory, reason) in said.items():
        line, _ = failing("table", "create", location, "--schema", "id bigint", "--record-key", "id")
        expected = f"cannot write {location}/.lakeprune/table.json: Cannot create directory '{directory}'"
        assert line == f"error: {expected}: {reason}"
    assert (tmp_path / "file").read_text() == "a file, not a directory"


class _BrokenDisk:
    """A local file system whose every directory creation fails with an I/O error."""

    def __init__(self, inner: pafs.FileSystem) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def create_dir(self, path: str, recursive: bool = True) -> None:
        raise OSError(5, f"Cannot create directory '{path}'. Detail: [errno 5] Input/output error")


def test_a_storage_error_no_rule_knows_surfaces_as_a_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An I/O error is not the user's mistake: it is not turned into a one-line error."""
    real = storage.open_filesystem

    def broken(uri: str) -> tuple[pafs.FileSystem, str]:
        fs, path = real(uri)
        return cast(pafs.FileSystem, _BrokenDisk(fs)), path

    monkeypatch.setattr(storage, "open_filesystem", broken)
    result = runner.invoke(
        app, ["table", "create", str(tmp_path / "t"), "--schema", "id bigint", "--record-key", "id"]
    )
    assert result.exit_code == 1 and isinstance(result.exception, OSError)
    assert "Input/output error" in str(result.exception)
