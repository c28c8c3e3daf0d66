"""The error type of the Thrift layer. `ThriftRequestError` means the engine sent something malformed
(a marker block with other than one row, an inverted range, a block whose sizes do not add up, a
missing argument); the server answers it with the method's `ServiceException`, not retryable. A
valid request that lakeprune cannot translate exactly is never an error: it is widened instead."""

from __future__ import annotations

from pruner.errors import LakepruneError


class ThriftRequestError(LakepruneError):
    """A Thrift request or one of its values is malformed."""


class RetryableRequestError(ThriftRequestError):
    """A request that failed on something transient (storage): the engine may retry it."""

    retryable = True
