"""Conditional creates on object stores, which `pyarrow.fs` cannot make: one PUT that the server
refuses when the object exists. S3 and Azure Blob through `obstore` (the Rust `object_store`
crate; S3: `If-None-Match: *`, answered 412; Azure Blob: `If-None-Match: *` too, answered 409);
Google Cloud Storage through Google's own client, `google-cloud-storage` (an upload with
`ifGenerationMatch=0`, answered 412), which signs in as pyarrow's `GcsFileSystem` does.

S3 clients are configured like pyarrow's S3 file system, from the AWS SDKs' standard variables:
`AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` (a custom endpoint, addressed path-style; `http://`
allowed), `AWS_REGION` or `AWS_DEFAULT_REGION` (else the region pyarrow resolved for the bucket),
`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`. pyarrow's Azure file system
reads no variable for the account, its key or the endpoint: they come from the `abfs://` URI (or
the `AzureFileSystem` a caller made), so Azure clients take exactly what pyarrow resolved
(`AzureTarget`); obstore adds the Azure identity variables pyarrow's default credential reads too
(`AZURE_CLIENT_ID`, `AZURE_TENANT_ID`, `AZURE_CLIENT_SECRET`, `AZURE_FEDERATED_TOKEN_FILE`). GCS
clients take what the `GcsFileSystem` holds (`GcsTarget`): its endpoint and scheme, and anonymous
access, an access token, a service account to impersonate or else Application Default Credentials
(`GOOGLE_APPLICATION_CREDENTIALS`, gcloud's login, the metadata server), as pyarrow does. Errors
name the object and the server's one-line reason; credentials never appear in them."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import obstore
from obstore.exceptions import AlreadyExistsError, BaseError, PreconditionError
from obstore.store import AzureStore, S3Store

if TYPE_CHECKING:
    from google.auth.credentials import Credentials
    from google.cloud.storage import Bucket
    from obstore.store import AzureConfig, S3Config  # TypedDicts of the stubs only

_SECRET_VARIABLES = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
# The AWS SDKs' standard variables every lakeprune S3 client is configured from (a change of any of
# them makes a new conditional-PUT client).
AWS_VARIABLES = (
    "AWS_ENDPOINT_URL_S3",
    "AWS_ENDPOINT_URL",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ACCESS_KEY_ID",
    *_SECRET_VARIABLES,
)


def is_endpoint_url(value: str) -> bool:
    """Whether `value` is an endpoint an S3 client can be given: `http(s)://HOST[:PORT]`, no path."""
    return re.fullmatch(r"https?://[^\s/]+/?", value) is not None


def s3_endpoint(environ: Mapping[str, str] = os.environ) -> str | None:
    """The custom S3 endpoint the AWS SDKs would use, if one is set."""
    return environ.get("AWS_ENDPOINT_URL_S3") or environ.get("AWS_ENDPOINT_URL") or None


def s3_region(environ: Mapping[str, str] = os.environ) -> str | None:
    """The region the AWS SDKs would use, if one is set."""
    return environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION") or None


def _store(bucket: str, region: str) -> S3Store:
    """A client for the bucket; kept while the settings stay the same (making one takes ~15 ms)."""
    return _cached_store(bucket, region, tuple(os.environ.get(name) for name in AWS_VARIABLES))


@functools.lru_cache(maxsize=16)
def _cached_store(bucket: str, region: str, settings: tuple[str | None, ...]) -> S3Store:
    del settings  # part of the cache key only: obstore reads the variables itself
    config: S3Config = {"virtual_hosted_style_request": False}
    endpoint = s3_endpoint()
    if endpoint is not None:
        config["endpoint"] = endpoint
    if s3_region() is None and region:
        config["region"] = region
    allow_http = endpoint is not None and endpoint.lower().startswith("http://")
    return S3Store(bucket, config=config, client_options={"allow_http": allow_http})


def s3_put_if_absent(bucket: str, key: str, data: bytes, region: str = "") -> bool:
    """PUT `data` at `key` unless the key exists: True when created, False when it was there.

    A PUT whose answer was lost and that the client retried may find its own object and answer
    False: the caller then loses a race it won, which is safe (nothing is committed twice); the
    reverse cannot happen. Any other failure raises `OSError` with a one-line message."""
    secrets = [os.environ.get(name) for name in _SECRET_VARIABLES]
    return _create(_store(bucket, region), key, data, f"s3://{bucket}/{key}", secrets)


@dataclass(frozen=True)
class AzureTarget:
    """A storage account as pyarrow's `AzureFileSystem` resolved it: `authority` is the Blob
    service's hostname[:port] (a leading `.` means `<account><authority>`, else the account is the
    URL's first path segment, as on the Azurite emulator) and `scheme` is `http` or `https`. Empty
    credentials are left to obstore, which reads the Azure identity variables."""

    account: str
    authority: str = ".blob.core.windows.net"
    scheme: str = "https"
    account_key: str = field(default="", repr=False)
    sas_token: str = field(default="", repr=False)
    tenant_id: str = ""
    client_id: str = ""
    client_secret: str = field(default="", repr=False)

    @property
    def endpoint(self) -> str:
        """The account's Blob service URL."""
        if self.authority.startswith("."):
            return f"{self.scheme}://{self.account}{self.authority}"
        return f"{self.scheme}://{self.authority}/{self.account}"


