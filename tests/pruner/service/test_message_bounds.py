"""The bounds on what the sidecar says back hold for every error path: an oversized name or value
(hypothesis: up to 70,000 characters, among them characters that `repr` escapes) is put in every
name and value field of every gRPC method's request and of the Thrift methods that take names, and
each refusal's message must have at most `MESSAGE_CHARS` characters and repeat at most
`ECHO_CHARS` characters of what was sent (as sent, as its repr, or quoted SQL-style)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.Thrift import TApplicationException
from thrift.transport.TSocket import TSocket
from thrift.transport.TTransport import TFramedTransport

from pruner.bounded import ECHO_CHARS, MESSAGE_CHARS
from pruner.service.gen.lakeprune.v1 import predicate_pb2 as ppb
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2_grpc as spb_grpc
from pruner.sidecar import Sidecar
from pruner.thrift import idl
from tests.pruner.service.conftest import SCHEMA, TABLE, make_config
from tests.pruner.thrift.support import equatable_domain, thrift_range

pytestmark = pytest.mark.timeout(300)
# Characters `repr` shows as they are and characters it escapes (a quote, a backslash, a newline,
# NUL), a non-ASCII letter, and SQL's quote.
ALPHABET = "cz9 .'\"\\\né\x00"
NAME = spb.TableName(schema=SCHEMA, table=TABLE)
THRIFT_NAME = idl.SchemaTableName(SCHEMA, TABLE)
ALL = idl.TupleDomain(domains={})
NO_COLUMNS = idl.NullableColumnSet(None)
NO_TOKEN = idl.NullableToken(None)
Call = Callable[[], object]


def oversized() -> st.SearchStrategy[str]:
    """Text longer than an echo may be: a short random chunk repeated to a random length."""
    chunk = st.text(alphabet=ALPHABET, min_size=1, max_size=8)
    return st.builds(
        lambda part, length: (part * (length // len(part) + 1))[:length],
        chunk,
        st.integers(ECHO_CHARS + 1, 70_000),
    )


@pytest.fixture(scope="module")
def sidecar(lake: str) -> Iterator[Sidecar]:
    with Sidecar(make_config(lake, thrift_port=0)) as running:
        assert running.wait_ready(10)
        yield running


@pytest.fixture(scope="module")
def stub(sidecar: Sidecar) -> Iterator[Any]:
    with grpc.insecure_channel(f"127.0.0.1:{sidecar.grpc_port}") as channel:
        yield spb_grpc.PruningServiceStub(channel)


@pytest.fixture(scope="module")
def thrift(sidecar: Sidecar) -> Iterator[Any]:
    sock = TSocket("127.0.0.1", sidecar.thrift_port)
    sock.setTimeout(30_000)
    transport = TFramedTransport(sock)
    transport.open()
    yield idl.Service.Client(TBinaryProtocolAccelerated(transport))
    transport.close()


# The requests ------------------------------------------------------------------------------------


def one(value: ppb.Value) -> ppb.Domain:
    return ppb.Domain(values=ppb.ValueSet(discrete=ppb.DiscreteValues(values=[value])))


def ranged(low: ppb.Value, high: ppb.Value, inclusive: bool) -> ppb.Domain:
    range_ = ppb.Range(low=low, high=high, low_inclusive=inclusive, high_inclusive=inclusive)
    return ppb.Domain(values=ppb.ValueSet(ranges=ppb.RangeSet(ranges=[range_])))


def on(column: str, domain: ppb.Domain) -> ppb.TupleDomain:
    return ppb.TupleDomain(columns=[ppb.ColumnDomain(column=column, domain=domain)])


def grpc_calls(stub: Any, text: str) -> dict[str, Call]:
    """A call of every gRPC method with `text` in each of its request's name and value fields."""
    string = ppb.Value(string_value=text)
    predicates = {
        "unknown column": on(text, one(ppb.Value(integer_value=1))),
        "inverted range": on("token", ranged(ppb.Value(string_value=text + "z"), string, True)),
        "empty range": on("token", ranged(string, string, False)),
        "decimal text": on("amount", one(ppb.Value(decimal_value=ppb.DecimalValue(unscaled=text)))),
        "decimal digits": on(
            "amount", one(ppb.Value(decimal_value=ppb.DecimalValue(unscaled="9" * len(text))))
        ),
        "string value": on("token", one(string)),
    }
    names = {
        "schema": spb.TableName(schema=text, table=TABLE),
        "table": spb.TableName(schema=SCHEMA, table=text),
    }

    def prune(method: str, **fields: Any) -> Call:
        request = spb.PruneRequest(**{"table": NAME, **fields})
        if method == "PruneStream":
            return lambda: list(stub.PruneStream(request, timeout=30))
        return lambda: stub.Prune(request, timeout=30)

    calls: dict[str, Call] = {
        "ListTables schema": lambda: stub.ListTables(spb.ListTablesRequest(schema=text))
    }
    for field, name in names.items():
        calls[f"GetTable {field}"] = lambda name=name: stub.GetTable(spb.GetTableRequest(table=name))
        calls[f"GetHistory {field}"] = lambda name=name: stub.GetHistory(spb.GetHistoryRequest(table=name))
        calls[f"ListFiles {field}"] = lambda name=name: list(stub.ListFiles(spb.ListFilesRequest(table=name)))
        calls[f"GetTableStatistics {field}"] = lambda name=name: stub.GetTableStatistics(
            spb.GetTableStatisticsRequest(table=name)
        )
    calls["GetTable snapshot"] = lambda: stub.GetTable(spb.GetTableRequest(table=NAME, snapshot=text))
    calls["ListFiles snapshot"] = lambda: list(
        stub.ListFiles(spb.ListFilesRequest(table=NAME, snapshot=text))
    )
    calls["GetTableStatistics snapshot"] = lambda: stub.GetTableStatistics(
        spb.GetTableStatisticsRequest(table=NAME, snapshot=text)
    )
    for what, predicate in predicates.items():
        calls[f"GetTableStatistics {what}"] = lambda predicate=predicate: stub.GetTableStatistics(
            spb.GetTableStatisticsRequest(table=NAME, predicate=predicate)
        )
    for method in ("Prune", "PruneStream"):
        for field, name in names.items():
            calls[f"{method} {field}"] = prune(method, table=name)
        calls[f"{method} snapshot"] = prune(method, snapshot=text)
        for what, predicate in predicates.items():
            calls[f"{method} {what}"] = prune(method, predicate=predicate)
    return calls


