"""The table metadata engines read besides splits: `GetTable` as of a snapshot or a point in time
(time travel checks its version there), `GetTableStatistics` (row counts, column ranges,
distinct-value estimates and data sizes for optimizers, checked against the data files),
`GetHistory` and `ListFiles` (Trino's `$history` and `$files`). A description is encoded once per
opened table and snapshot, and a table that changed is described anew."""

from __future__ import annotations

import math
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import grpc
import pyarrow.parquet as pq
import pytest

from pruner.client import PruningClient, ServiceError
from pruner.format.config import TableConfig, create_config
from pruner.format.instant import parse_instant
from pruner.index import sketches
from pruner.index.defining import define
from pruner.index.definitions import save_definitions
from pruner.numeric import days_since_epoch, micros_since_epoch
from pruner.planner.prune import prune
from pruner.service import table_codec
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.serving.catalog import TableName
from pruner.serving.config import Limits
from pruner.storage import Storage
from pruner.table.describe import history
from pruner.table.table import LakeTable, Snapshot
from pruner.types import TableSchema
from tests.pruner.service.conftest import SCHEMA, TABLE, StartSidecar, address

SEQ_RANGE = "seq BETWEEN 100 AND 400"


def _stats_number(value: object) -> float | None:
    """A data value as optimizers' statistics represent it (None: no numeric representation)."""
    match value:
        case bool() | int() | float() | Decimal():
            return float(value)
        case datetime():
            return float(micros_since_epoch(value))
        case date():
            return float(days_since_epoch(value))
        case _:
            return None


def test_get_table_describes_a_snapshot_and_refuses_unknown_ones(
    client: PruningClient, indexed_table: str
) -> None:
    instants = [i.timestamp for i in LakeTable.open(indexed_table).timeline.commits()]
    latest = client.get_table(SCHEMA, TABLE)
    assert latest.snapshot == latest.latest_snapshot == instants[-1]
    older = client.get_table(SCHEMA, TABLE, snapshot=instants[1])
    assert older.snapshot == instants[1] and older.latest_snapshot == instants[-1]
    with pytest.raises(ServiceError) as missing:
        client.get_table(SCHEMA, TABLE, snapshot="20000101000000000")
    assert missing.value.code == grpc.StatusCode.NOT_FOUND
    with pytest.raises(ServiceError) as malformed:
        client.get_table(SCHEMA, TABLE, snapshot="yesterday")
    assert malformed.value.code == grpc.StatusCode.INVALID_ARGUMENT


