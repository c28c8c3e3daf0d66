"""How storage failures reach the user, for every `pruner.storage.Storage`: opening a location
(`open_filesystem`: the URI's scheme checked first, then pyarrow's file system made with bounded
waits) and the one map from the errors of pyarrow's file systems and of the conditional-PUT clients
to lakeprune's (`translate`). An endpoint that cannot be reached (its host name does not resolve,
it refuses or drops the connection, it does not answer in time) is a `StorageUnreachableError`
naming the endpoint: on S3 after at most `ATTEMPTS` attempts of at most `CONNECT_TIMEOUT_SECONDS`
each to connect (pyarrow's own lookup of a bucket's region, which takes no bounds, is preceded by
one bounded request showing that the endpoint answers), on Cloud Storage after
`GCS_RETRY_SECONDS` of retries, on Azure after its SDK's own three retries (about 6 s; pyarrow
takes no setting for them). A location no file system serves (an unknown scheme, a malformed URI)
and a change refused for want of a directory, a permission or room are `InvalidLocationError`s.
Every other error is left as it is: a storage failure this map does not know surfaces with its
traceback. Messages show URIs without their password, endpoints without credentials."""

from __future__ import annotations

import errno
import functools
import urllib.parse
from collections.abc import Callable, Mapping
from datetime import timedelta

import pyarrow as pa
import pyarrow.fs as pafs

from pruner.errors import InvalidLocationError, LakepruneError, StorageUnreachableError
from pruner.object_store import s3_endpoint, s3_region

# The URI schemes pyarrow's file systems serve (a path without one is local).
SCHEMES = ("file", "local", "s3", "gs", "gcs", "abfs", "abfss", "hdfs", "viewfs")
CONNECT_TIMEOUT_SECONDS = 2.0
"""How long an S3 client waits for a connection (name lookup, TCP and TLS) before it gives up."""
ATTEMPTS = 3
"""How many times an S3 request is made before its failure is final (pyarrow's default too)."""
GCS_RETRY_SECONDS = 10.0
"""How long a Cloud Storage request is retried (pyarrow's default retries for many minutes); with
its last back-off, a request that never reaches the endpoint fails after about 15 s."""
# What the clients' messages say when the endpoint was not reached, and what lakeprune says instead:
# curl's words (AWS and Google SDKs, Azure's "Fail to get a new connection"), the AWS SDK's error
# type for any other failure of the connection, and obstore's (the conditional PUTs).
_UNREACHABLE = (
    ("Could not resolve host", "its host name does not resolve"),
    ("Couldn't resolve proxy", "the proxy's host name does not resolve"),
    ("Timeout was reached", "it did not answer in time"),
    ("Could not connect to server", "it refused the connection"),
    ("Fail to get a new connection", "no connection could be made"),
    ("NETWORK_CONNECTION", "the connection failed"),
    ("error sending request", "the request could not be sent"),
)
# The errors of a change (write, move, delete) that say the location cannot take it; and for a
# write, ENOENT: a directory on the way cannot be made (under /proc, say).
_REFUSED_CHANGES = frozenset(
    {
        errno.ENOTDIR,
        errno.EISDIR,
        errno.EEXIST,  # a file where a directory must be made
        errno.EACCES,
        errno.EPERM,
        errno.EROFS,
        errno.ENOSPC,
        errno.EDQUOT,
    }
)
# An object store's refusal of a change for lack of permission (S3, through the AWS SDK).
_ACCESS_DENIED = "ACCESS_DENIED"


def uri_password(uri: str) -> str:
    """The password of a URI's user information (an `abfs://` account key), or ""."""
    if "://" not in uri:
        return ""
    try:
        return urllib.parse.urlsplit(uri).password or ""
    except ValueError:  # not a URI urllib can split (pyarrow refuses it too)
        return ""


def without_password(uri: str) -> str:
    """The URI with any password in its user information replaced by `***`, for messages."""
    password = uri_password(uri)
    return uri.replace(f":{password}@", ":***@", 1) if password else uri


def check_scheme(uri: str) -> None:
    """`InvalidLocationError` unless a file system serves the scheme of `uri` (a path has none);
    nothing is contacted."""
    scheme = uri.partition("://")[0] if "://" in uri else "file"
    if scheme not in SCHEMES:
        raise InvalidLocationError(
            f"{without_password(uri)}: unknown URI scheme {scheme!r} (lakeprune opens local paths "
            "and s3://, gs://, abfs:// and hdfs:// URIs)"
        )


def open_filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    """The file system serving `uri` (a URI, or an absolute local path) and the path in it; an
    `InvalidLocationError` when no file system serves it, a `StorageUnreachableError` when making
    it needs an endpoint (S3's region lookup) that does not answer."""
    shown = without_password(uri)
    check_scheme(uri)
    if uri.startswith("s3://"):
        _check_region_lookup(uri)
    try:
        fs, path = pafs.FileSystem.from_uri(uri)
    except (OSError, pa.ArrowInvalid) as exc:
        failure = translate(exc, shown, lambda: _endpoint_in(uri), None) if isinstance(exc, OSError) else None
        if failure is not None:
            raise failure from exc
        reason = _first_line(exc).replace(uri, shown)
        password = uri_password(uri)
        if password:
            reason = reason.replace(password, "***")
        raise InvalidLocationError(f"cannot open {shown}: {reason}") from exc
    return bounded(fs), path


