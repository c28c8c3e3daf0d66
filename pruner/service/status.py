"""The gRPC status code of each of the sidecar's transport-neutral request statuses
(`pruner.serving.errors.Status`): the one place the gRPC server's answers are mapped."""

from __future__ import annotations

import grpc

from pruner.serving.errors import Status

_GRPC_CODES = {
    Status.OK: grpc.StatusCode.OK,
    Status.INVALID_ARGUMENT: grpc.StatusCode.INVALID_ARGUMENT,
    Status.NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    Status.RESOURCE_EXHAUSTED: grpc.StatusCode.RESOURCE_EXHAUSTED,
    Status.UNAVAILABLE: grpc.StatusCode.UNAVAILABLE,
    Status.DEADLINE_EXCEEDED: grpc.StatusCode.DEADLINE_EXCEEDED,
    Status.UNAUTHENTICATED: grpc.StatusCode.UNAUTHENTICATED,
    Status.FAILED_PRECONDITION: grpc.StatusCode.FAILED_PRECONDITION,
    Status.CANCELLED: grpc.StatusCode.CANCELLED,
    Status.INTERNAL: grpc.StatusCode.INTERNAL,
}


def grpc_code(status: Status) -> grpc.StatusCode:
    return _GRPC_CODES[status]
