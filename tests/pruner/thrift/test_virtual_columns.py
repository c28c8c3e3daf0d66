"""Functional indexes through the Thrift connector: each is a hidden virtual column named after the
index in the table metadata; a constraint on it prunes splits (RFC-63 use case 1: the time-of-day
query reads 2 of 24 files per day) and GetRows computes its values with the registry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from pruner.thrift import idl
from tests.pruner.thrift.support import ranges_domain, sidecar_client, thrift_range
from tests.support_events import DAYS, ROWS_PER_HOUR

Client = Any
SCHEMA = "rfc63"
EVENTS = idl.SchemaTableName(SCHEMA, "events")


@pytest.fixture(scope="module")
def client(events_table: str) -> Iterator[Client]:
    with sidecar_client({SCHEMA: str(Path(events_table).parent)}) as connected:
        yield connected


def _splits(client: Client, constraint: idl.TupleDomain) -> list[idl.Split]:
    page = client.trinoGetSplits(
        EVENTS, idl.NullableColumnSet(None), constraint, 1000, idl.NullableToken(None)
    )
    assert page.nextToken is None
    return list(page.splits)


def _bigints(client: Client, split: idl.Split, column: str) -> list[int | None]:
    values: list[int | None] = []
    token = None
    while True:
        page = client.trinoGetRows(split.splitId, [column], 1 << 20, idl.NullableToken(token))
        data = page.columnBlocks[0].bigintData
        nulls = data.nulls or [False] * page.rowCount
        values += [None if n else v for n, v in zip(nulls, data.longs or [0] * page.rowCount, strict=True)]
        if page.nextToken is None:
            return values
        token = page.nextToken


def test_metadata_lists_hidden_virtual_columns(client: Client) -> None:
    metadata = client.trinoGetTableMetadata(EVENTS).tableMetadata
    columns = {c.name: c for c in metadata.columns}
    assert [c.name for c in metadata.columns if not c.hidden] == ["id", "org_id", "ts", "name", "day"]
    assert columns["hour_of_day"].hidden and columns["hour_of_day"].type == "bigint"
    assert columns["datestr"].hidden and columns["datestr"].type.startswith("varchar")


def test_time_of_day_prunes_and_filters(client: Client) -> None:
    hours = ranges_domain(thrift_range(12, 2, 13, 2, pa.int64()))
    selected = _splits(client, idl.TupleDomain({"hour_of_day": hours}))
    assert len(selected) == 2 * DAYS
    assert len(_splits(client, idl.TupleDomain({}))) == 24 * DAYS
    values = [v for s in selected for v in _bigints(client, s, "hour_of_day")]
    assert sorted(set(values)) == [12, 13] and len(values) == 2 * DAYS * ROWS_PER_HOUR


def test_an_expression_over_two_columns_prunes_and_is_computed(client: Client) -> None:
    # hour_org is (10 * hour(ts)) + length(org_id): org ids are `org0` .. `org3` (length 4), the
    # three events moved to 06:59 are `org9`; 124 is hour 12.
    selected = _splits(
        client, idl.TupleDomain({"hour_org": ranges_domain(thrift_range(124, 2, 124, 2, pa.int64()))})
    )
    assert len(selected) == DAYS
    values = [v for s in selected for v in _bigints(client, s, "hour_org")]
    assert set(values) == {124} and len(values) == DAYS * ROWS_PER_HOUR
