"""The gRPC `lakeprune.v1.PruningService`: a thin servicer. Each RPC decodes its request with
`pruner.service.codec`, calls the catalog and the planner, and encodes the answer; the work runs in
`Workers` under the request's deadline (a table's description, cheaper than the hand-over, in the
call's own thread), inside `Metrics.request` (count, latency, log line), and every exception becomes
a status code through `pruner.serving.errors` — the same path for every method — with the server's
paths redacted (`Catalog.redact`) from error messages and explain records. `PruneStream` sends each
page as soon as the plan has decided its files (`pruner.planner.prune.prune_stream`): its lookups
and its first page run in one piece of work, each further page in a piece of its own, between which
the call's deadline and cancellation are checked (none is asked for once the plan has decided every
file); the first message carries what is known before any file is decided, the last the counts and
the explain record. A `PruneStream` request equal byte for byte to one of the same pinned snapshot
being planned, or planned a moment ago, replays that plan's messages instead of planning again
(`pruner.service.shared_prunes`); it is still counted and logged as a prune (`shared=True`). A
request body that does not decode is INVALID_ARGUMENT (`undecodable`, registered through
`pruner.service.handlers`), counted and logged like any other refusal."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import logging
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any, NamedTuple, NoReturn, TypeVar

import grpc

from pruner.advisor.shapes import unindexed_conditions
from pruner.advisor.workload import WorkloadLog
from pruner.errors import InvalidInputError
from pruner.metadata.files_index import DataFile
from pruner.planner.planner import PlannedPrune
from pruner.planner.prune import BoundPredicate, prune, prune_stream
from pruner.planner.result import PruneResult, Split
from pruner.predicate.sql import text_condition
from pruner.predicate.sql.trino import Call, TrinoExpression, from_trino, text_atoms, translate_trino
from pruner.predicate.text import TextPredicate, all_of
from pruner.predicate.tuple_domain import TupleDomain
from pruner.service import codec, table_codec
from pruner.service.expression_codec import decode_engine_filter
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2_grpc as spb_grpc
from pruner.service.shared_prunes import SharedPrunes, request_key
from pruner.service.status import grpc_code
from pruner.service.text_codec import decode_text
from pruner.serving.catalog import Catalog, TableName
from pruner.serving.config import Limits
from pruner.serving.errors import Failure, ResultTooLargeError, Status, classify
from pruner.serving.metrics import Metrics, RequestRecord
from pruner.serving.workers import Workers
from pruner.storage_requests import StorageRequests, counting
from pruner.table.describe import history
from pruner.table.statistics import table_statistics
from pruner.table.table import LakeTable, Snapshot

API = "grpc"
log = logging.getLogger(__name__)
SERVICE_NAME: str = spb.DESCRIPTOR.services_by_name["PruningService"].full_name
T = TypeVar("T")


class _Decoded(NamedTuple):
    """A prune request as the planner takes it, and what the workload log keeps beside: the
    conditions over computed values that no index holds (lakeprune SQL), which binding left out."""

    table: LakeTable
    predicate: BoundPredicate
    snapshot: str | None
    unindexed: tuple[str, ...]


class _Replay(NamedTuple):
    """What a `PruneStream` sent before its last message, the prune's result (paths not yet
    redacted) and its decoded request: enough to answer an equal request again."""

    messages: tuple[spb.PruneResponse, ...]
    result: PruneResult
    decoded: _Decoded


class PruningServicer(spb_grpc.PruningServiceServicer):
    def __init__(
        self,
        catalog: Catalog,
        limits: Limits,
        metrics: Metrics,
        workers: Workers,
        workload: WorkloadLog | None = None,
    ) -> None:
        self.catalog = catalog
        self.limits = limits
        self.metrics = metrics
        self.workers = workers
        self.workload = workload
        self.shared: SharedPrunes[_Replay] = SharedPrunes(limits.remembered_prunes)
        self.descriptions = table_codec.Descriptions()

    # RPCs ------------------------------------------------------------------------------------------

    def ListTables(  # noqa: N802
        self, request: spb.ListTablesRequest, context: grpc.ServicerContext
    ) -> spb.ListTablesResponse:
        return self._call(
            context, "ListTables", None, lambda _record, _timeout: self._list_tables(request), inline=True
        )

    def GetTable(  # noqa: N802
        self, request: spb.GetTableRequest, context: grpc.ServicerContext
    ) -> spb.GetTableResponse:
        name = _table_name(request)
        return self._call(
            context, "GetTable", name, lambda _record, _timeout: self._get_table(request), inline=True
        )

    def Prune(  # noqa: N802
        self, request: spb.PruneRequest, context: grpc.ServicerContext
    ) -> spb.PruneResponse:
        def work(record: RequestRecord, timeout: float) -> spb.PruneResponse:
            result, splits = self._prune(request, record, timeout, _client(context))
            if len(splits) > self.limits.max_splits_per_response:
                raise ResultTooLargeError(
                    f"{len(splits):,} splits exceed limits.max_splits_per_response "
                    f"({self.limits.max_splits_per_response:,}); use PruneStream"
                )
            return codec.encode_prune_result(result, request.explain, splits)

        return self._call(context, "Prune", _table_name(request), work)

    def PruneStream(  # noqa: N802
        self, request: spb.PruneRequest, context: grpc.ServicerContext
    ) -> Iterator[spb.PruneResponse]:
        """Pages of at most `limits.max_splits_per_response` splits, each sent once the plan has
        decided its files; then a last message with the counts and the explain record. A client
        that cancels stops the plan before its next batch of files. A request equal to one being
        planned, or to one planned a moment ago, replays that plan (`shared_prunes`)."""
        with self._handling(context, "PruneStream", _table_name(request)) as record:
            key = request_key(request)
            if key is None:
                yield from self._stream(request, context, record)
                return
            flight, first = self.shared.join(key)
            if not first:
                replay = flight.wait(self.workers.timeout(context.time_remaining()))
                if replay is not None:
                    yield from self._replay(replay, request, context, record)
                    return
                # the first one failed, was cancelled or is still planning: plan this one itself
                yield from self._stream(request, context, record)
                return
            replay = None
            try:
                replay = yield from self._stream(request, context, record)
            finally:
                keep = replay is not None and replay.result.fallbacks == 0
                self.shared.settle(key, flight, replay, keep)

    def GetTableStatistics(  # noqa: N802
        self, request: spb.GetTableStatisticsRequest, context: grpc.ServicerContext
    ) -> spb.GetTableStatisticsResponse:
        return self._call(
            context,
            "GetTableStatistics",
            _table_name(request),
            lambda _, timeout: self._statistics(request, timeout),
        )

    def GetHistory(  # noqa: N802
        self, request: spb.GetHistoryRequest, context: grpc.ServicerContext
    ) -> spb.GetHistoryResponse:
        def work(_record: RequestRecord, _timeout: float) -> spb.GetHistoryResponse:
            table = self.catalog.table(_resolve(request))
            return table_codec.encode_history(history(table), table.earliest_retained())

        return self._call(context, "GetHistory", _table_name(request), work)

    def ListFiles(  # noqa: N802
        self, request: spb.ListFilesRequest, context: grpc.ServicerContext
    ) -> Iterator[spb.ListFilesResponse]:
        def work(_record: RequestRecord, _timeout: float) -> tuple[Snapshot, list[DataFile]]:
            snapshot = self.catalog.table(_resolve(request)).snapshot(codec.check_snapshot(request.snapshot))
            return snapshot, snapshot.files()

        snapshot, files = self._call(context, "ListFiles", _table_name(request), work)
        size = self.limits.max_splits_per_response
        for start in range(0, max(len(files), 1), size):
            yield table_codec.encode_files(snapshot, files[start : start + size], first=start == 0)

    # Work ------------------------------------------------------------------------------------------

    def _stream(
        self, request: spb.PruneRequest, context: grpc.ServicerContext, record: RequestRecord
    ) -> Generator[spb.PruneResponse, None, _Replay | None]:
        """A prune's messages, each page as soon as it is decided; what was sent, for requests equal
        to this one to replay, or None if the client cancelled."""
        max_split_bytes = codec.check_split_bytes(request.max_split_bytes)
        size = self.limits.max_splits_per_response
        timeout = self.workers.timeout(context.time_remaining())

        def plan_and_first_page() -> tuple[tuple[_Pages, _Decoded], StorageRequests]:
            (planned, decoded), requests = self._plan(request, timeout)
            pages = _Pages(planned, max_split_bytes, size)
            pages.decide_next()
            return (pages, decoded), requests

        # one piece of work plans and decides the first page, and none is asked for once every
        # file is decided: a prune of a small table would otherwise pay thrice for the hand-over
        # to `Workers` (its cost: `Workers.run_inline`)
        (pages, decoded), requests = self.workers.run(plan_and_first_page, timeout)
        planned = pages.planned
        context.add_callback(planned.cancel)
        message = codec.encode_prune_start(planned)  # what the plan knew before it decided files
        sent: list[spb.PruneResponse] = []
        while True:
            active = context.is_active()
            if not active:
                planned.cancel()
            elif not pages.ready and not pages.done:
                left = self.workers.timeout(context.time_remaining())
                self.workers.run(pages.decide_next, left)
            if planned.cancelled:  # by the client, before or while a page was decided
                record.status = Status.CANCELLED
                return None
            page = pages.take() if active else None
            if page is None:
                break
            message.splits.extend(codec.encode_split(s) for s in page)
            try:
                yield message
            except GeneratorExit:  # the call ended (cancelled) while the page was in flight
                planned.cancel()
                record.status = Status.CANCELLED
                raise
            sent.append(message)
            message = spb.PruneResponse()
        answered = planned.result()
        result = self._finish(record, answered, requests, decoded, _client(context))
        yield codec.encode_prune_header(result, request.explain)  # the whole header, no splits
        return _Replay(tuple(sent), answered, decoded)

    def _replay(
        self, replay: _Replay, request: spb.PruneRequest, context: grpc.ServicerContext, record: RequestRecord
    ) -> Iterator[spb.PruneResponse]:
        """An equal request's messages, sent again; counted and logged as this request's prune,
        which asked nothing of storage."""
        nothing = StorageRequests()
        answered = dataclasses.replace(replay.result, storage=nothing)
        result = self._finish(record, answered, nothing, replay.decoded, _client(context))
        record.fields.update(shared=True)  # the log line says so
        yield from replay.messages
        yield codec.encode_prune_header(result, request.explain)

    def _list_tables(self, request: spb.ListTablesRequest) -> spb.ListTablesResponse:
        schemas = [request.schema] if request.schema else self.catalog.schemas()
        response = spb.ListTablesResponse(schemas=self.catalog.schemas())
        for schema in schemas:
            response.tables.extend(spb.TableName(schema=schema, table=t) for t in self.catalog.tables(schema))
        return response

    def _get_table(self, request: spb.GetTableRequest) -> spb.GetTableResponse:
        name = _resolve(request)
        snapshot = table_codec.requested_snapshot(self.catalog.table(name), request)
        return self.descriptions.describe(name, snapshot)

    def _statistics(
        self, request: spb.GetTableStatisticsRequest, timeout: float
    ) -> spb.GetTableStatisticsResponse:
        name = _resolve(request)
        table = self.catalog.table(name)
        snapshot = table.snapshot(codec.check_snapshot(request.snapshot))
        files = snapshot.files()
        if request.HasField("predicate"):
            predicate = codec.decode_tuple_domain(request.predicate, table.query_schema)
            result = prune(
                table, predicate, snapshot=snapshot.instant, limits=self.limits.prune_limits(timeout)
            )
            kept = {(s.partition, s.file_group) for s in result.splits}
            files = [f for f in files if (f.partition, f.file_group) in kept]
        return table_codec.encode_statistics(snapshot.instant, table_statistics(snapshot, files))

    def _prune(
        self, request: spb.PruneRequest, record: RequestRecord, timeout: float, client: str
    ) -> tuple[PruneResult, list[Split]]:
        """The prune and its splits, each kept file cut into the request's byte ranges; its log line
        counts the storage requests of the whole request (the catalog's check that the table is
        unchanged, then the prune), the response those of the prune."""
        max_split_bytes = codec.check_split_bytes(request.max_split_bytes)
        (planned, decoded), requests = self._plan(request, timeout)  # deciding files reads nothing more
        result = self._finish(record, planned.collect(), requests, decoded, client)
        return result, [r for split in result.splits for r in split.ranges(max_split_bytes)]

    def _plan(
        self, request: spb.PruneRequest, timeout: float
    ) -> tuple[tuple[PlannedPrune, _Decoded], StorageRequests]:
        """`_prune`'s plan, its lookups done and no file decided yet, the request decoded, and the
        storage requests of the request so far."""
        with counting() as requests:
            decoded = self._decode(request)
            planned = prune_stream(
                decoded.table,
                decoded.predicate,
                snapshot=decoded.snapshot,
                limits=self.limits.prune_limits(timeout),
            )
        return (planned, decoded), requests.value()

    def _decode(self, request: spb.PruneRequest) -> _Decoded:
        """The table a prune request names (checked unchanged by the catalog), its predicate (the
        TupleDomain, AND what can be read of the engine's filter, and the text predicate), its
        snapshot, and the conditions over computed values no index holds (the client's, and those
        of the engine's filter)."""
        codec.check_no_sql_predicate(request)
        table = self.catalog.table(_resolve(request))
        schema = table.query_schema
        domain = (
            codec.decode_tuple_domain(request.predicate, schema)
            if request.HasField("predicate")
            else TupleDomain.all()
        )
        text = decode_text(request.text, request.text_notes, schema)
        notes: tuple[str, ...] = ()
        unindexed = tuple(request.unindexed_conditions)
        if request.HasField("filter"):
            conjuncts, undecoded = decode_engine_filter(request.filter, schema)
            zone = request.filter.time_zone
            translation = translate_trino(conjuncts, schema, table.indexed_calls, zone)
            domain = domain.intersect(translation.domain)
            notes = (*undecoded, *translation.widened)
            atoms = text_atoms(conjuncts, zone)
            if atoms:  # text atoms over expressions, for the text indexes over expressions
                more = text_condition(" AND ".join(f"({atom})" for atom in atoms), schema)
                text = TextPredicate(all_of([text.condition, more.condition]), (*text.notes, *more.notes))
            if self.workload is not None:
                unindexed = (*unindexed, *_unindexed_engine_conditions(conjuncts, zone, table))
        snapshot = codec.check_snapshot(request.snapshot)
        return _Decoded(table, BoundPredicate(domain, notes, text), snapshot, unindexed)

    def _finish(
        self,
        record: RequestRecord,
        result: PruneResult,
        requests: StorageRequests,
        decoded: _Decoded,
        client: str,
    ) -> PruneResult:
        """Count, log and add to the workload log a finished prune; the result as it is answered
        (paths redacted)."""
        record.prune(result, requests)
        self.metrics.prune_result(API, result)
        if self.workload is not None:
            predicate = decoded.predicate
            self.workload.record_prune(
                decoded.table, client, predicate.domain, result, predicate.text.condition, decoded.unindexed
            )
        return self.catalog.redact.prune_result(result)

    def _call(
        self,
        context: grpc.ServicerContext,
        method: str,
        table: str | None,
        work: Callable[[RequestRecord, float], T],
        inline: bool = False,
    ) -> T:
        """Run `work(record, seconds left)` under the request's deadline; count, time and log it;
        map failures. `inline` work (a table's description: a freshness check and an encoding,
        on every query's critical path) runs in this thread (`Workers.run_inline`)."""
        with self._handling(context, method, table) as record:
            timeout = self.workers.timeout(context.time_remaining())
            run = self.workers.run_inline if inline else self.workers.run
            return run(lambda: work(record, timeout), timeout)
        raise AssertionError("_handling returned after a failure")  # pragma: no cover - it aborts

    @contextlib.contextmanager
    def _handling(
        self, context: grpc.ServicerContext, method: str, table: str | None
    ) -> Iterator[RequestRecord]:
        """Count, time and log one request; a failure in the block aborts the call with its status."""
        failure: Failure
        with self.metrics.request(API, method, table) as record:
            try:
                yield record
                return
            except Exception as exc:
                failure = classify(exc, self.catalog.redact)
                record.status = failure.status
                if failure.status == Status.INTERNAL:
                    log.error("%s failed", method, exc_info=exc)
        _abort(context, failure)

    def undecodable(self, method: str, error: Exception, context: grpc.ServicerContext) -> NoReturn:
        """Answer a request whose body is not the method's message: INVALID_ARGUMENT, counted."""
        failure = classify(InvalidInputError(f"the request is not a valid {method} request: {error}"))
        with self.metrics.request(API, method) as record:
            record.status = failure.status
        _abort(context, failure)


# The trailer that carries a failure's reason (`pruner.serving.errors.Failure.reason`).
REASON_TRAILER = "lakeprune-reason"


def _abort(context: grpc.ServicerContext, failure: Failure) -> NoReturn:
    if failure.reason is not None:
        context.set_trailing_metadata(((REASON_TRAILER, failure.reason),))
    context.abort(grpc_code(failure.status), failure.message)
    raise AssertionError("context.abort returned")  # pragma: no cover - abort always raises


class _Pages:
    """A plan's splits cut into byte ranges, in pages of at most `size`: a page goes out as soon
    as its batch is decided (a batch without splits sends none). `decide_next` (in a worker)
    decides files until a page is `ready` or none is left; `take` (in the call's thread) hands
    a ready page out; `done` says, without deciding anything, that no page is left."""

    def __init__(self, planned: PlannedPrune, max_split_bytes: int, size: int) -> None:
        self.planned = planned
        self._batches = planned.batches()
        self._max_split_bytes = max_split_bytes
        self._size = size
        self._ready: collections.deque[list[Split]] = collections.deque()
        # the batches ran out: `planned.decided` says so before the last batch is asked for, but
        # a cancelled plan's batches end without it
        self._exhausted = False

    @property
    def ready(self) -> bool:
        return bool(self._ready)

    @property
    def done(self) -> bool:
        return not self._ready and (self._exhausted or self.planned.decided)

    def decide_next(self) -> None:
        while not self._ready and not self._exhausted:
            batch = next(self._batches, None)
            if batch is None:
                self._exhausted = True
                return
            ranges = [r for split in batch for r in split.ranges(self._max_split_bytes)]
            self._ready.extend(
                ranges[start : start + self._size] for start in range(0, len(ranges), self._size)
            )

    def take(self) -> list[Split] | None:
        return self._ready.popleft() if self._ready else None


def _unindexed_engine_conditions(
    conjuncts: Sequence[TrinoExpression], time_zone: str, table: LakeTable
) -> tuple[str, ...]:
    """The engine filter's comparisons of a computed value that no index of `table` holds, as
    lakeprune SQL (`translate_trino` left them out unread)."""
    computed = [c for c in conjuncts if isinstance(c, Call) and _compares_computed(c)]
    if not computed:
        return ()
    types = {c.name: c.type for c in table.config.schema.columns}
    readable = from_trino(computed, time_zone=time_zone).conjuncts
    return tuple(t for text in readable for t in unindexed_conditions(text, types, table.indexed_calls))


def _compares_computed(conjunct: Call) -> bool:
    """Whether `conjunct` compares a call's value (IN: its subject; else any operand)."""
    operands = conjunct.arguments[:1] if conjunct.function == "$in" else conjunct.arguments
    return any(isinstance(operand, Call) for operand in operands)


def _client(context: grpc.ServicerContext) -> str:
    """Who asks, for the workload log: the product of the client's user agent (`lakeprune-trino
    grpc-java-netty/1.68.1` is trino; lakeprune's own clients name themselves `lakeprune-NAME`)."""
    agent = next((str(v) for k, v in context.invocation_metadata() if k == "user-agent"), "")
    product = agent.split(" ", 1)[0].split("/", 1)[0]
    return product.removeprefix("lakeprune-") or "unknown"


def _table_name(request: Any) -> str | None:
    """The table a request names, for logs and metrics (None when it names none)."""
    if not request.HasField("table"):
        return None
    return f"{request.table.schema}.{request.table.table}"


def _resolve(request: spb.GetTableRequest | spb.PruneRequest) -> TableName:
    if not request.HasField("table") or not request.table.schema or not request.table.table:
        raise InvalidInputError("the request must name a table: table { schema: ..., table: ... }")
    return TableName(request.table.schema, request.table.table)
