"""Hostile input on the gRPC port: names and values of 1 KB, 64 KB and 1 MB, a hundred calls of
unknown methods, a long method path, bodies that are not protobuf, with and without a token, and
errors that would name the server's paths. Each gets its right status code and a bounded message,
the log lines stay short, `/metrics` keeps its size, and a normal Prune timed alongside keeps its
latency. Attacks run in an `Attacker` process (`tests/support_hostile.py`), as a remote client's
would; the `attack_*` functions are what it runs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.service import codec
from pruner.service.gen.lakeprune.v1 import predicate_pb2 as ppb
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2_grpc as spb_grpc
from pruner.serving.config import Security
from pruner.sidecar import Sidecar
from tests.pruner.service.conftest import SCHEMA, TABLE, StartSidecar, address
from tests.support_hostile import (
    ECHO_LIMIT,
    SIZES,
    Attacker,
    assert_lines_bounded,
    metrics_lines,
    server_log,
)

pytestmark = pytest.mark.timeout(120)
TOKEN = "hostile-test-token"
AUTH = (("authorization", f"Bearer {TOKEN}"),)
TABLE_NAME = spb.TableName(schema=SCHEMA, table=TABLE)
WHERE = TupleDomain.with_domains(
    {"seq": Domain(SortedRangeSet.of_ranges(Range(100, True, 160, False)), False)}
)
UNKNOWN_CALLS = 100  # each another label if names were labels: 25 lines is the bound
# Bodies that no protobuf message parses: an unterminated varint tag, and a length-delimited
# field 1 announcing more bytes than follow.
GARBAGE = [b"\xff" * 64, b"\x0a\xff\xff\xff\x0f" + b"x" * 32]
METHODS = ["ListTables", "GetTable", "Prune", "PruneStream"]
Outcome = tuple[grpc.StatusCode, str]
Connect = Callable[[Sidecar], grpc.Channel]


@pytest.fixture(scope="module")
def attacker() -> Iterator[Attacker]:
    running = Attacker(__name__)
    yield running
    running.close()


@pytest.fixture
def open_sidecar(start_sidecar: StartSidecar, lake: str) -> Sidecar:
    return start_sidecar(lake, metrics_port=0)


@pytest.fixture
def guarded(start_sidecar: StartSidecar, lake: str) -> Sidecar:
    return start_sidecar(lake, metrics_port=0, security=Security(token=TOKEN))


@pytest.fixture
def connect() -> Iterator[Connect]:
    """Channels to sidecars, closed after the test."""
    opened: list[grpc.Channel] = []

    def channel(sidecar: Sidecar) -> grpc.Channel:
        opened.append(grpc.insecure_channel(address(sidecar)))
        return opened[-1]

    yield channel
    for channel_ in opened:
        channel_.close()


def normal_prune(channel: grpc.Channel, metadata: Any = ()) -> Callable[[], object]:
    """A Prune on the shared small table that keeps some files."""
    stub = spb_grpc.PruningServiceStub(channel)
    request = spb.PruneRequest(table=TABLE_NAME, predicate=codec.encode_tuple_domain(WHERE))

    def prune() -> object:
        response = stub.Prune(request, metadata=metadata, timeout=30)
        assert len(response.splits) > 0
        return response

    return prune


def outcome(call: Callable[[], object]) -> Outcome:
    """The status code and message a call that must fail ends with."""
    with pytest.raises(grpc.RpcError) as raised:
        call()
    return raised.value.code(), raised.value.details() or ""


def flat(rounds: list[list[Outcome]]) -> list[Outcome]:
    return [o for round_ in rounds for o in round_]


# What the attacker runs ------------------------------------------------------------------------


REFLECTION = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"


def call_raw(channel: grpc.Channel, method: str, body: bytes, metadata: Any = ()) -> Outcome:
    """Call `method` with `body` as it is, unparsed; how it must fail."""
    path = method if method.startswith("/") else f"/lakeprune.v1.PruningService/{method}"
    if method == "PruneStream":
        return outcome(lambda: list(channel.unary_stream(path)(body, metadata=metadata, timeout=30)))
    if method == REFLECTION:  # a stream of requests
        return outcome(lambda: list(channel.stream_stream(path)(iter([body]), metadata=metadata, timeout=30)))
    return outcome(lambda: channel.unary_unary(path)(body, metadata=metadata, timeout=30))


def attack_long_names(target: str, size: int) -> list[Outcome]:
    names = [spb.TableName(schema=SCHEMA, table="t" * size), spb.TableName(schema="s" * size, table=TABLE)]
    found = []
    with grpc.insecure_channel(target) as channel:
        stub = spb_grpc.PruningServiceStub(channel)
        for name in names:
            found.append(outcome(lambda name=name: stub.GetTable(spb.GetTableRequest(table=name))))
            found.append(outcome(lambda name=name: stub.Prune(spb.PruneRequest(table=name))))
        found.append(outcome(lambda: stub.ListTables(spb.ListTablesRequest(schema="s" * size))))
    return found


def token_request(value: str) -> spb.PruneRequest:
    domain = TupleDomain.with_domains({"token": Domain.single_value(value)})
    return spb.PruneRequest(table=TABLE_NAME, predicate=codec.encode_tuple_domain(domain))


def attack_long_values(target: str, size: int) -> tuple[int, Outcome]:
    """A long value (served) and a long unknown column name (refused)."""
    one = ppb.Domain(values=ppb.ValueSet(discrete=ppb.DiscreteValues(values=[ppb.Value(integer_value=1)])))
    unknown = ppb.TupleDomain(columns=[ppb.ColumnDomain(column="c" * size, domain=one)])
    with grpc.insecure_channel(target) as channel:
        stub = spb_grpc.PruningServiceStub(channel)
        answer = stub.Prune(token_request("v" * size), timeout=30)
        refused = outcome(lambda: stub.Prune(spb.PruneRequest(table=TABLE_NAME, predicate=unknown)))
    return answer.files_total, refused


def attack_unknown_methods(target: str) -> list[Outcome]:
    """`UNKNOWN_CALLS` calls of methods that do not exist, each of another name, then one with a
    7 KB method path."""
    with grpc.insecure_channel(target) as channel:
        names = (f"/lakeprune.v1.PruningService/Nope{i}" for i in range(UNKNOWN_CALLS))
        outcomes = [call_raw(channel, name, b"") for name in names]
        outcomes.append(call_raw(channel, "/x." + "y" * 7000 + "/Z", b""))
    return outcomes


def attack_garbage(target: str, method: str, metadata: Any) -> list[Outcome]:
    with grpc.insecure_channel(target) as channel:
        return [call_raw(channel, method, body, m) for body in GARBAGE for m in metadata]


# Long names and values ---------------------------------------------------------------------------


@pytest.mark.parametrize("size", SIZES)
def test_long_names_are_not_found_before_storage(
    open_sidecar: Sidecar, connect: Connect, attacker: Attacker, size: int
) -> None:
    with server_log() as log:
        rounds = attacker.served_throughout(
            normal_prune(connect(open_sidecar)), attack_long_names, address(open_sidecar), size
        )
    for code, details in flat(rounds):
        assert code == grpc.StatusCode.NOT_FOUND, details
        assert len(details) <= ECHO_LIMIT and " chars)" in details
    assert "at most 128 characters" in rounds[0][0][1]
    assert_lines_bounded(log)


def test_a_table_name_too_long_for_the_file_system_is_not_found(
    open_sidecar: Sidecar, connect: Connect
) -> None:
    """255 bytes is the usual limit of one path component: the name check comes first."""
    stub = spb_grpc.PruningServiceStub(connect(open_sidecar))
    for length in (129, 300):
        name = spb.TableName(schema=SCHEMA, table="a" * length)
        code, details = outcome(lambda name=name: stub.Prune(spb.PruneRequest(table=name)))
        assert code == grpc.StatusCode.NOT_FOUND and "at most 128 characters" in details, details


@pytest.mark.parametrize("size", SIZES)
def test_long_values_and_column_names(
    open_sidecar: Sidecar, connect: Connect, attacker: Attacker, size: int
) -> None:
    channel = connect(open_sidecar)
    # the first prune on `token` reads its bloom filters: a cost of the column, not of the attack
    spb_grpc.PruningServiceStub(channel).Prune(token_request("warm"))
    with server_log() as log:
        rounds = attacker.served_throughout(
            normal_prune(channel), attack_long_values, address(open_sidecar), size
        )
    for files_total, (code, details) in rounds:
        assert files_total > 0  # served (no file holds the value)
        assert code == grpc.StatusCode.INVALID_ARGUMENT and len(details) <= ECHO_LIMIT, details
    assert_lines_bounded(log)


# Unknown methods and long method paths -----------------------------------------------------------


def test_unknown_methods_do_not_grow_the_metrics(
    guarded: Sidecar, connect: Connect, attacker: Attacker
) -> None:
    """Refused without a token, a hundred method names share the label `other`, and so does a
    7 KB method path; with the token they are UNIMPLEMENTED and not counted at all."""
    channel = connect(guarded)
    normal = normal_prune(channel, AUTH)
    normal()  # the labels of normal calls exist before counting
    before = metrics_lines(guarded.metrics_port)
    with server_log() as log:
        rounds = attacker.served_throughout(normal, attack_unknown_methods, address(guarded))
    after = metrics_lines(guarded.metrics_port)
    assert {code for code, _ in flat(rounds)} == {grpc.StatusCode.UNAUTHENTICATED}
    # one new label set, `other`: its counter, its histogram and their creation times
    assert after - before <= 25, f"/metrics grew from {before} to {after} lines"
    other = {"api": "grpc", "method": "other", "status": "unauthenticated"}
    assert guarded.metrics.registry.get_sample_value("lakeprune_requests_total", other) == len(flat(rounds))
    assert_lines_bounded(log)
    code, _ = call_raw(channel, "/lakeprune.v1.PruningService/Nope", b"", AUTH)
    assert code == grpc.StatusCode.UNIMPLEMENTED and metrics_lines(guarded.metrics_port) == after


# Bodies that do not decode -----------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_garbage_bodies_are_invalid_argument(
    open_sidecar: Sidecar, connect: Connect, attacker: Attacker, method: str
) -> None:
    rounds = attacker.served_throughout(
        normal_prune(connect(open_sidecar)), attack_garbage, address(open_sidecar), method, [()]
    )
    for code, details in flat(rounds):
        assert code == grpc.StatusCode.INVALID_ARGUMENT, details
        assert f"not a valid {method} request" in details
    labels = {"api": "grpc", "method": method, "status": "invalid_argument"}
    counted = open_sidecar.metrics.registry.get_sample_value("lakeprune_requests_total", labels)
    assert counted == len(flat(rounds))


@pytest.mark.parametrize("method", ["/grpc.health.v1.Health/Check", REFLECTION])
def test_garbage_bodies_to_health_and_reflection_are_invalid_argument(
    open_sidecar: Sidecar, connect: Connect, method: str
) -> None:
    channel = connect(open_sidecar)
    for body in GARBAGE:
        code, details = call_raw(channel, method, body)
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "not a valid" in details, details


@pytest.mark.parametrize("method", METHODS)
def test_garbage_bodies_with_a_token_configured(
    guarded: Sidecar, connect: Connect, attacker: Attacker, method: str
) -> None:
    """Without the token the body is never parsed: UNAUTHENTICATED; with it, INVALID_ARGUMENT."""
    rounds = attacker.served_throughout(
        normal_prune(connect(guarded), AUTH), attack_garbage, address(guarded), method, [(), AUTH]
    )
    for round_ in rounds:
        codes = [code for code, _ in round_]
        assert codes == [grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.INVALID_ARGUMENT] * len(GARBAGE)


# Server paths ------------------------------------------------------------------------------------


def test_errors_and_explain_name_schemas_not_paths(
    start_sidecar: StartSidecar, connect: Connect, table_copy: str
) -> None:
    root = str(Path(table_copy).parent)
    stub = spb_grpc.PruningServiceStub(connect(start_sidecar(root)))

    missing = outcome(lambda: stub.Prune(spb.PruneRequest(table=TABLE_NAME, snapshot="20000101000000000")))
    assert missing == (
        grpc.StatusCode.NOT_FOUND,
        f"no completed instant 20000101000000000 in table {SCHEMA}/{TABLE}",
    )

    for index_file in (Path(table_copy) / ".lakeprune" / "metadata" / "column_stats").iterdir():
        index_file.write_bytes(b"garbage")
    request = spb.PruneRequest(table=TABLE_NAME, predicate=codec.encode_tuple_domain(WHERE), explain=True)
    explained = stub.Prune(request)
    texts = [s.fallback or s.skipped for s in explained.explain if s.fallback or s.skipped]
    assert any(f"{SCHEMA}/{TABLE}/.lakeprune/metadata/column_stats" in t for t in texts), texts
    assert all(root not in t for t in texts), texts
    assert all(s.path.startswith(root) for s in explained.splits)  # engines read these files

    (Path(table_copy) / ".lakeprune" / "index_defs.json").write_text("{not json")
    code, details = outcome(lambda: stub.GetTable(spb.GetTableRequest(table=TABLE_NAME)))
    assert code == grpc.StatusCode.UNAVAILABLE
    assert details.startswith(f"{SCHEMA}/{TABLE}/.lakeprune/index_defs.json is corrupt"), details
