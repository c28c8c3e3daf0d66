"""The error type of the Thrift layer. `ThriftRequestError` means the engine sent something malformed
(a marker block with other than one row, an inverted range, a block whose sizes do not add up, a
missing argument): an invalid argument to the sidecar's error map, answered with the method's
`ServiceException`, not retryable. A valid request that lakeprune cannot translate exactly is never
an error: it is widened instead."""

from __future__ import annotations

from pruner.errors import InvalidInputError


class ThriftRequestError(InvalidInputError):
    """A Thrift request or one of its values is malformed."""
