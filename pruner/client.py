"""A small typed client for the sidecar's gRPC `PruningService`.

    with PruningClient("localhost:7777", token="...") as client:
        client.list_tables()                                  # [TableName("demo", "trips"), ...]
        info = client.get_table("demo", "trips")              # TableInfo: columns, keys, indexes, ...
        result = client.prune("demo", "trips", "city = 'oslo' AND fare > 20", explain=True)
        [s.path for s in result.splits]

`prune` takes a `TupleDomain`, or a SQL WHERE clause that is translated here, on the client, with
the table's schema from `GetTable` and the same translation the sidecar's own `prune` uses
(`translate_predicate`); the sidecar applies its limits to what it receives. The notes on where
either widened come back in the result's `widened`. It returns a `RemotePruneResult`,
the planner's `PruneResult` plus the server's fallback count; a result with more splits than one
response may hold is fetched with `PruneStream`. A failed call raises `ServiceError` (a
`LakepruneError`, so the CLI prints one line) carrying the gRPC status code."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import grpc

from pruner.advisor.shapes import unindexed_conditions
from pruner.errors import LakepruneError
from pruner.planner.prune import BoundPredicate, translate_predicate
from pruner.planner.result import PruneResult, Split
from pruner.predicate.tuple_domain import TupleDomain
from pruner.service import codec, table_codec
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2_grpc as spb_grpc
from pruner.service.table_codec import HistoryEntry, ListedFile
from pruner.service.text_codec import encode_text
from pruner.serving.catalog import TableName
from pruner.table.statistics import TableStatistics
from pruner.types import Column, ColumnType, TableSchema

MAX_MESSAGE_BYTES = 64 * 1024**2
USER_AGENT = "lakeprune-python"


class ServiceError(LakepruneError):
    """A call failed; `code` is the gRPC status code, `details` the server's message."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details


@dataclass(frozen=True)
class IndexInfo:
    name: str
    type: str
    columns: tuple[str, ...]
    options: dict[str, str]
    state: str
    complete_up_to: str | None
    partition: str  # its metadata partition


@dataclass(frozen=True)
class VirtualColumnInfo:
    """A functional index as a hidden column (RFC-63)."""

    name: str
    type: ColumnType
    expression: str
    source_column: str
    monotonic: bool


@dataclass(frozen=True)
class TableInfo:
    name: TableName
    schema: TableSchema
    record_key: tuple[str, ...]
    partition_columns: tuple[str, ...]
    ordering_field: str | None
    indexes: tuple[IndexInfo, ...]
    latest_snapshot: str | None
    virtual_columns: tuple[VirtualColumnInfo, ...] = ()
    snapshot: str | None = None  # the snapshot described: the requested one, else the latest
    location: str | None = None  # the table's root, in the form split paths take (None: not said)
    # what a predicate alone can prune by (`pruner.index.prunable`); empty from an older sidecar
    prunable_columns: tuple[str, ...] = ()
    # False for an adopted table: a file may keep a partition column only in its path, and a
    # reader takes that column's value from the split's partition values
    partition_columns_in_files: bool = True


@dataclass(frozen=True)
class RemotePruneResult(PruneResult):
    """A prune result from the sidecar. `explain` and `index_report` are empty unless asked for;
    the fallback count is the server's either way."""

    fallback_count: int = field(default=0)

    @property
    def fallbacks(self) -> int:
        return self.fallback_count


