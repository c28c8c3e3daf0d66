"""Encoding what the gRPC service says about a table — its description (`GetTable`), statistics
for optimizers (`GetTableStatistics`), history (`GetHistory`) and live files (`ListFiles`) — as
`lakeprune.v1` messages, and decoding them for the Python client. Values and predicates are
`codec`'s; this module only arranges table metadata around them. A description is encoded once per
opened table and snapshot (`Descriptions`): every query asks for the description of each table it
reads, and encoding one costs more than checking the table is unchanged."""

from __future__ import annotations

import collections
import threading
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from pruner.errors import InvalidInputError
from pruner.format.instant import parse_time
from pruner.format.path_columns import file_path_values
from pruner.functions import Monotonicity
from pruner.index.prunable import prunable_columns
from pruner.metadata.files_index import DataFile
from pruner.predicate.values import Value
from pruner.service import codec
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.serving.catalog import TableName
from pruner.table.describe import index_summaries
from pruner.table.statistics import ColumnStatistics, TableStatistics
from pruner.table.table import LakeTable, Snapshot


def requested_snapshot(table: LakeTable, request: spb.GetTableRequest) -> Snapshot:
    """The snapshot a GetTable request names: an instant (`snapshot`), the latest committed at or
    before a point in time (`as_of_time`, ISO 8601), or the latest; both at once is refused."""
    if request.snapshot and request.as_of_time:
        raise InvalidInputError("a request names its snapshot by instant or by time, not both")
    if request.as_of_time:
        return table.snapshot_as_of(parse_time(request.as_of_time))
    return table.snapshot(codec.check_snapshot(request.snapshot))


def encode_table(name: TableName, snapshot: Snapshot) -> spb.GetTableResponse:
    table = snapshot.table
    config = table.config
    return spb.GetTableResponse(
        virtual_columns=[
            spb.VirtualColumn(
                name=v.name,
                type=codec.encode_column_type(v.type),
                expression=v.expression.sql(),
                source_column=v.expression.source or "",
                monotonic=v.expression.projects and v.expression.order is Monotonicity.INCREASING,
            )
            for v in table.virtual_columns
        ],
        table=spb.TableName(schema=name.schema, table=name.table),
        columns=codec.encode_schema(config.schema),
        record_key=config.record_key,
        partition_columns=config.partition_fields,
        ordering_field=config.ordering_field or "",
        indexes=[
            spb.IndexInfo(
                name=s["name"],
                type=encode_index_type(s["type"]),
                columns=s["columns"],
                options=s["options"],
                state=encode_index_state(s["state"]),
                partition=s["partition"],
                complete_up_to=s["complete_up_to"] or "",
            )
            for s in index_summaries(table)
        ],
        latest_snapshot=table.snapshot().instant or "",
        snapshot=snapshot.instant or "",
        # what split and file paths start with (Storage.full_uri of a table-relative path)
        location=table.storage.full_uri(""),
        prunable_columns=prunable_columns(config, table.definitions, snapshot.instant),
        partition_columns_in_files=config.path_columns_in_files,
    )


class Descriptions:
    """`encode_table`'s answers, remembered for the `size` table snapshots asked for last. An answer
    is one of the opened table it describes: the catalog opens the table anew when its timeline or
    definitions change, and the answer of the table opened before is not used again (it is held by a
    weak reference, so it keeps no closed table's state alive). Callers must not change an answer."""

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._encoded: collections.OrderedDict[
            tuple[TableName, str | None], tuple[weakref.ref[LakeTable], spb.GetTableResponse]
        ] = collections.OrderedDict()

    def describe(self, name: TableName, snapshot: Snapshot) -> spb.GetTableResponse:
        key = (name, snapshot.instant)
        with self._lock:
            hit = self._encoded.get(key)
            if hit is not None and hit[0]() is snapshot.table:
                self._encoded.move_to_end(key)
                return hit[1]
        response = encode_table(name, snapshot)
        with self._lock:
            self._encoded[key] = (weakref.ref(snapshot.table), response)
            self._encoded.move_to_end(key)
            while len(self._encoded) > self._size:
                self._encoded.popitem(last=False)
        return response


def encode_statistics(snapshot: str | None, statistics: TableStatistics) -> spb.GetTableStatisticsResponse:
    return spb.GetTableStatisticsResponse(
        snapshot=snapshot or "",
        row_count=statistics.row_count,
        file_count=statistics.file_count,
        total_bytes=statistics.total_bytes,
        columns=[_encode_column_statistics(c) for c in statistics.columns],
    )


