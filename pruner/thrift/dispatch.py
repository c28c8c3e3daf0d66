"""From a call to the message that answers it: the method is looked up in the method table
(`methods`), its argument struct decoded, the `ConnectorService` called with `calling_engine` set,
and the outcome encoded (`messages`). A failed call is answered as the sidecar's one error map
(`pruner.serving.errors.classify`) decides: UNAVAILABLE (storage trouble) becomes the method's
retryable `ServiceException`, any other request error a final one, and INTERNAL (a bug) is logged
with its traceback and answered with `INTERNAL_ERROR`, no internals included; an unknown method is
`TApplicationException(UNKNOWN_METHOD)` and arguments that do not decode `PROTOCOL_ERROR`. Text
from the caller is shortened in every message and log line (`pruner.bounded`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextvars import ContextVar

from pruner.bounded import shorten
from pruner.serving.errors import Failure, Status
from pruner.thrift import idl
from pruner.thrift.messages import Request, application_error, encode_page_reply, encode_struct, one_line
from pruner.thrift.methods import ConnectorService, find_method

_log = logging.getLogger(__name__)

# The engine whose call is being handled ("trino" or "presto", from the method prefix), for the few
# answers that differ between them (Presto 0.287 names Trino's timestamp(3) `timestamp`).
calling_engine: ContextVar[str] = ContextVar("calling_engine", default="trino")


def reply(
    request: Request, handler: ConnectorService, classify: Callable[[BaseException], Failure]
) -> list[bytes]:
    """The encoded message that answers `request`. Raises only for a handler that breaks its
    contract (no result, or bytes from a method that does not return a page)."""
    name, seqid = request.name, request.seqid
    found = find_method(name)
    if found is None:
        _log.warning("unknown method %r called", shorten(name))
        return application_error(
            name, seqid, idl.TApplicationException.UNKNOWN_METHOD, f"unknown method {shorten(name)}"
        )
    engine, method = found
    args = method.args()
    try:
        args.read(request.reader)
        request.reader.readMessageEnd()
    except Exception as exc:
        _log.warning("cannot decode the arguments of %s: %s", name, shorten(exc))
        return application_error(
            name,
            seqid,
            idl.TApplicationException.PROTOCOL_ERROR,
            f"cannot decode the arguments of {name}: {shorten(exc)}",
        )
    result = method.result()
    engine_token = calling_engine.set(engine)
    try:
        value = method.call(handler, args)
    except idl.ServiceException as exc:
        result.ex1 = exc
    except Exception as exc:
        failure = classify(exc)
        if failure.status == Status.INTERNAL:
            _log.exception("%s failed", name)
            return application_error(
                name, seqid, idl.TApplicationException.INTERNAL_ERROR, f"{name} failed: {failure.message}"
            )
        retryable = failure.status == Status.UNAVAILABLE
        if retryable:
            _log.warning("%s failed, the engine may retry: %s", name, failure.message)
        else:
            _log.info("%s refused (%s): %s", name, failure.status, failure.message)
        result.ex1 = idl.ServiceException(message=one_line(failure.message), retryable=retryable)
    else:
        if value is None:
            raise TypeError(f"the handler returned no result for {name}")
        if isinstance(value, bytes):
            if not method.returns_page:
                raise TypeError(f"the handler returned bytes for {name}")
            return encode_page_reply(name, seqid, method.success_field, value)
        result.success = value
    finally:
        calling_engine.reset(engine_token)
    return encode_struct(name, idl.TMessageType.REPLY, seqid, result)
