"""Conditional creates on S3, which `pyarrow.fs` cannot make: one PUT with `If-None-Match: *`
through `obstore` (the Rust `object_store` crate), answered 412 when the key exists. The client is
configured like pyarrow's S3 file system, from the AWS SDKs' standard variables:
`AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` (a custom endpoint, addressed path-style; `http://`
allowed), `AWS_REGION` or `AWS_DEFAULT_REGION` (else the region pyarrow resolved for the bucket),
`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`. Errors name the object and
the server's one-line reason; credentials never appear in them."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

import obstore
from obstore.exceptions import AlreadyExistsError, BaseError, PreconditionError
from obstore.store import S3Store

if TYPE_CHECKING:
    from obstore.store import S3Config  # a TypedDict of the stubs only

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
    try:
        obstore.put(_store(bucket, region), key, data, mode="create")
    except (AlreadyExistsError, PreconditionError):
        return False
    except BaseError as exc:
        raise OSError(f"conditional PUT of s3://{bucket}/{key} failed: {_one_line(exc)}") from None
    return True


def _one_line(exc: BaseException) -> str:
    """The first line of an obstore error (the rest is a debug dump), with any secret removed."""
    line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    for name in _SECRET_VARIABLES:
        secret = os.environ.get(name)
        if secret:
            line = line.replace(secret, "***")
    return f"{type(exc).__name__}: {line}"
