"""Trino's filter expressions over gRPC (`PruneRequest.filter`): the sidecar reads Trino's trees,
matches them against the events table's index expressions (nested calls, arithmetic over two
columns, IN lists) and prunes exactly as the same predicate in SQL does; a conjunct it cannot read
is left out (the table's every file kept), and the explain says so."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from builder import LakepruneTable
from pruner.service import codec
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2_grpc as spb_grpc
from pruner.sidecar import Sidecar
from tests.pruner.service.conftest import SCHEMA, address, make_config
from tests.support_events import DAYS

BIGINT = spb.ColumnType(kind=spb.TYPE_KIND_BIGINT, name="bigint")
STRING = spb.ColumnType(kind=spb.TYPE_KIND_STRING, name="string")
TIMESTAMP = spb.ColumnType(kind=spb.TYPE_KIND_TIMESTAMP, name="timestamp")
COLUMNS = {"id": BIGINT, "org_id": STRING, "ts": TIMESTAMP, "name": STRING}


def col(name: str) -> spb.Expression:
    return spb.Expression(type=COLUMNS[name], column=name)


def const(value: Any) -> spb.Expression:
    kind = STRING if isinstance(value, str) else BIGINT
    return spb.Expression(type=kind, constant=codec.encode_value(value))


def call(function: str, result: spb.ColumnType, *arguments: spb.Expression) -> spb.Expression:
    return spb.Expression(type=result, call=spb.ExpressionCall(function=function, arguments=arguments))


def boolean(function: str, *arguments: spb.Expression) -> spb.Expression:
    return call(function, spb.ColumnType(kind=spb.TYPE_KIND_BOOLEAN, name="boolean"), *arguments)


HOUR = call("hour", BIGINT, col("ts"))
CASES = [
    # Trino's tree, the same predicate in lakeprune SQL
    (boolean("$equal", HOUR, const(12)), "hour(ts) = 12"),
    (boolean("$greater_than_or_equal", const(3), HOUR), "hour(ts) <= 3"),
    (
        boolean(
            "$in",
            call("lower", STRING, call("substring", STRING, col("name"), const(1), const(2))),
            call("$array", STRING, const("mo"), const("xy")),
        ),
        "lower(substring(name, 1, 2)) IN ('mo', 'xy')",
    ),
    (
        boolean(
            "$equal",
            call(
                "$add",
                BIGINT,
                call("length", BIGINT, col("org_id")),
                call("$multiply", BIGINT, HOUR, const(10)),
            ),
            const(124),
        ),
        "hour(ts) * 10 + length(org_id) = 124",
    ),
    (
        boolean("$less_than", call("$subtract", BIGINT, const(1_000_000), col("id")), const(990_500)),
        "1000000 - id < 990500",
    ),
    (
        boolean(
            "$or",
            boolean("$equal", HOUR, const(1)),
            boolean("$in", HOUR, call("$array", BIGINT, const(2), const(3))),
        ),
        "hour(ts) IN (1, 2, 3)",
    ),
    (
        boolean("$equal", call("date_format", STRING, col("ts"), const("%Y-%m-%d")), const("2026-03-02")),
        "date_format(ts, '%Y-%m-%d') = '2026-03-02'",
    ),
]


@pytest.fixture(scope="module")
def events_stub(events_table: str) -> Iterator[Any]:
    with Sidecar(make_config(str(Path(events_table).parent))) as sidecar:
        assert sidecar.wait_ready(10)
        with grpc.insecure_channel(address(sidecar)) as channel:
            yield spb_grpc.PruningServiceStub(channel)


def prune(stub: Any, *conjuncts: spb.Expression) -> spb.PruneResponse:
    request = spb.PruneRequest(
        table=spb.TableName(schema=SCHEMA, table="events"),
        filter=spb.EngineFilter(engine=spb.FILTER_ENGINE_TRINO, conjuncts=conjuncts),
        explain=True,
    )
    return stub.Prune(request)


@pytest.mark.parametrize(("tree", "sql"), CASES, ids=[sql for _, sql in CASES])
def test_trino_trees_prune_as_their_sql_does(
    events_table: str, events_stub: Any, tree: spb.Expression, sql: str
) -> None:
    local = LakepruneTable(events_table).prune(sql)
    assert local.files_selected < local.files_total, f"{sql} prunes nothing: no evidence"
    remote = prune(events_stub, tree)
    assert {s.path for s in remote.splits} == {s.path for s in local.splits}


def test_unread_conjuncts_keep_every_file_and_are_named(events_table: str, events_stub: Any) -> None:
    upper = boolean("$equal", call("upper", STRING, col("name")), const("AL"))
    negated = boolean("$not", boolean("$equal", HOUR, const(3)))
    lower_range = boolean("$less_than", call("lower", STRING, col("name")), const("b"))
    response = prune(events_stub, upper, negated, lower_range)
    assert response.files_selected == response.files_total == 24 * DAYS
    notes = " ".join(response.widened)
    for reason in ("upper is not a function", "negated lower or time function", "lower compared"):
        assert reason in notes, notes


def test_a_read_conjunct_prunes_beside_unread_ones(events_stub: Any) -> None:
    upper = boolean("$equal", call("upper", STRING, col("name")), const("AL"))
    response = prune(events_stub, upper, boolean("$equal", HOUR, const(12)))
    assert response.files_selected == DAYS
