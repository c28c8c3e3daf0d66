"""Registering generated gRPC servicers with request decoding the service controls. grpc-python
answers INTERNAL when a method's request deserializer raises, so a body that is not the method's
message would look like a sidecar bug. `add_servicer` registers a servicer through its generated
`add_*_to_server` function (never edited) but wraps each method handler it produces: a body that
does not decode reaches `on_undecodable`, which answers (INVALID_ARGUMENT) instead of the servicer.
`method_handler` builds a handler of any
of the four call shapes; the bearer-token check uses it for its refusals too."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

import grpc

# Called as on_undecodable(method name, decoding error, context); answers by aborting the call.
OnUndecodable = Callable[[str, Exception, grpc.ServicerContext], NoReturn]

_FACTORIES = {
    (False, False): grpc.unary_unary_rpc_method_handler,
    (False, True): grpc.unary_stream_rpc_method_handler,
    (True, False): grpc.stream_unary_rpc_method_handler,
    (True, True): grpc.stream_stream_rpc_method_handler,
}


@dataclass(frozen=True)
class _Undecodable:
    """What the wrapped deserializer returns for a body that does not decode."""

    error: Exception


def method_handler(
    shape: tuple[bool, bool],
    behavior: Callable[..., Any],
    request_deserializer: Callable[[bytes], Any] | None = None,
    response_serializer: Callable[[Any], bytes] | None = None,
) -> grpc.RpcMethodHandler:
    """A handler of `shape` = (request streaming, response streaming) running `behavior`."""
    return _FACTORIES[shape](
        behavior, request_deserializer=request_deserializer, response_serializer=response_serializer
    )


def add_servicer(
    add_to_server: Callable[[Any, Any], None],
    servicer: Any,
    server: grpc.Server,
    on_undecodable: OnUndecodable,
) -> None:
    """Register `servicer` on `server` as `add_to_server(servicer, server)` would, with every
    method's request decoding wrapped."""
    recorder = _Recorder()
    add_to_server(servicer, recorder)
    if not recorder.services:
        raise TypeError(f"{add_to_server.__name__} registered no method handlers")
    for service, handlers in recorder.services.items():
        wrapped = {name: _wrap(name, h, on_undecodable) for name, h in handlers.items()}
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, wrapped),))
        server.add_registered_method_handlers(service, wrapped)


class _Recorder:
    """Stands in for the server while generated code registers its handlers."""

    def __init__(self) -> None:
        self.services: dict[str, Mapping[str, grpc.RpcMethodHandler]] = {}

    def add_generic_rpc_handlers(self, _handlers: object) -> None:
        """Ignored: `add_servicer` registers a generic handler built from the wrapped handlers."""

    def add_registered_method_handlers(
        self, service: str, handlers: Mapping[str, grpc.RpcMethodHandler]
    ) -> None:
        self.services[service] = handlers


def _wrap(name: str, handler: grpc.RpcMethodHandler, on_undecodable: OnUndecodable) -> grpc.RpcMethodHandler:
    shape = (handler.request_streaming, handler.response_streaming)
    inner = {
        (False, False): handler.unary_unary,
        (False, True): handler.unary_stream,
        (True, False): handler.stream_unary,
        (True, True): handler.stream_stream,
    }[shape]
    deserialize = handler.request_deserializer

    def decode(data: bytes) -> Any:
        if deserialize is None:
            return data
        try:
            return deserialize(data)
        except Exception as exc:  # protobuf's DecodeError, or whatever a custom codec raises
            return _Undecodable(exc)

    def checked(request: Any, context: grpc.ServicerContext) -> Any:
        if isinstance(request, _Undecodable):
            on_undecodable(name, request.error, context)
        return request

    def behavior(request: Any, context: grpc.ServicerContext) -> Any:
        if handler.request_streaming:
            return inner((checked(r, context) for r in request), context)
        return inner(checked(request, context), context)

    return method_handler(shape, behavior, decode, handler.response_serializer)
