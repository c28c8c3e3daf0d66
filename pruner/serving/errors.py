"""What a failed request tells its caller, decided in one place for every endpoint. `classify` maps
an exception to a `Failure`: a transport-neutral `Status` (also the `status` label of the request
metrics) and a one-line message saying what was wrong. The gRPC layer turns the status into a
`grpc.StatusCode` (`pruner.service.status`), the Thrift layer into its exceptions; this module
imports neither.

- unknown schema, table or snapshot                        -> NOT_FOUND
- a malformed request (unknown column, a value that does not fit its column, an inverted range,
  an empty or too long IN list, a bad instant)              -> INVALID_ARGUMENT
- a result too large for one response                      -> RESOURCE_EXHAUSTED
- a damaged table (its timeline contradicts its files: `pruner.table.integrity`)
                                                            -> FAILED_PRECONDITION (retrying will not help)
- storage failures (an unreachable endpoint too), unreadable table metadata, a locked table or
  another writer's conflicting commit                       -> UNAVAILABLE (retrying may help)
- the request's deadline passed                            -> DEADLINE_EXCEEDED
- a missing or wrong bearer token                          -> UNAUTHENTICATED
- any other lakeprune error                                -> FAILED_PRECONDITION
- anything else is a bug                                   -> INTERNAL; the caller gets no internals
  (the endpoint logs the traceback).

Every message is bounded (`bounded.MESSAGE_CHARS`), after the endpoint's `redact` (the catalog's
`Redactor`) has replaced the server's warehouse paths with the schema names callers use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import pyarrow as pa

from pruner.bounded import MESSAGE_CHARS, shorten
from pruner.errors import (
    ConflictError,
    InvalidInputError,
    InvalidSchemaError,
    LakepruneError,
    SchemaMismatchError,
    SnapshotNotFoundError,
    StorageUnreachableError,
    TableCorruptError,
    TableDamagedError,
    TableNotFoundError,
)


class Status(StrEnum):
    OK = "ok"
    INVALID_ARGUMENT = "invalid_argument"
    NOT_FOUND = "not_found"
    RESOURCE_EXHAUSTED = "resource_exhausted"
    UNAVAILABLE = "unavailable"
    DEADLINE_EXCEEDED = "deadline_exceeded"
    UNAUTHENTICATED = "unauthenticated"
    FAILED_PRECONDITION = "failed_precondition"
    CANCELLED = "cancelled"
    INTERNAL = "internal"


class RequestError(LakepruneError):
    """An error the service layer raises with its status decided up front."""

    status = Status.INTERNAL


class DeadlineExceededError(RequestError):
    status = Status.DEADLINE_EXCEEDED


class ResultTooLargeError(RequestError):
    status = Status.RESOURCE_EXHAUSTED


class UnauthenticatedError(RequestError):
    status = Status.UNAUTHENTICATED


# A failure's reason, for callers that must tell it apart within its status (the Trino connector
# reports a damaged table as LAKEPRUNE_BAD_DATA, not as a bad request); gRPC sends it as the
# `lakeprune-reason` trailer.
TABLE_DAMAGED = "TABLE_DAMAGED"


@dataclass(frozen=True)
class Failure:
    status: Status
    message: str
    reason: str | None = None


_BY_TYPE: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], Status], ...] = (
    ((TableNotFoundError, SnapshotNotFoundError), Status.NOT_FOUND),
    ((InvalidInputError, InvalidSchemaError, SchemaMismatchError), Status.INVALID_ARGUMENT),
    (TableDamagedError, Status.FAILED_PRECONDITION),
    ((TableCorruptError, ConflictError, StorageUnreachableError), Status.UNAVAILABLE),
    (LakepruneError, Status.FAILED_PRECONDITION),
)


def classify(exc: BaseException, redact: Callable[[str], str] | None = None) -> Failure:
    """The status and message a caller gets for `exc`; the message passes through `redact` (which
    hides server paths), then is bounded."""
    status, message = _status_and_message(exc)
    if redact is not None:
        message = redact(message)
    reason = TABLE_DAMAGED if isinstance(exc, TableDamagedError) else None
    return Failure(status, shorten(message, MESSAGE_CHARS), reason)


def _status_and_message(exc: BaseException) -> tuple[Status, str]:
    if isinstance(exc, RequestError):
        return exc.status, str(exc)
    for types, status in _BY_TYPE:
        if isinstance(exc, types):
            return status, str(exc)
    if isinstance(exc, OSError | pa.ArrowException):
        return Status.UNAVAILABLE, f"storage error: {exc}"
    return Status.INTERNAL, f"internal error ({type(exc).__name__}); see the sidecar's log"
