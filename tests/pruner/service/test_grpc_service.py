"""The gRPC service through a real channel: every RPC, health, reflection, and every error path with
its status code and message — after each of which the server still answers a good call."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from pruner.client import PruningClient, ServiceError
from pruner.planner.planner import Planner
from pruner.planner.prune import prune
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.service import codec
from pruner.service.gen.lakeprune.v1 import predicate_pb2 as ppb
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2_grpc as spb_grpc
from pruner.serving.config import Limits
from pruner.sidecar import Sidecar
from pruner.table.table import LakeTable
from tests.pruner.planner.conftest import Oracle
from tests.pruner.service.conftest import SCHEMA, TABLE, StartSidecar, address, make_config

GOOD = TupleDomain.with_domains(
    {
        "seq": Domain(SortedRangeSet.of_ranges(Range(100, True, 160, False)), False),
        "region": Domain.single_value("eu"),
    }
)


def table_name(table: str = TABLE, schema: str = SCHEMA) -> spb.TableName:
    return spb.TableName(schema=schema, table=table)


def prune_request(predicate: TupleDomain | ppb.TupleDomain | None = None, **fields: Any) -> spb.PruneRequest:
    if isinstance(predicate, TupleDomain):
        predicate = codec.encode_tuple_domain(predicate)
    fields.setdefault("table", table_name())
    return spb.PruneRequest(predicate=predicate, **fields)


def column(name: str, domain: ppb.Domain) -> ppb.TupleDomain:
    return ppb.TupleDomain(columns=[ppb.ColumnDomain(column=name, domain=domain)])


def discrete(*values: ppb.Value) -> ppb.Domain:
    return ppb.Domain(values=ppb.ValueSet(discrete=ppb.DiscreteValues(values=values)))


def ranges(*items: ppb.Range) -> ppb.Domain:
    return ppb.Domain(values=ppb.ValueSet(ranges=ppb.RangeSet(ranges=items)))


def failing(call: Callable[[], Any]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as raised:
        call()
    return raised.value


def expect_good_call(stub: Any, location: str) -> None:
    """The server still serves, and correctly."""
    response = stub.Prune(prune_request(GOOD), timeout=30)
    expected = prune(LakeTable.open(location), GOOD)
    assert [s.path for s in response.splits] == [s.path for s in expected.splits]


# The RPCs ------------------------------------------------------------------------------------------


def test_list_tables(client: PruningClient, stub: Any) -> None:
    assert client.list_tables() == client.list_tables(SCHEMA)
    assert [(t.schema, t.table) for t in client.list_tables()] == [(SCHEMA, TABLE)]
    assert client.schemas() == [SCHEMA]
    error = failing(lambda: stub.ListTables(spb.ListTablesRequest(schema="nope")))
    assert error.code() == grpc.StatusCode.NOT_FOUND and "schema 'nope' does not exist" in error.details()


def test_get_table(client: PruningClient, indexed_table: str) -> None:
    info = client.get_table(SCHEMA, TABLE)
    table = LakeTable.open(indexed_table)
    assert info.schema == table.config.schema
    assert (
        info.record_key == ("id",) and info.partition_columns == ("region",) and info.ordering_field is None
    )
    assert info.latest_snapshot == table.snapshot().instant
    indexes = {i.name: i for i in info.indexes}
    assert set(indexes) == {"files", "record_index", "stats", "pstats", "bf", "by_hot_day"}
    assert indexes["by_hot_day"].type == "secondary_index" and indexes["by_hot_day"].columns == ("hot", "day")
    assert indexes["bf"].type == "bloom_filters" and indexes["bf"].columns == ("token", "id")
    assert indexes["bf"].options == {"fpp": "0.01"}
    assert all(i.state == "ready" and i.complete_up_to == info.latest_snapshot for i in info.indexes)


def test_prune_matches_the_in_process_planner(client: PruningClient, indexed_table: str) -> None:
    expected = prune(LakeTable.open(indexed_table), GOOD)
    result = client.prune(SCHEMA, TABLE, GOOD)
    assert result.splits == expected.splits
    assert (result.snapshot, result.files_total, result.predicate) == (
        expected.snapshot,
        expected.files_total,
        expected.predicate,
    )
    assert result.explain == [] and result.fallbacks == 0
    explained = client.prune(SCHEMA, TABLE, GOOD, explain=True)
    assert [(s.step, s.files_in, s.files_out, s.skipped) for s in explained.explain] == [
        (s.step, s.files_in, s.files_out, s.skipped) for s in expected.explain
    ]
    assert client.prune(SCHEMA, TABLE, "seq >= 100 AND seq < 160 AND region = 'eu'").splits == expected.splits


def test_prune_of_an_older_snapshot(client: PruningClient, indexed_table: str) -> None:
    table = LakeTable.open(indexed_table)
    instant = table.timeline.completed()[1].timestamp
    expected = prune(table, GOOD, snapshot=instant)
    result = client.prune(SCHEMA, TABLE, GOOD, snapshot=instant)
    assert result.snapshot == instant and result.splits == expected.splits


def test_prune_everything_and_nothing(client: PruningClient, stub: Any, indexed_table: str) -> None:
    everything = stub.Prune(prune_request(None))
    assert everything.files_selected == everything.files_total == len(everything.splits) > 0
    assert client.prune(SCHEMA, TABLE, TupleDomain.none()).splits == []
    assert client.prune(SCHEMA, TABLE, TupleDomain.all()).files_selected == everything.files_total


# Health and reflection ---------------------------------------------------------------------------------


def test_health_is_serving_once_the_catalog_is_loaded(channel: grpc.Channel) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", "lakeprune.v1.PruningService"):
        response = health.Check(health_pb2.HealthCheckRequest(service=service))
        assert response.status == health_pb2.HealthCheckResponse.SERVING


def test_reflection_lists_the_services(channel: grpc.Channel) -> None:
    reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
    requests = [
        reflection_pb2.ServerReflectionRequest(list_services=""),
        reflection_pb2.ServerReflectionRequest(file_containing_symbol="lakeprune.v1.PruningService"),
    ]
    listed, described = list(reflection.ServerReflectionInfo(iter(requests)))
    names = {s.name for s in listed.list_services_response.service}
    assert names == {
        "lakeprune.v1.PruningService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
    }
    assert described.file_descriptor_response.file_descriptor_proto


# Error paths: each has its status and message, and the server keeps serving ------------------------------

BAD_REQUESTS: list[tuple[str, spb.PruneRequest, grpc.StatusCode, str]] = [
    (
        "unknown table",
        prune_request(table=table_name("nope")),
        grpc.StatusCode.NOT_FOUND,
        "table lake.nope does not exist",
    ),
    (
        "unknown schema",
        prune_request(table=table_name(schema="x")),
        grpc.StatusCode.NOT_FOUND,
        "schema 'x' does not exist",
    ),
    (
        "path as table",
        prune_request(table=table_name("../events")),
        grpc.StatusCode.NOT_FOUND,
        "does not exist",
    ),
    (
        "absolute path",
        prune_request(table=table_name("/etc/passwd")),
        grpc.StatusCode.NOT_FOUND,
        "does not exist",
    ),
    ("nested path", prune_request(table=table_name("a/b")), grpc.StatusCode.NOT_FOUND, "does not exist"),
    ("no table", spb.PruneRequest(), grpc.StatusCode.INVALID_ARGUMENT, "the request must name a table"),
    (
        "unknown column",
        prune_request(column("nope", discrete(ppb.Value(integer_value=1)))),
        grpc.StatusCode.INVALID_ARGUMENT,
        "unknown column 'nope' (columns: id, region,",
    ),
    (
        "type mismatch",
        prune_request(column("id", discrete(ppb.Value(string_value="1")))),
        grpc.StatusCode.INVALID_ARGUMENT,
        "column id (bigint) takes integer_value, got string_value",
    ),
    (
        "value without a kind",
        prune_request(column("day", discrete(ppb.Value()))),
        grpc.StatusCode.INVALID_ARGUMENT,
        "column day (date) takes date_days, got no value",
    ),
    (
        "too many decimal digits",
        prune_request(
            column("amount", discrete(ppb.Value(decimal_value=ppb.DecimalValue(unscaled="1234", scale=3))))
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "column amount: cannot use Decimal('1.234') as a decimal(10,2) value: has more than 2 fractional",
    ),
    (
        "inverted range",
        prune_request(
            column("seq", ranges(ppb.Range(low=ppb.Value(integer_value=9), high=ppb.Value(integer_value=3))))
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "column seq: inverted range, low 9 > high 3",
    ),
    (
        "empty single-value range",
        prune_request(
            column(
                "seq",
                ranges(
                    ppb.Range(
                        low=ppb.Value(integer_value=3), high=ppb.Value(integer_value=3), low_inclusive=True
                    )
                ),
            )
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "column seq: empty range at 3",
    ),
    (
        "empty IN list",
        prune_request(column("id", discrete())),
        grpc.StatusCode.INVALID_ARGUMENT,
        "column id: empty IN list",
    ),
    (
        "NaN",
        prune_request(column("score", discrete(ppb.Value(double_value=float("nan"))))),
        grpc.StatusCode.INVALID_ARGUMENT,
        "column score: NaN cannot be a value",
    ),
    (
        "duplicate column",
        prune_request(
            ppb.TupleDomain(
                columns=[ppb.ColumnDomain(column="id", domain=discrete(ppb.Value(integer_value=1)))] * 2
            )
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "column id has more than one domain",
    ),
    (
        "domain without a value set",
        prune_request(column("id", ppb.Domain(null_allowed=True))),
        grpc.StatusCode.INVALID_ARGUMENT,
        "column id: the domain has no value set",
    ),
    (
        "bad snapshot",
        prune_request(None, snapshot="yesterday"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "is not an instant",
    ),
    (
        "unknown snapshot",
        prune_request(None, snapshot="20000101000000000"),
        grpc.StatusCode.NOT_FOUND,
        "no completed instant 20000101000000000",
    ),
]


@pytest.mark.parametrize(
    ("case", "request_", "code", "message"), BAD_REQUESTS, ids=[c[0] for c in BAD_REQUESTS]
)
def test_bad_requests_get_a_status_and_a_message(
    stub: Any, indexed_table: str, case: str, request_: spb.PruneRequest, code: grpc.StatusCode, message: str
) -> None:
    for method in (stub.Prune, lambda r: list(stub.PruneStream(r))):
        error = failing(lambda method=method: method(request_))
        assert error.code() == code, case
        assert message in error.details()
    expect_good_call(stub, indexed_table)


def test_get_table_errors(stub: Any, indexed_table: str) -> None:
    error = failing(lambda: stub.GetTable(spb.GetTableRequest(table=table_name("missing"))))
    assert (
        error.code() == grpc.StatusCode.NOT_FOUND and error.details() == "table lake.missing does not exist"
    )
    error = failing(lambda: stub.GetTable(spb.GetTableRequest()))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    expect_good_call(stub, indexed_table)


def test_an_in_list_of_100000_values_is_accepted_and_correct(
    stub: Any, oracle: Oracle, start_sidecar: StartSidecar, lake: str
) -> None:
    """An IN list of 100,000 keys (about 300 of them in the table) never loses a file holding one
    of them. By default the cost guard skips the record index for it (so many keys are expected to
    be in every file) and says so; with the guard off and no deadline pressure, the record index
    narrows it to exactly the files holding those keys and no later step removes one of them."""
    keys = list(range(0, 200_000, 2))
    predicate = TupleDomain.with_domains({"id": Domain.multiple_values(keys)})
    matching = oracle.files_matching(predicate)
    guarded = stub.Prune(prune_request(predicate, explain=True), timeout=120)
    assert {s.path for s in guarded.splits} >= matching
    assert any(step.step == "record_index" and step.skipped for step in guarded.explain)
    unguarded = start_sidecar(lake, limits=Limits(lookup_min_pruned_share=0.0, prune_deadline_seconds=100.0))
    with grpc.insecure_channel(address(unguarded)) as channel:
        response = spb_grpc.PruningServiceStub(channel).Prune(prune_request(predicate), timeout=120)
    selected = {s.path for s in response.splits}
    assert selected == matching
    assert 0 < len(selected) < response.files_total


def test_an_in_list_beyond_the_limit_is_pruned_by_its_span_and_says_so(
    stub: Any, oracle: Oracle, indexed_table: str
) -> None:
    """Size is never malformed: an IN list beyond limits.max_discrete_values is widened by the
    binding to the span of its values, the files holding any of them are kept, and the response
    says where it widened."""
    keys = [k * 3 for k in range(100_001)]
    request = prune_request(column("id", discrete(*(ppb.Value(integer_value=k) for k in keys))))
    response = stub.Prune(request, timeout=60)
    assert {s.path for s in response.splits} >= oracle.files_matching(
        TupleDomain.with_domains({"id": Domain.multiple_values(keys)})
    )
    assert list(response.widened) == [
        "id: 100,001 values exceed limits.max_discrete_values (100,000); pruned by their span "
        "[0, 300000] instead"
    ]
    expect_good_call(stub, indexed_table)


def test_a_storage_failure_is_unavailable(start_sidecar: StartSidecar, table_copy: str) -> None:
    sidecar = start_sidecar(str(Path(table_copy).parent))
    with PruningClient(address(sidecar)) as client:
        assert client.prune(SCHEMA, TABLE, GOOD).files_selected > 0
        (Path(table_copy) / ".lakeprune" / "table.json").write_text("{not json")
        (Path(table_copy) / ".lakeprune" / "timeline" / "20000101000000000.commit.requested").write_text("")
        with pytest.raises(ServiceError) as raised:
            client.prune(SCHEMA, TABLE, GOOD)
        assert raised.value.code == grpc.StatusCode.UNAVAILABLE and "table.json" in raised.value.details
        assert client.list_tables() == [client.list_tables()[0]]


# Deadlines ---------------------------------------------------------------------------------------------


@pytest.fixture
def slow_planner(monkeypatch: pytest.MonkeyPatch) -> None:
    """Prunes of `slow` (an IN list on flag = true only) take two seconds."""
    original = Planner.plan

    def slow(self: Planner, predicate: TupleDomain, *rest: Any) -> Any:
        if predicate.domain("flag") == Domain.single_value(True):
            time.sleep(2)
        return original(self, predicate, *rest)

    monkeypatch.setattr(Planner, "plan", slow)


SLOW = TupleDomain.with_domains({"flag": Domain.single_value(True)})


@pytest.mark.usefixtures("slow_planner")
def test_the_callers_deadline_is_honoured(stub: Any, indexed_table: str) -> None:
    started = time.perf_counter()
    error = failing(lambda: stub.Prune(prune_request(SLOW), timeout=0.3))
    assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert time.perf_counter() - started < 1.5
    expect_good_call(stub, indexed_table)


@pytest.mark.usefixtures("slow_planner")
def test_the_configured_timeout_applies_when_the_caller_sets_none(
    start_sidecar: StartSidecar, lake: str, indexed_table: str
) -> None:
    sidecar = start_sidecar(lake, limits=Limits(request_timeout_seconds=0.3))
    with PruningClient(address(sidecar), timeout=None) as client:
        started = time.perf_counter()
        with pytest.raises(ServiceError) as raised:
            client.prune(SCHEMA, TABLE, SLOW)
        assert raised.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
        assert "did not finish within its deadline (0.3 s)" in raised.value.details
        assert time.perf_counter() - started < 1.5
    # Still serving; a caller's own deadline replaces the configured one (a cold prune on a busy
    # machine can take longer than 0.3 s).
    with PruningClient(address(sidecar), timeout=30) as client:
        assert client.prune(SCHEMA, TABLE, GOOD).splits == prune(LakeTable.open(indexed_table), GOOD).splits


# Values of every type travel exactly ----------------------------------------------------------------------


def test_values_of_every_column_type(client: PruningClient, indexed_table: str) -> None:
    predicate = TupleDomain.with_domains(
        {
            "amount": Domain.multiple_values([Decimal("1.50"), Decimal("3.07")]),
            "day": Domain(SortedRangeSet.of_ranges(Range(date(2026, 1, 3), False, None, False)), True),
            "flag": Domain.single_value(False),
        }
    )
    expected = prune(LakeTable.open(indexed_table), predicate)
    result = client.prune(SCHEMA, TABLE, predicate, explain=True)
    assert result.predicate == expected.predicate and result.splits == expected.splits


def test_a_sidecar_refuses_new_calls_after_stop(lake: str) -> None:
    sidecar = Sidecar(make_config(lake)).start()
    assert sidecar.wait_ready(10)
    with PruningClient(address(sidecar), timeout=5) as client:
        assert client.list_tables()
        sidecar.stop(1)
        with pytest.raises(ServiceError) as raised:
            client.list_tables()
        assert raised.value.code == grpc.StatusCode.UNAVAILABLE


def test_an_unexpected_error_is_internal_and_logged(
    stub: Any, indexed_table: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(self: Planner, predicate: TupleDomain, *rest: Any) -> Any:
        raise RuntimeError("a bug, with /secret/paths in it")

    monkeypatch.setattr(Planner, "plan", broken)
    with caplog.at_level(logging.ERROR, logger="pruner.service"):
        error = failing(lambda: stub.Prune(prune_request(GOOD)))
    assert error.code() == grpc.StatusCode.INTERNAL
    assert error.details() == "internal error (RuntimeError); see the sidecar's log"
    assert "Prune failed" in caplog.text and "/secret/paths" in caplog.text
    monkeypatch.undo()
    expect_good_call(stub, indexed_table)