def _encode_column_statistics(c: ColumnStatistics) -> spb.ColumnStatistics:
    return spb.ColumnStatistics(
        column=c.column,
        null_count=c.null_count,
        min=c.min,
        max=c.max,
        distinct_values_count=c.distinct_values_count,
        data_size=None if c.data_size is None else float(c.data_size),
        min_decimal=None if c.min_decimal is None else codec.encode_decimal(c.min_decimal),
        max_decimal=None if c.max_decimal is None else codec.encode_decimal(c.max_decimal),
    )


def decode_statistics(message: spb.GetTableStatisticsResponse) -> TableStatistics:
    return TableStatistics(
        message.row_count,
        message.file_count,
        message.total_bytes,
        tuple(
            ColumnStatistics(
                c.column,
                c.null_count,
                c.min if c.HasField("min") else None,
                c.max if c.HasField("max") else None,
                c.distinct_values_count if c.HasField("distinct_values_count") else None,
                int(c.data_size) if c.HasField("data_size") else None,
                codec.decode_decimal(c.min_decimal) if c.HasField("min_decimal") else None,
                codec.decode_decimal(c.max_decimal) if c.HasField("max_decimal") else None,
            )
            for c in message.columns
        ),
    )


def encode_history(
    entries: Iterable[dict[str, Any]], earliest_retained: str | None
) -> spb.GetHistoryResponse:
    """`pruner.table.describe.history` entries as a response."""
    return spb.GetHistoryResponse(
        entries=[
            spb.HistoryEntry(
                instant=e["instant"],
                action=e["action"],
                operation=e.get("operation") or "",
                counts={k: int(v) for k, v in (e.get("stats") or {}).items() if isinstance(v, int)},
                earliest_retained=e.get("earliest_retained") or "",
            )
            for e in entries
        ],
        earliest_retained=earliest_retained or "",
    )


@dataclass(frozen=True)
class HistoryEntry:
    instant: str
    action: str
    operation: str | None
    counts: dict[str, int]
    earliest_retained: str | None


def decode_history(message: spb.GetHistoryResponse) -> list[HistoryEntry]:
    return [
        HistoryEntry(e.instant, e.action, e.operation or None, dict(e.counts), e.earliest_retained or None)
        for e in message.entries
    ]


def encode_files(snapshot: Snapshot, files: Sequence[DataFile], first: bool) -> spb.ListFilesResponse:
    """One `ListFiles` message; the first names the snapshot."""
    storage = snapshot.table.storage
    schema = snapshot.table.config.schema
    return spb.ListFilesResponse(
        snapshot=(snapshot.instant or "") if first else "",
        files=[
            spb.DataFile(
                path=storage.full_uri(f.path),
                partition=f.partition,
                partition_values=codec.encode_partition_values(
                    file_path_values(f.partition, schema, storage.uri)
                ),
                file_group=f.file_group,
                instant=f.instant,
                size=f.size,
                row_count=f.rows,
            )
            for f in files
        ],
    )


@dataclass(frozen=True)
class ListedFile:
    """A live data file as `ListFiles` reports it."""

    path: str
    partition: str
    file_group: str
    instant: str
    size: int
    row_count: int
    partition_values: dict[str, Value | None]  # typed, None: NULL


def decode_files(messages: Iterable[spb.ListFilesResponse]) -> list[ListedFile]:
    return [
        ListedFile(
            f.path,
            f.partition,
            f.file_group,
            f.instant,
            f.size,
            f.row_count,
            codec.decode_partition_values(f.partition_values),
        )
        for m in messages
        for f in m.files
    ]


# Index types and states on the wire: `INDEX_TYPE_<TYPE>` for the type text of `index_summaries`
# (`files`, `record_index` and the `IndexType` values), `INDEX_STATE_<STATE>` likewise
# (`tests/pruner/service/test_codec.py` takes every type and state through them).
def encode_index_type(name: str) -> spb.IndexType:
    return cast(spb.IndexType, spb.IndexType.Value(f"INDEX_TYPE_{name.upper()}"))


def decode_index_type(value: spb.IndexType) -> str:
    return str(spb.IndexType.Name(value)).removeprefix("INDEX_TYPE_").lower()


def encode_index_state(name: str) -> spb.IndexState:
    return cast(spb.IndexState, spb.IndexState.Value(f"INDEX_STATE_{name.upper()}"))


def decode_index_state(value: spb.IndexState) -> str:
    return str(spb.IndexState.Name(value)).removeprefix("INDEX_STATE_").lower()