def test_get_table_as_of_a_time_finds_the_latest_snapshot_committed_by_then(
    client: PruningClient, indexed_table: str
) -> None:
    """TIMESTAMP AS OF: an instant's timestamp is when its commit began (UTC, to the millisecond)."""
    instants = [i.timestamp for i in LakeTable.open(indexed_table).timeline.completed()]
    second = parse_instant(instants[1])
    utc = second.strftime("%Y-%m-%d %H:%M:%S.%f")
    plus_two = (second + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S.%f+02:00")
    for written in (utc, f"{utc}Z", plus_two, second.isoformat()):
        assert client.get_table(SCHEMA, TABLE, as_of_time=written).snapshot == instants[1], written
    just_before = (second - timedelta(milliseconds=1)).isoformat()
    assert client.get_table(SCHEMA, TABLE, as_of_time=just_before).snapshot == instants[0]
    assert client.get_table(SCHEMA, TABLE, as_of_time="2999-01-01").snapshot == instants[-1]
    with pytest.raises(
        ServiceError, match=f"no snapshot committed at or before .*its first is {instants[0]}"
    ) as early:
        client.get_table(SCHEMA, TABLE, as_of_time="2000-01-01T00:00:00Z")
    assert early.value.code == grpc.StatusCode.NOT_FOUND
    for request, message in (
        ({"as_of_time": "yesterday"}, "is not a point in time"),
        ({"as_of_time": utc, "snapshot": instants[1]}, "by instant or by time, not both"),
    ):
        with pytest.raises(ServiceError, match=message) as refused:
            client.get_table(SCHEMA, TABLE, **request)
        assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize("as_uri", [False, True], ids=["path", "file-uri"])
def test_get_table_names_the_root_every_split_and_file_lies_under(
    start_sidecar: StartSidecar, lake: str, indexed_table: str, as_uri: bool
) -> None:
    """Engines read only files under `location`: it takes the form split paths take (a warehouse
    configured as a file: URI gives URIs, a plain path gives absolute paths)."""
    root = Path(lake).as_uri() if as_uri else lake
    expected = Path(indexed_table).as_uri() if as_uri else indexed_table
    sidecar = start_sidecar(root)
    with PruningClient(address(sidecar)) as client:
        info = client.get_table(SCHEMA, TABLE)
        assert info.location == expected
        older = client.get_table(
            SCHEMA, TABLE, snapshot=LakeTable.open(indexed_table).timeline.commits()[0].timestamp
        )
        assert older.location == expected
        paths = [s.path for s in client.prune(SCHEMA, TABLE, SEQ_RANGE).splits]
        paths += [f.path for f in client.list_files(SCHEMA, TABLE)]
    assert paths and all(p.startswith(expected + "/") for p in paths)


def test_get_table_declares_what_a_predicate_can_prune_by(
    start_sidecar: StartSidecar, tmp_path: Path
) -> None:
    """Engines wait for a dynamic filter only on these columns: the partition column, the one-column
    record key, ready indexes' columns; not an index still building, not a column without one."""
    storage = Storage.from_uri(str(tmp_path / TABLE))
    config = TableConfig(
        TABLE,
        TableSchema.parse("id bigint, region string, v bigint, s string, w bigint"),
        ("id",),
        ("region",),
    )
    create_config(storage, config)
    bloom = define(config, [], "bf", "bloom_filters", ["v"], {}).ready("20260101000000000")
    building = define(config, [bloom], "by_s", "secondary_index", ["s"], {})
    save_definitions(storage, [bloom, building])
    with PruningClient(address(start_sidecar(str(tmp_path)))) as client:
        info = client.get_table(SCHEMA, TABLE)
        assert info.prunable_columns == ("id", "region", "v")
        # the type and state travel as enums, the partition beside them
        assert {(i.name, i.type, i.state, i.partition) for i in info.indexes} == {
            ("files", "files", "ready", "files"),
            ("record_index", "record_index", "ready", "record_index"),
            ("bf", "bloom_filters", "ready", "bloom_filters"),
            ("by_s", "secondary_index", "building", "secondary_index_by_s"),
        }
        # an index defined since: the same sidecar's description has it (not the one it encoded)
        more = define(config, [bloom, building], "cs", "column_stats", ["w"], {}).ready("20260101000000000")
        save_definitions(storage, [bloom, building, more])
        info = client.get_table(SCHEMA, TABLE)
    assert info.prunable_columns == ("id", "region", "v", "w")
    assert ("cs", "ready") in {(i.name, i.state) for i in info.indexes}


def test_a_description_is_encoded_once_per_opened_table_and_snapshot(
    indexed_table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoded: list[str | None] = []
    encode = table_codec.encode_table

    def counted(name: TableName, snapshot: Snapshot) -> spb.GetTableResponse:
        encoded.append(snapshot.instant)
        return encode(name, snapshot)

    monkeypatch.setattr(table_codec, "encode_table", counted)
    descriptions = table_codec.Descriptions(size=2)
    name, other = TableName(SCHEMA, TABLE), TableName(SCHEMA, "other")
    table = LakeTable.open(indexed_table)
    first = descriptions.describe(name, table.snapshot())
    assert descriptions.describe(name, table.snapshot()) is first and len(encoded) == 1
    reopened = LakeTable.open(indexed_table)  # as the catalog reopens a table that changed
    assert descriptions.describe(name, reopened.snapshot()) == first and len(encoded) == 2
    descriptions.describe(other, reopened.snapshot())
    descriptions.describe(TableName(SCHEMA, "third"), reopened.snapshot())  # the first falls out
    descriptions.describe(name, reopened.snapshot())
    assert len(encoded) == 5


@pytest.mark.parametrize("in_files", [True, False], ids=["written", "adopted"])
def test_get_table_says_whether_files_hold_their_partition_columns(
    start_sidecar: StartSidecar, tmp_path: Path, in_files: bool
) -> None:
    """An adopted table's files may keep a partition column only in their paths: a reader then
    takes its value from the split's partition values."""
    schema = TableSchema.parse("id bigint, region string")
    config = TableConfig(TABLE, schema, ("id",), ("region",), path_columns_in_files=in_files)
    create_config(Storage.from_uri(str(tmp_path / TABLE)), config)
    with PruningClient(address(start_sidecar(str(tmp_path)))) as client:
        assert client.get_table(SCHEMA, TABLE).partition_columns_in_files is in_files


def test_statistics_agree_with_the_data_files(client: PruningClient, indexed_table: str) -> None:
    snapshot = LakeTable.open(indexed_table).snapshot()
    rows = [
        r for f in snapshot.files() for r in pq.read_table(snapshot.table.storage.path(f.path)).to_pylist()
    ]
    stats = client.statistics(SCHEMA, TABLE)
    assert stats.row_count == len(rows) and stats.file_count == len(snapshot.files())
    assert stats.total_bytes == sum(f.size for f in snapshot.files())
    by_column = {c.column: c for c in stats.columns}
    assert set(by_column) == set(snapshot.table.config.schema.names)  # column_stats on every column
    for column, found in by_column.items():
        values = [r[column] for r in rows]
        assert found.null_count == sum(v is None for v in values), column
        numbers = [
            n for v in values if v is not None and (n := _stats_number(v)) is not None and not math.isnan(n)
        ]
        if not numbers:
            assert found.min is None and found.max is None, column
            continue
        assert found.min is not None and found.max is not None, column
        assert found.min <= min(numbers) and found.max >= max(numbers), column  # never narrower
        if column != "amount":  # decimals are stored rounded outward; the others exactly
            assert (found.min, found.max) == (min(numbers), max(numbers)), column


def test_statistics_estimate_distinct_values_and_sizes(client: PruningClient, indexed_table: str) -> None:
    """Every column has a distinct-value estimate within the sketches' error bound, variable-width
    columns their data size, and the decimal column its exact range."""
    snapshot = LakeTable.open(indexed_table).snapshot()
    rows = [
        r for f in snapshot.files() for r in pq.read_table(snapshot.table.storage.path(f.path)).to_pylist()
    ]
    schema = snapshot.table.config.schema
    for found in client.statistics(SCHEMA, TABLE).columns:
        values = [r[found.column] for r in rows if r[found.column] is not None]
        distinct = len({"NaN" if isinstance(v, float) and math.isnan(v) else v for v in values})
        assert found.distinct_values_count is not None, found.column
        assert abs(found.distinct_values_count - distinct) <= sketches.relative_error() * distinct + 1
        kind = schema.column(found.column).type.kind.value
        if kind in ("string", "binary"):
            sizes = [len(v.encode() if isinstance(v, str) else v) for v in values]
            assert found.data_size == sum(sizes), found.column
        else:
            assert found.data_size is None, found.column
        if kind == "decimal" and values:
            assert (found.min_decimal, found.max_decimal) == (min(values), max(values))
        else:
            assert found.min_decimal is None and found.max_decimal is None, found.column


def test_statistics_of_a_predicate_count_the_files_a_prune_keeps(
    client: PruningClient, indexed_table: str
) -> None:
    kept = prune(LakeTable.open(indexed_table), SEQ_RANGE)
    stats = client.statistics(SCHEMA, TABLE, SEQ_RANGE)
    assert stats.file_count == kept.files_selected < kept.files_total
    assert stats.row_count == sum(s.row_count for s in kept.splits)


def test_history_lists_every_completed_instant(client: PruningClient, indexed_table: str) -> None:
    table = LakeTable.open(indexed_table)
    expected = history(table)
    entries = client.history(SCHEMA, TABLE)
    assert [(e.instant, e.action, e.operation) for e in entries] == [
        (e["instant"], e["action"], e["operation"]) for e in expected
    ]
    commits = [e for e in entries if e.action == "commit" and e.operation in ("insert", "upsert", "delete")]
    assert commits and all("input_rows" in e.counts for e in commits)


def test_list_files_streams_the_live_files(
    start_sidecar: StartSidecar, lake: str, indexed_table: str
) -> None:
    sidecar = start_sidecar(lake, limits=Limits(max_splits_per_response=7))
    table = LakeTable.open(indexed_table)
    instant = table.timeline.commits()[1].timestamp
    with PruningClient(address(sidecar)) as client:
        for snapshot in (table.snapshot(), table.snapshot(instant)):
            listed = client.list_files(SCHEMA, TABLE, snapshot.instant)
            expected = snapshot.files()
            assert len(expected) > 7  # several messages
            assert [(f.path, f.row_count, f.size) for f in listed] == [
                (table.storage.full_uri(f.path), f.rows, f.size) for f in expected
            ]