class PruningClient:
    def __init__(
        self,
        address: str,
        token: str | None = None,
        tls_root_cert: bytes | str | None = None,
        timeout: float | None = 60.0,
    ) -> None:
        """`address` is HOST:PORT; `tls_root_cert` (PEM bytes, or a file path) switches to TLS and
        says which certificate authority to trust; `timeout` is each call's deadline in seconds."""
        options = [
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            # A connection of its own: clients in one process would otherwise share one, and all
            # land on the same worker of a `serve --workers N` sidecar.
            ("grpc.use_local_subchannel_pool", 1),
            # Names this client in the sidecar's workload log (`lakeprune advise`: which engine asked).
            ("grpc.primary_user_agent", USER_AGENT),
        ]
        if tls_root_cert is None:
            self._channel = grpc.insecure_channel(address, options=options)
        else:
            if isinstance(tls_root_cert, str):
                with open(tls_root_cert, "rb") as pem:
                    tls_root_cert = pem.read()
            credentials = grpc.ssl_channel_credentials(root_certificates=tls_root_cert)
            self._channel = grpc.secure_channel(address, credentials, options=options)
        self._stub = spb_grpc.PruningServiceStub(self._channel)
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        self.timeout = timeout

    # Calls -----------------------------------------------------------------------------------------

    def list_tables(self, schema: str | None = None) -> list[TableName]:
        response = self._call(self._stub.ListTables, spb.ListTablesRequest(schema=schema or ""))
        return [TableName(t.schema, t.table) for t in response.tables]

    def schemas(self) -> list[str]:
        return list(self._call(self._stub.ListTables, spb.ListTablesRequest()).schemas)

    def get_table(
        self, schema: str, table: str, snapshot: str | None = None, as_of_time: str | None = None
    ) -> TableInfo:
        """The table's description: as of `snapshot` (a readable completed instant), or of the
        latest snapshot committed at or before `as_of_time` (ISO 8601, UTC unless it has an offset;
        the info's `snapshot` is the one found), else the latest."""
        request = spb.GetTableRequest(
            table=_name(schema, table), snapshot=snapshot or "", as_of_time=as_of_time or ""
        )
        response = self._call(self._stub.GetTable, request)
        return TableInfo(
            name=TableName(response.table.schema, response.table.table),
            schema=codec.decode_schema(response.columns),
            record_key=tuple(response.record_key),
            partition_columns=tuple(response.partition_columns),
            ordering_field=response.ordering_field or None,
            indexes=tuple(
                IndexInfo(
                    i.name,
                    table_codec.decode_index_type(i.type),
                    tuple(i.columns),
                    dict(i.options),
                    table_codec.decode_index_state(i.state),
                    i.complete_up_to or None,
                    i.partition,
                )
                for i in response.indexes
            ),
            latest_snapshot=response.latest_snapshot or None,
            snapshot=response.snapshot or None,
            location=response.location or None,
            prunable_columns=tuple(response.prunable_columns),
            partition_columns_in_files=response.partition_columns_in_files,
            virtual_columns=tuple(
                VirtualColumnInfo(
                    v.name, codec.decode_column_type(v.type), v.expression, v.source_column, v.monotonic
                )
                for v in response.virtual_columns
            ),
        )

    def prune(
        self,
        schema: str,
        table: str,
        where: TupleDomain | str,
        snapshot: str | None = None,
        explain: bool = False,
        stream: bool | None = None,
        max_split_bytes: int = 0,
    ) -> RemotePruneResult:
        """The splits that may hold rows matching `where` (SQL text, bound here exactly as the
        sidecar binds it, or a TupleDomain); the result's `widened` says where binding widened it.
        `stream`: True uses PruneStream, False Prune, None (default) Prune and PruneStream only when
        the result is too large for one. `max_split_bytes`: > 0 cuts files larger than that into
        splits of consecutive byte ranges (`Split.ranges`); 0: one split per file."""
        request, bound = self.prune_request(schema, table, where, snapshot, explain, max_split_bytes)
        if stream:
            return _decode_prune(self._call_stream(self._stub.PruneStream, request), bound.widened)
        try:
            return _decode_prune([self._call(self._stub.Prune, request)], bound.widened)
        except ServiceError as exc:
            if stream is None and exc.code == grpc.StatusCode.RESOURCE_EXHAUSTED:
                return _decode_prune(self._call_stream(self._stub.PruneStream, request), bound.widened)
            raise

    def prune_request(
        self,
        schema: str,
        table: str,
        where: TupleDomain | str,
        snapshot: str | None = None,
        explain: bool = False,
        max_split_bytes: int = 0,
    ) -> tuple[spb.PruneRequest, BoundPredicate]:
        """The `PruneRequest` that `prune` sends for these arguments, with the bound predicate: for
        callers that send requests themselves (a load generator sends one request many times)."""
        info = self.get_table(schema, table)
        bound = _bound(info, where)
        unindexed = _unindexed(info, where) if isinstance(where, str) else ()
        request = spb.PruneRequest(
            table=_name(schema, table),
            snapshot=snapshot or "",
            predicate=codec.encode_tuple_domain(bound.domain),
            explain=explain,
            max_split_bytes=max_split_bytes,
            text=encode_text(bound.text.condition),
            text_notes=bound.text.notes,
            unindexed_conditions=unindexed,
        )
        return request, bound

    def statistics(
        self, schema: str, table: str, where: TupleDomain | str | None = None, snapshot: str | None = None
    ) -> TableStatistics:
        """Row count, size and per-column statistics of the files that may match `where` (all
        live files without it), for a cost-based optimizer."""
        request = spb.GetTableStatisticsRequest(table=_name(schema, table), snapshot=snapshot or "")
        if where is not None:
            request.predicate.CopyFrom(codec.encode_tuple_domain(self.bind(schema, table, where).domain))
        return table_codec.decode_statistics(self._call(self._stub.GetTableStatistics, request))

    def history(self, schema: str, table: str) -> list[HistoryEntry]:
        """The table's completed instants, oldest first."""
        request = spb.GetHistoryRequest(table=_name(schema, table))
        return table_codec.decode_history(self._call(self._stub.GetHistory, request))

    def list_files(self, schema: str, table: str, snapshot: str | None = None) -> list[ListedFile]:
        """The live data files of a snapshot (default: the latest)."""
        request = spb.ListFilesRequest(table=_name(schema, table), snapshot=snapshot or "")
        return table_codec.decode_files(self._call_stream(self._stub.ListFiles, request))

    def bind(self, schema: str, table: str, where: TupleDomain | str) -> BoundPredicate:
        """`where` translated over the remote table's columns and virtual columns, as `prune` binds
        it but without the limits, which the sidecar applies (`pruner.planner.prune`): calls of
        functional indexes (e.g. `hour(ts)`) become their virtual columns."""
        return _bound(self.get_table(schema, table), where)

    # Plumbing --------------------------------------------------------------------------------------

    def _call(self, method: Any, request: Any) -> Any:
        try:
            return method(request, timeout=self.timeout, metadata=self._metadata)
        except grpc.RpcError as exc:
            raise ServiceError(exc.code(), exc.details() or "") from None

    def _call_stream(self, method: Any, request: Any) -> list[Any]:
        try:
            return list(method(request, timeout=self.timeout, metadata=self._metadata))
        except grpc.RpcError as exc:
            raise ServiceError(exc.code(), exc.details() or "") from None

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> PruningClient:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _name(schema: str, table: str) -> spb.TableName:
    return spb.TableName(schema=schema, table=table)