def bounded(fs: pafs.FileSystem) -> pafs.FileSystem:
    """`fs` with lakeprune's bounds on waiting for its endpoint (see the module), same otherwise."""
    if fs.type_name == "s3":
        options = {**fs.__reduce__()[1][0], "connect_timeout": CONNECT_TIMEOUT_SECONDS}
        return pafs.S3FileSystem(**options, retry_strategy=_retries())
    if fs.type_name == "gcs":
        options = {**fs.__reduce__()[1][0], "retry_time_limit": timedelta(seconds=GCS_RETRY_SECONDS)}
        return pafs.GcsFileSystem(**options)
    return fs


def _retries() -> pafs.S3RetryStrategy:
    return pafs.AwsStandardS3RetryStrategy(max_attempts=ATTEMPTS)


def _check_region_lookup(uri: str) -> None:
    """pyarrow looks an S3 bucket's region up when neither the URI (`?region=`,
    `?endpoint_override=`) nor the environment (a custom endpoint) says where the bucket is, with
    a client of its own that retries for many seconds; a bounded request to the same endpoint
    first shows whether it answers at all."""
    parts = urllib.parse.urlsplit(uri)
    query = urllib.parse.parse_qs(parts.query)
    bucket = parts.netloc.rpartition("@")[2]
    if not bucket or "region" in query or "endpoint_override" in query or s3_endpoint() is not None:
        return
    options = {"scheme": query.get("scheme", ["https"])[0], "region": s3_region() or "us-east-1"}
    try:
        _answers(bucket, options["region"], options["scheme"])
    except OSError as exc:
        endpoint = s3_endpoint_of(options, bucket)
        failure = translate(exc, without_password(uri), lambda: endpoint, None)
        if failure is None:  # pragma: no cover - `_answers` raises only what translates
            raise
        raise failure from exc


@functools.lru_cache(maxsize=64)
def _answers(bucket: str, region: str, scheme: str) -> None:
    """Raise the `OSError` of a bounded anonymous request to the bucket's endpoint if it did not
    reach the endpoint; return when the endpoint answered anything (that the bucket does not
    exist or may not be seen anonymously is for pyarrow to say). Remembered once it answered."""
    probe = pafs.S3FileSystem(
        anonymous=True,
        region=region,
        scheme=scheme,
        connect_timeout=CONNECT_TIMEOUT_SECONDS,
        retry_strategy=_retries(),
    )
    try:
        probe.get_file_info(bucket)
    except OSError as exc:
        if _unreachable(exc) is not None:
            raise


def _endpoint_in(uri: str) -> str:
    """The endpoint that opening `uri` contacts: an S3 bucket's (its region lookup), else the
    URI's host (an HDFS name node)."""
    parts = urllib.parse.urlsplit(uri)
    host = parts.netloc.rpartition("@")[2]
    if parts.scheme == "s3":
        return s3_endpoint_of({"endpoint_override": s3_endpoint()}, host)
    return f"{parts.scheme}://{host}"


def s3_endpoint_of(options: Mapping[str, object], bucket: str) -> str:
    """The endpoint an S3 file system with these options (`__reduce__`'s) sends `bucket`'s
    requests to: its custom endpoint, else AWS's virtual-hosted one."""
    scheme = str(options.get("scheme") or "https")
    override = str(options.get("endpoint_override") or "")
    if override:
        return override if "://" in override else f"{scheme}://{override}"
    region = str(options.get("region") or s3_region() or "us-east-1")
    return f"{scheme}://{bucket}.s3.{region}.amazonaws.com"


def translate(
    exc: OSError, where: str, endpoint: Callable[[], str], change: str | None
) -> LakepruneError | None:
    """The lakeprune error that `exc`, raised by an operation on `where` (a URI without password),
    stands for; None when it is none of those this module knows. `endpoint` names the service
    the operation went to; `change` is the operation's verb ("write", "move", "delete") when it
    changes storage, else None."""
    if isinstance(exc, LakepruneError):  # translated already, by an inner operation
        return None
    reason = _unreachable(exc)
    if reason is not None:
        return StorageUnreachableError(f"cannot reach {_without_user(endpoint())} ({reason}) for {where}")
    refused = exc.errno in _REFUSED_CHANGES or (change == "write" and exc.errno == errno.ENOENT)
    if change is not None and (refused or _ACCESS_DENIED in str(exc)):
        return InvalidLocationError(f"cannot {change} {where}: {_first_line(exc)}")
    return None


def _unreachable(exc: OSError) -> str | None:
    """Why `exc` says its request did not reach the endpoint, in lakeprune's words; None if not."""
    text = str(exc)
    return next((said for marker, said in _UNREACHABLE if marker in text), None)


def _without_user(endpoint: str) -> str:
    """An endpoint URL without any user information (credentials someone put there)."""
    scheme, sep, rest = endpoint.partition("://")
    if not sep:
        return endpoint.rpartition("@")[2]
    authority, slash, path = rest.partition("/")
    return f"{scheme}://{authority.rpartition('@')[2]}{slash}{path}"


def _first_line(exc: BaseException) -> str:
    """The error's own words, on one line: pyarrow's `X. Detail: [errno N] Y` as `X: Y`."""
    text = (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    head, sep, detail = line.partition(". Detail: ")
    if sep:
        return f"{head}: {detail.partition('] ')[2] or detail}"
    return line
