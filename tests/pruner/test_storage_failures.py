"""The one map from storage errors to lakeprune's (`pruner.storage_failures.translate`), on the
messages each client writes, and the bounds `bounded` puts on a file system's waits."""

from __future__ import annotations

import errno
from datetime import timedelta

import pyarrow.fs as pafs
import pytest

from pruner.errors import InvalidLocationError, StorageUnreachableError
from pruner.storage_failures import (
    CONNECT_TIMEOUT_SECONDS,
    GCS_RETRY_SECONDS,
    bounded,
    s3_endpoint_of,
    translate,
)

ENDPOINT = "http://user:secret@storage.example:9000"


def endpoint() -> str:
    return ENDPOINT


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (
            "When getting information for key 'k' in bucket 'b': AWS Error NETWORK_CONNECTION during "
            "HeadObject operation: curlCode: 6, Could not resolve hostname; Details: Could not resolve "
            "host: x",
            "its host name does not resolve",
        ),
        (
            "AWS Error NETWORK_CONNECTION during HeadObject operation: curlCode: 7, Could not connect "
            "to server",
            "it refused the connection",
        ),
        (
            "AWS Error NETWORK_CONNECTION during ListObjectsV2 operation: curlCode: 28, Timeout was reached",
            "it did not answer in time",
        ),
        (
            "google::cloud::Status(UNAVAILABLE: Retry policy exhausted, with a last message of "
            "PerformWork() - CURL error [7]=Could not connect to server",
            "it refused the connection",
        ),
        (
            "Check for Hierarchical Namespace support on 'http://h/acct/c' failed. Azure Error: [] Fail "
            "to get a new connection for: http://h. Could not resolve hostname",
            "its host name does not resolve",
        ),
        (
            "conditional PUT of s3://b/k failed: GenericError: ... - HTTP error: error sending request",
            "the request could not be sent",
        ),
    ],
)
def test_an_endpoint_not_reached_is_said_so_without_credentials(message: str, reason: str) -> None:
    for change in (None, "write"):
        failure = translate(OSError(message), "s3://b/t", endpoint, change)
        assert isinstance(failure, StorageUnreachableError) and isinstance(failure, OSError)
        assert str(failure) == f"cannot reach http://storage.example:9000 ({reason}) for s3://b/t"


def test_a_refused_change_is_an_invalid_location() -> None:
    denied = (
        "When uploading part for key 'k' in bucket 'b': AWS Error ACCESS_DENIED during UploadPart operation"
    )
    for error in (
        OSError(errno.EACCES, "Failed to open local file '/r/x'. Detail: [errno 13] Permission denied"),
        OSError(errno.EROFS, "Cannot create directory '/r'. Detail: [errno 30] Read-only file system"),
        OSError(errno.ENOSPC, "No space left on device"),
        OSError(denied),
    ):
        failure = translate(error, "/r/x", endpoint, "write")
        assert isinstance(failure, InvalidLocationError), error
        assert str(failure).startswith("cannot write /r/x: ")
    assert str(
        translate(
            OSError(errno.EROFS, "Cannot create directory '/r'. Detail: [errno 30] Read-only file system"),
            "/r/x",
            endpoint,
            "write",
        )
    ) == ("cannot write /r/x: Cannot create directory '/r': Read-only file system")


def test_errors_the_map_does_not_know_are_left_alone() -> None:
    """Left to propagate: they are bugs or failures that are not the user's to fix."""
    assert translate(OSError(errno.EIO, "Input/output error"), "/r/x", endpoint, "write") is None
    assert translate(OSError(errno.EACCES, "Permission denied"), "/r/x", endpoint, None) is None  # a read
    missing = OSError(errno.ENOENT, "Failed renaming '/r/a' to '/r/b'. Detail: [errno 2] No such file")
    assert (
        translate(missing, "/r/b", endpoint, "move") is None
    )  # the source went away: not the target's fault
    assert translate(StorageUnreachableError("cannot reach x"), "/r/x", endpoint, None) is None


def test_s3_endpoints() -> None:
    assert s3_endpoint_of({"endpoint_override": "http://127.0.0.1:9000"}, "b") == "http://127.0.0.1:9000"
    assert s3_endpoint_of({"endpoint_override": "minio:9000", "scheme": "http"}, "b") == "http://minio:9000"
    assert s3_endpoint_of({"region": "eu-west-1"}, "b") == "https://b.s3.eu-west-1.amazonaws.com"


def test_bounded_file_systems_keep_their_options() -> None:
    s3 = pafs.S3FileSystem(
        region="eu-west-1", endpoint_override="http://127.0.0.1:9", access_key="a", secret_key="b"
    )
    options = bounded(s3).__reduce__()[1][0]
    assert options["connect_timeout"] == CONNECT_TIMEOUT_SECONDS
    assert {k: options[k] for k in ("region", "endpoint_override", "access_key", "secret_key")} == {
        "region": "eu-west-1",
        "endpoint_override": "http://127.0.0.1:9",
        "access_key": "a",
        "secret_key": "b",
    }
    gcs = pafs.GcsFileSystem(anonymous=True, scheme="http", endpoint_override="127.0.0.1:9")
    options = bounded(gcs).__reduce__()[1][0]
    assert options["retry_time_limit"] == timedelta(seconds=GCS_RETRY_SECONDS)
    assert options["anonymous"] and options["endpoint_override"] == "127.0.0.1:9"
    local = pafs.LocalFileSystem()
    assert bounded(local) is local
