"""The connector service end to end in-process: a real Thrift client over framed TCP against the
endpoint `lakeprune serve` runs, over the end-to-end warehouse. Metadata, pruned and paged splits,
rows paged by maxBytes, count(*), index lookups, every type against DuckDB, and tampered ids."""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from pruner.thrift import idl
from tests.e2e.warehouse import SCHEMA_NAME, TABLES, TRIPS, duckdb_connection
from tests.pruner.thrift.support import bigint_range, rows, sidecar_client

Client = Any
NO_TOKEN = idl.NullableToken(None)
ALL = idl.TupleDomain({})


@pytest.fixture(scope="module")
def client(lake_warehouse: Path) -> Iterator[Client]:
    with sidecar_client({SCHEMA_NAME: str(lake_warehouse)}) as connected:
        yield connected


def name(table: str) -> idl.SchemaTableName:
    return idl.SchemaTableName(SCHEMA_NAME, table)


def splits(
    client: Client, table: str, constraint: idl.TupleDomain = ALL, batch: int = 1000
) -> list[idl.Split]:
    found: list[idl.Split] = []
    token = None
    while True:
        page = client.trinoGetSplits(
            name(table), idl.NullableColumnSet(None), constraint, batch, idl.NullableToken(token)
        )
        found += page.splits
        if page.nextToken is None:
            return found
        token = page.nextToken


def test_metadata(client: Client) -> None:
    assert client.trinoListSchemaNames() == [SCHEMA_NAME]
    tables = client.trinoListTables(idl.NullableSchemaName(None))
    assert [t.tableName for t in tables] == list(TABLES)
    assert client.trinoListTables(idl.NullableSchemaName("nope")) == []
    metadata = client.trinoGetTableMetadata(name("types")).tableMetadata
    assert metadata.schemaTableName == name("types")
    types = {c.name: c.type for c in metadata.columns}
    assert types == {
        "id": "bigint", "t": "integer", "s": "integer", "i": "integer", "b": "bigint", "f": "double",
        "d": "double", "m": "double", "str": "varchar", "bin": "varchar", "flag": "boolean",
        "day": "date", "ts": "timestamp(3)",
    }  # fmt: skip
    assert metadata.indexableKeys == [{"id"}]
    assert client.trinoGetTableMetadata(name("missing")).tableMetadata is None


def test_splits_are_pruned_and_paged_on_one_snapshot(client: Client) -> None:
    everything = splits(client, "trips")
    assert len(everything) > 20
    assert len(splits(client, "trips", batch=3)) == len(everything)
    assert len(splits(client, "trips", bigint_range("trip_id", 5, 5))) == 1
    values, _ = rows(client, splits(client, "trips", bigint_range("trip_id", 5, 5))[0], ["trip_id"])
    assert values == [[5]]  # the constraint also filters the rows


def test_rows_page_by_max_bytes_and_cover_the_table(client: Client) -> None:
    ids: list[int] = []
    pages = 0
    for split in splits(client, "trips"):
        values, count = rows(client, split, ["trip_id", "note"], max_bytes=4096 + 2000)
        ids += values[0]
        pages += count
    assert sorted(ids) == list(range(TRIPS))
    assert pages > len(splits(client, "trips"))
    counted = sum(
        client.trinoGetRows(s.splitId, [], 1 << 20, NO_TOKEN).rowCount for s in splits(client, "trips")
    )
    assert counted == TRIPS


def test_index_lookup_returns_exactly_the_key_rows(client: Client) -> None:
    keys = idl.PageResult([idl.Block(bigintData=idl.Bigint(None, [3, 10, 2_000, 10**9]))], 4, None)
    batch = client.trinoGetIndexSplits(
        name("trips"), ["trip_id"], ["trip_id", "city"], keys, ALL, 100, NO_TOKEN
    )
    found = []
    for split in batch.splits:
        values, _ = rows(client, split, ["trip_id", "city"])
        found += list(zip(*values, strict=True))
    assert sorted(found) == [(3, "dub"), (10, "cdg"), (2_000, "ams")]


