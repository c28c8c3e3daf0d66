"""The gRPC bearer-token check. When the sidecar is configured with a token, every call must carry
the metadata `authorization: Bearer <token>`; anything else is refused with UNAUTHENTICATED before
it reaches a servicer (the comparison takes constant time). The token is checked from the metadata
alone: a refused call's body is never parsed, so a garbage body without a token is UNAUTHENTICATED
too. Health checks stay open so that load balancers and orchestrators can probe a sidecar without
the secret; they reveal only whether it is serving. Refusals are counted and logged like every
other request, labelled with the method's name only for methods the server serves (`other` for the
rest, with the path, shortened, in the log line), so unauthenticated callers cannot grow the
metrics."""

from __future__ import annotations

import hmac
from collections.abc import Callable, Collection
from typing import Any, NoReturn

import grpc

from pruner.service.handlers import method_handler
from pruner.service.status import grpc_code
from pruner.serving.errors import Status, UnauthenticatedError
from pruner.serving.metrics import OTHER, Metrics

OPEN_METHODS = frozenset({"/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch"})
API = "grpc"


class BearerTokenInterceptor(grpc.ServerInterceptor):  # type: ignore[misc]
    def __init__(self, token: str, metrics: Metrics, methods: Collection[str]) -> None:
        """`methods`: the full paths (`/service/method`) the server serves, for the metrics labels."""
        if not token:
            raise ValueError("an empty token would let every caller in")
        self._expected = f"Bearer {token}".encode()
        self._metrics = metrics
        self._methods = frozenset(methods)

    def intercept_service(self, continuation: Callable[[Any], Any], handler_call_details: Any) -> Any:
        method: str = handler_call_details.method
        if method in OPEN_METHODS:
            return continuation(handler_call_details)
        metadata = dict(handler_call_details.invocation_metadata or ())
        given = metadata.get("authorization")
        if isinstance(given, str) and hmac.compare_digest(given.encode(), self._expected):
            return continuation(handler_call_details)
        reason = (
            "missing bearer token: send the metadata 'authorization: Bearer <token>'"
            if given is None
            else "invalid bearer token"
        )
        known = method in self._methods
        with self._metrics.request(API, method.rpartition("/")[2] if known else OTHER) as record:
            record.status = Status.UNAUTHENTICATED
            if not known:
                record.fields["path"] = method
            record.fields["reason"] = "missing token" if given is None else "invalid token"
        return _refusal(continuation(handler_call_details), reason)


def _refusal(handler: Any, message: str) -> Any:
    """A handler of the same shape as `handler` (None: an unknown method) that aborts the call
    without decoding its request."""
    error = UnauthenticatedError(message)

    def abort(_request: Any, context: grpc.ServicerContext) -> NoReturn:
        context.abort(grpc_code(error.status), str(error))
        raise error  # not reached: abort raises

    shape = (False, False) if handler is None else (handler.request_streaming, handler.response_streaming)
    return method_handler(shape, abort)