def _decode_prune(messages: Iterable[spb.PruneResponse], widened: tuple[str, ...]) -> RemotePruneResult:
    header: spb.PruneResponse | None = None  # a stream's last message: counts and explain
    splits: list[Split] = []
    for message in messages:
        header = message
        splits.extend(codec.decode_split(s) for s in message.splits)
    if header is None:
        raise ServiceError(grpc.StatusCode.INTERNAL, "the server sent an empty PruneStream")
    return RemotePruneResult(
        snapshot=header.snapshot or None,
        predicate=header.predicate,
        files_total=header.files_total,
        splits=splits,
        explain=[codec.decode_explain(s) for s in header.explain],
        widened=(*widened, *header.widened),
        storage=codec.decode_storage_requests(header.storage),
        index_report=tuple(codec.decode_index_report(r) for r in header.index_report),
        fallback_count=header.fallbacks,
    )


def _bound(info: TableInfo, where: TupleDomain | str) -> BoundPredicate:
    """`where` translated over the table's columns and virtual columns (`PruningClient.bind`)."""
    virtual = info.virtual_columns
    extended = TableSchema(info.schema.columns + tuple(Column(v.name, v.type) for v in virtual))
    # a virtual column's expression is the index's canonical text (Expression.key())
    return translate_predicate(where, extended, {v.expression: v.name for v in virtual})


def _unindexed(info: TableInfo, where: str) -> tuple[str, ...]:
    """The comparisons of computed values in `where` that no index of the table holds: binding
    leaves them out; the sidecar's workload log keeps their shapes."""
    types = {c.name: c.type for c in info.schema.columns}
    return unindexed_conditions(where, types, {v.expression: v.name for v in info.virtual_columns})