def test_secondary_indexed_column_is_an_index_and_lookups_are_exact(
    client: Client, lake_warehouse: Path
) -> None:
    metadata = client.trinoGetTableMetadata(name("trips")).tableMetadata
    assert {"trip_id"} in metadata.indexableKeys and {"driver_id"} in metadata.indexableKeys
    keys = idl.PageResult([idl.Block(integerData=idl.Integer(None, [3, 7, 999]))], 3, None)
    batch = client.trinoGetIndexSplits(
        name("trips"), ["driver_id"], ["trip_id", "driver_id"], keys, ALL, 1000, NO_TOKEN
    )
    found = []
    for split in batch.splits:
        values, _ = rows(client, split, ["trip_id", "driver_id"])
        found += list(zip(*values, strict=True))
    reference = (
        duckdb_connection(lake_warehouse)
        .execute("SELECT trip_id, driver_id FROM trips WHERE driver_id IN (3, 7, 999)")
        .fetchall()
    )
    assert sorted(found) == sorted(reference) and len(found) == len(set(found)) > 0
    all_files = len(splits(client, "trips"))
    assert len(batch.splits) < all_files


def test_every_type_round_trips(client: Client, lake_warehouse: Path) -> None:
    columns = ["id", "t", "s", "i", "b", "f", "d", "m", "str", "bin", "flag", "day", "ts"]
    got: list[tuple[Any, ...]] = []
    for split in splits(client, "types"):
        values, _ = rows(client, split, columns)
        got += list(zip(*values, strict=True))
    reference = (
        duckdb_connection(lake_warehouse).execute(f"SELECT {', '.join(columns)} FROM types").fetchall()
    )
    assert sorted(map(_comparable, got)) == sorted(map(_comparable, (_as_connector(r) for r in reference)))


def _as_connector(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """What the connector sends for a row DuckDB read: floats and decimals as doubles, binary as hex,
    dates as days and timestamps as UTC milliseconds (floored)."""
    return tuple(_connector_value(v) for v in row)


def _connector_value(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(str(value))
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, datetime):
        delta = value.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC)
        return delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000
    if hasattr(value, "toordinal"):
        return value.toordinal() - 719_163
    return value


def _comparable(row: tuple[Any, ...]) -> str:
    return repr(tuple("nan" if isinstance(v, float) and math.isnan(v) else v for v in row))


def test_tampered_split_ids_and_tokens_are_refused(client: Client) -> None:
    split = splits(client, "trips")[0]
    forged = bytearray(split.splitId.id)
    forged[3] ^= 0x40
    with pytest.raises(idl.ServiceException, match="not issued by this lakeprune deployment"):
        client.trinoGetRows(idl.Id(bytes(forged)), ["trip_id"], 1 << 20, NO_TOKEN)
    with pytest.raises(idl.ServiceException, match="not a rows token"):
        client.trinoGetRows(split.splitId, ["trip_id"], 1 << 20, idl.NullableToken(split.splitId))
    with pytest.raises(idl.ServiceException, match="unknown column"):
        client.trinoGetRows(split.splitId, ["nope"], 1 << 20, NO_TOKEN)
    assert client.trinoListSchemaNames() == [SCHEMA_NAME]  # still serving


def test_storage_failures_are_retryable_and_request_errors_are_not(
    client: Client, lake_warehouse: Path
) -> None:
    with pytest.raises(idl.ServiceException) as final:
        client.trinoGetSplits(name("trips"), idl.NullableColumnSet(None), ALL, 0, NO_TOKEN)
    assert not final.value.retryable
    (split,) = splits(client, "drivers")  # one small file
    (victim,) = (lake_warehouse / "drivers").glob("*.parquet")
    saved = victim.read_bytes()
    victim.write_bytes(b"not parquet")
    try:
        with pytest.raises(idl.ServiceException) as transient:
            client.trinoGetRows(split.splitId, ["driver_id"], 1 << 20, NO_TOKEN)
        assert transient.value.retryable and "cannot read data file" in transient.value.message
    finally:
        victim.write_bytes(saved)