def azure_put_if_absent(target: AzureTarget, container: str, key: str, data: bytes) -> bool:
    """PUT `data` at `key` of the container unless the blob exists: True when created, False when
    it was there (a lost answer retried may also say False, as for `s3_put_if_absent`). Any other
    failure raises `OSError` with a one-line message."""
    secrets = [target.account_key, target.sas_token, target.client_secret]
    return _create(_azure_store(target, container), key, data, f"abfs://{container}/{key}", secrets)


@functools.lru_cache(maxsize=16)
def _azure_store(target: AzureTarget, container: str) -> AzureStore:
    config: AzureConfig = {"account_name": target.account, "endpoint": target.endpoint}
    if target.account_key:
        config["account_key"] = target.account_key
    if target.sas_token:
        config["sas_key"] = target.sas_token
    if target.client_secret:
        config["tenant_id"] = target.tenant_id
        config["client_id"] = target.client_id
        config["client_secret"] = target.client_secret
    allow_http = target.scheme.lower() == "http"
    return AzureStore(container, config=config, client_options={"allow_http": allow_http})


# Google's Cloud Storage service, and the scope an impersonated service account is asked for.
GCS_DEFAULT_HOST = "storage.googleapis.com"
GCS_SCOPE = "https://www.googleapis.com/auth/devstorage.read_write"


@dataclass(frozen=True)
class GcsTarget:
    """The Cloud Storage service and the credentials of a pyarrow `GcsFileSystem` (its options):
    `endpoint` is `host[:port]` (empty: Google's), and the first of `anonymous`, `access_token` and
    `target_service_account` that is set says how to sign in; none set means Application Default
    Credentials, as in pyarrow."""

    scheme: str = "https"
    endpoint: str = ""
    anonymous: bool = False
    access_token: str = field(default="", repr=False)
    target_service_account: str = ""
    project_id: str = ""

    @property
    def api_endpoint(self) -> str:
        """The service's base URL, always explicit so that no variable can redirect the client
        away from where pyarrow's file system goes."""
        return f"{self.scheme or 'https'}://{self.endpoint or GCS_DEFAULT_HOST}"

    def credentials(self) -> Credentials | None:
        """What the client signs in with; None leaves it to Application Default Credentials."""
        # Google's client libraries load lazily: they add ~0.3 s to every command otherwise.
        import google.auth
        import google.oauth2.credentials
        from google.auth import impersonated_credentials
        from google.auth.credentials import AnonymousCredentials

        if self.anonymous:
            return AnonymousCredentials()  # type: ignore[no-untyped-call]
        if self.access_token:
            return google.oauth2.credentials.Credentials(token=self.access_token)  # type: ignore[no-untyped-call]
        if self.target_service_account:
            source, _ = google.auth.default(scopes=[GCS_SCOPE])
            return impersonated_credentials.Credentials(  # type: ignore[no-untyped-call]
                source_credentials=source,
                target_principal=self.target_service_account,
                target_scopes=[GCS_SCOPE],
            )
        return None


def gcs_put_if_absent(target: GcsTarget, bucket: str, key: str, data: bytes) -> bool:
    """Upload `data` to `key` of the bucket unless the object exists (`ifGenerationMatch=0`): True
    when created, False when it was there (a lost answer retried may also say False, as for
    `s3_put_if_absent`). Any other failure, incl. missing credentials, raises `OSError` with a
    one-line message."""
    import requests
    from google.api_core.exceptions import GoogleAPIError, PreconditionFailed
    from google.auth.exceptions import GoogleAuthError

    where = f"gs://{bucket}/{key}"
    try:
        _gcs_bucket(target, bucket).blob(key).upload_from_string(data, if_generation_match=0)
    except PreconditionFailed:
        return False
    except (GoogleAPIError, GoogleAuthError, requests.RequestException) as exc:
        raise OSError(f"conditional PUT of {where} failed: {_one_line(exc, [target.access_token])}") from None
    return True


@functools.lru_cache(maxsize=16)
def _gcs_bucket(target: GcsTarget, bucket: str) -> Bucket:
    from google.cloud import storage as gcs

    client = gcs.Client(
        project=target.project_id or None,
        credentials=target.credentials(),
        client_options={"api_endpoint": target.api_endpoint},
    )
    return client.bucket(bucket)


def _create(
    store: S3Store | AzureStore, key: str, data: bytes, where: str, secrets: Iterable[str | None]
) -> bool:
    """One conditional PUT: True when it created the object, False when the object existed."""
    try:
        obstore.put(store, key, data, mode="create")
    except (AlreadyExistsError, PreconditionError):
        return False
    except BaseError as exc:
        raise OSError(f"conditional PUT of {where} failed: {_one_line(exc, secrets)}") from None
    return True


def _one_line(exc: BaseException, secrets: Iterable[str | None]) -> str:
    """The first line of an obstore error (the rest is a debug dump), with any secret removed."""
    line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    for secret in secrets:
        if secret:
            line = line.replace(secret, "***")
    return f"{type(exc).__name__}: {line}"