def thrift_calls(client: Any, text: str) -> dict[str, Call]:
    """A call of every Thrift method that takes a name (and of GetSplits with long values), with
    `text` in each name and value."""
    split = client.trinoGetSplits(THRIFT_NAME, NO_COLUMNS, ALL, 1, NO_TOKEN).splits[0]
    inverted = idl.TupleDomain(
        domains={
            "token": idl.Domain(
                valueSet=idl.ValueSet(
                    rangeValueSet=idl.RangeValueSet(
                        ranges=[
                            thrift_range(text + "z", idl.Bound.EXACTLY, text, idl.Bound.EXACTLY, pa.string())
                        ]
                    )
                ),
                nullAllowed=False,
            )
        }
    )
    keys = idl.PageResult(columnBlocks=[], rowCount=0, nextToken=None)
    return {
        "ListTables schema": lambda: client.trinoListTables(idl.NullableSchemaName(text)),
        "GetTableMetadata schema": lambda: client.trinoGetTableMetadata(idl.SchemaTableName(text, TABLE)),
        "GetTableMetadata table": lambda: client.trinoGetTableMetadata(idl.SchemaTableName(SCHEMA, text)),
        "GetSplits schema": lambda: client.trinoGetSplits(
            idl.SchemaTableName(text, TABLE), NO_COLUMNS, ALL, 10, NO_TOKEN
        ),
        "GetSplits table": lambda: client.trinoGetSplits(
            idl.SchemaTableName(SCHEMA, text), NO_COLUMNS, ALL, 10, NO_TOKEN
        ),
        "GetSplits desired column": lambda: client.trinoGetSplits(
            THRIFT_NAME, idl.NullableColumnSet({text}), ALL, 10, NO_TOKEN
        ),
        "GetSplits value": lambda: client.trinoGetSplits(
            THRIFT_NAME,
            NO_COLUMNS,
            idl.TupleDomain(domains={"token": equatable_domain([text], pa.string())}),
            10,
            NO_TOKEN,
        ),
        "GetSplits column": lambda: client.trinoGetSplits(
            THRIFT_NAME,
            NO_COLUMNS,
            idl.TupleDomain(domains={text: equatable_domain([1], pa.int64())}),
            10,
            NO_TOKEN,
        ),
        "GetSplits inverted range": lambda: client.trinoGetSplits(
            THRIFT_NAME, NO_COLUMNS, inverted, 10, NO_TOKEN
        ),
        "GetIndexSplits table": lambda: client.trinoGetIndexSplits(
            idl.SchemaTableName(SCHEMA, text), ["id"], ["id"], keys, ALL, 10, NO_TOKEN
        ),
        "GetIndexSplits index column": lambda: client.trinoGetIndexSplits(
            THRIFT_NAME, [text, text], ["id"], keys, ALL, 10, NO_TOKEN
        ),
        "GetRows column": lambda: client.trinoGetRows(split.splitId, [text], 1 << 20, NO_TOKEN),
    }


# The bounds --------------------------------------------------------------------------------------


def refusal(call: Call) -> str | None:
    """The message a call was refused with; None when it was served."""
    try:
        call()
    except grpc.RpcError as exc:
        return exc.details() or ""
    except (idl.ServiceException, TApplicationException) as exc:
        return exc.message or ""
    return None


def assert_bounded(what: str, message: str, sent: str) -> None:
    assert len(message) <= MESSAGE_CHARS, f"{what}: a message of {len(message):,} characters"
    forms = (sent, repr(sent), sent.replace("'", "''"))
    for start in range(max(len(message) - ECHO_CHARS, 0)):
        window = message[start : start + ECHO_CHARS + 1]
        assert not any(window in form for form in forms), f"{what}: echoes over {ECHO_CHARS}: {message!r}"


@settings(deadline=None, max_examples=15, suppress_health_check=[HealthCheck.too_slow])
@given(text=oversized())
@example(text="c" * 65_536)
@example(text="'" * 1024)
def test_every_grpc_error_message_is_bounded(stub: Any, text: str) -> None:
    refused = 0
    for what, call in grpc_calls(stub, text).items():
        message = refusal(call)
        if message is not None:
            refused += 1
            assert_bounded(what, message, text)
    assert refused >= 25  # all but the calls that are served (a long string value, ...)


@settings(deadline=None, max_examples=15, suppress_health_check=[HealthCheck.too_slow])
@given(text=oversized())
@example(text="c" * 65_536)
def test_every_thrift_error_message_is_bounded(thrift: Any, text: str) -> None:
    refused = 0
    for what, call in thrift_calls(thrift, text).items():
        message = refusal(call)
        if message is not None:
            refused += 1
            assert_bounded(what, message, text)
    assert refused >= 5
