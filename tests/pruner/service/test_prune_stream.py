"""`PruneStream`: a result too large for one `Prune` response comes in pages of
`limits.max_splits_per_response` splits, all cut from one plan — an index dropped while the stream
is being read changes nothing in it — and the client falls back to it by itself. Pages leave as the
plan decides their files: the first reaches the client before the last file is decided, a client
that cancels stops the plan, and for random predicates and page sizes (pages that cut a file's
byte ranges apart too) the pages concatenated are the unary prune's splits."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builder.index_build import execute
from pruner.client import PruningClient
from pruner.metadata.files_index import DataFile
from pruner.planner import planner
from pruner.planner.planner import Planner
from pruner.planner.prune import prune
from pruner.planner.result import Split
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import Value
from pruner.service import codec
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2_grpc as spb_grpc
from pruner.serving.config import Limits
from pruner.sidecar import Sidecar
from pruner.table.table import LakeTable
from tests.pruner.planner.conftest import Oracle
from tests.pruner.planner.test_invariant import random_predicates
from tests.pruner.service.conftest import SCHEMA, TABLE, StartSidecar, address, make_config
from tests.pruner.service.test_grpc_service import GOOD, failing, prune_request

SEQ_RANGE = TupleDomain.with_domains(
    {"seq": Domain(SortedRangeSet.of_ranges(Range(100, True, 400, True)), False)}
)


def test_prune_stream_pages_large_results(start_sidecar: StartSidecar, lake: str, indexed_table: str) -> None:
    sidecar = start_sidecar(lake, limits=Limits(max_splits_per_response=7))
    expected = prune(LakeTable.open(indexed_table), TupleDomain.all())
    with PruningClient(address(sidecar)) as client:
        error = failing(lambda: client._stub.Prune(prune_request(None)))
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "exceed limits.max_splits_per_response (7); use PruneStream" in error.details()
        messages = list(client._stub.PruneStream(prune_request(None, explain=True)))
        pages, last = messages[:-1], messages[-1]
        assert len(pages) == -(-expected.files_selected // 7) and all(len(m.splits) <= 7 for m in pages)
        # The first message says what is known before any file is decided; the last, without
        # splits, the counts and the explain record.
        assert (messages[0].snapshot, messages[0].files_total) == (expected.snapshot, expected.files_total)
        assert not messages[0].explain and last.explain and not last.splits
        assert (last.files_selected, last.files_total) == (expected.files_selected, expected.files_total)
        assert client.prune(SCHEMA, TABLE, TupleDomain.all(), stream=True).splits == expected.splits
        assert (
            client.prune(SCHEMA, TABLE, TupleDomain.all()).splits == expected.splits
        )  # falls back to the stream
        assert (
            client.prune(SCHEMA, TABLE, GOOD, stream=False).splits == client.prune(SCHEMA, TABLE, GOOD).splits
        )


def test_a_stream_is_one_plan_while_an_index_is_dropped(start_sidecar: StartSidecar, table_copy: str) -> None:
    sidecar = start_sidecar(str(Path(table_copy).parent), limits=Limits(max_splits_per_response=2))
    planned = prune(LakeTable.open(table_copy), SEQ_RANGE)
    assert planned.files_selected > 2, "the stream must have several pages"
    with PruningClient(address(sidecar)) as client:
        stream = client._stub.PruneStream(prune_request(SEQ_RANGE))
        first = next(stream)
        execute(table_copy, "DROP INDEX stats ON events")
        execute(table_copy, "DROP INDEX pstats ON events")
        rest = list(stream)
        after = client.prune(SCHEMA, TABLE, SEQ_RANGE, stream=True)
    streamed = [codec.decode_split(s) for m in [first, *rest] for s in m.splits]
    assert streamed == planned.splits  # the plan of the stream's start, nothing repeated or lost
    assert after.files_selected > planned.files_selected  # a new query sees the index gone


def test_large_files_come_as_byte_ranges(
    start_sidecar: StartSidecar, lake: str, indexed_table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`max_split_bytes` cuts each kept file into ranges (`Split.ranges`) in `Prune` and in every
    page of `PruneStream`; `files_selected` still counts files; below the minimum is refused."""
    sidecar = start_sidecar(lake, limits=Limits(max_splits_per_response=7))
    expected = prune(LakeTable.open(indexed_table), SEQ_RANGE)
    cut = 1 << 10
    monkeypatch.setattr(codec, "MIN_SPLIT_BYTES", cut)  # the table's files are a few KiB
    ranges = [r for s in expected.splits for r in s.ranges(cut)]
    assert len(ranges) > len(expected.splits) > 1
    with PruningClient(address(sidecar)) as client:
        streamed = client.prune(SCHEMA, TABLE, SEQ_RANGE, max_split_bytes=cut)
        assert streamed.splits == ranges and streamed.files_selected == expected.files_selected
        assert client.prune(SCHEMA, TABLE, SEQ_RANGE).splits == expected.splits
        error = failing(lambda: client._stub.Prune(prune_request(SEQ_RANGE, max_split_bytes=cut - 1)))
        with_sql = prune_request(SEQ_RANGE)
        with_sql.sql_predicate.filters.append("(seq > 100)")
        refused = failing(lambda: next(client._stub.PruneStream(with_sql)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "max_split_bytes 1,023 is below the minimum of 1,024 (0: one split per file)" in error.details()
    # the Spark bridge's SQL filters are not read over gRPC: refused, never ignored
    assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "sql_predicate is only read by the in-process Spark source" in refused.details()


def test_the_first_page_arrives_before_the_last_file_is_decided(
    start_sidecar: StartSidecar, lake: str, indexed_table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deciding the last kept file waits (up to 5 s) for the client to hold the first page: a
    sidecar that plans the whole table before it sends anything makes it wait in vain."""
    expected = prune(LakeTable.open(indexed_table), TupleDomain.all())
    monkeypatch.setattr(planner, "FILES_PER_BATCH", 3, raising=False)
    received = threading.Event()
    waited: list[bool] = []
    made = itertools.count(1)
    split = Planner._split

    def last_waits(self: Planner, f: DataFile, typed: dict[str, dict[str, Value | None]]) -> Split:
        if next(made) == len(expected.splits):
            waited.append(received.wait(5))
        return split(self, f, typed)

    monkeypatch.setattr(Planner, "_split", last_waits)
    sidecar = start_sidecar(lake, limits=Limits(max_splits_per_response=2))
    with PruningClient(address(sidecar)) as client:
        stream = client._stub.PruneStream(prune_request(None))
        first = next(stream)
        received.set()
        rest = list(stream)
    assert waited == [True], "the first page left only after the last file was decided"
    assert [codec.decode_split(s) for m in [first, *rest] for s in m.splits] == expected.splits


@pytest.mark.parametrize("batch", [3, planner.FILES_PER_BATCH])
def test_work_is_handed_to_the_pool_once_a_batch_and_a_description_not_at_all(
    start_sidecar: StartSidecar, lake: str, indexed_table: str, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    """Each hand-over to `Workers` costs two thread switches: planning and the first batch take one,
    every further batch one, the end of the plan none (the last batch says it is the last), and a
    table's description (GetTable, on every query's critical path) none."""
    expected = prune(LakeTable.open(indexed_table), TupleDomain.all())
    monkeypatch.setattr(planner, "FILES_PER_BATCH", batch)
    sidecar = start_sidecar(lake, limits=Limits(max_splits_per_response=2))
    handed: list[float] = []
    run = sidecar.workers.run

    def counted(work: Callable[[], Any], timeout: float) -> Any:
        handed.append(timeout)
        return run(work, timeout)

    monkeypatch.setattr(sidecar.workers, "run", counted)
    with PruningClient(address(sidecar)) as client:
        messages = list(client._stub.PruneStream(prune_request(None)))
        assert [codec.decode_split(s) for m in messages for s in m.splits] == expected.splits
        assert len(handed) == -(-expected.files_total // batch)
        assert client.get_table(SCHEMA, TABLE).name.table == TABLE
    assert len(handed) == -(-expected.files_total // batch)


def test_a_cancelled_stream_stops_the_plan(
    start_sidecar: StartSidecar, lake: str, indexed_table: str, slow_splits: list[DataFile]
) -> None:
    total = prune(LakeTable.open(indexed_table), TupleDomain.all()).files_selected
    made = slow_splits
    made.clear()  # the unary prune's above
    sidecar = start_sidecar(lake, limits=Limits(max_splits_per_response=1))
    with PruningClient(address(sidecar)) as client:
        stream = client._stub.PruneStream(prune_request(None))
        next(stream)
        stream.cancel()
        time.sleep(0.5)
        stopped = len(made)
        time.sleep(0.5)
    assert len(made) == stopped < total
    counted = {"api": "grpc", "method": "PruneStream", "status": "cancelled"}
    assert sidecar.metrics.registry.get_sample_value("lakeprune_requests_total", counted) == 1


@pytest.fixture(scope="module")
def paged(lake: str) -> Iterator[dict[int, Any]]:
    """Stubs of sidecars that page by 1, 3 and 7 splits."""
    with (
        Sidecar(make_config(lake, Limits(max_splits_per_response=1))) as one,
        Sidecar(make_config(lake, Limits(max_splits_per_response=3))) as three,
        Sidecar(make_config(lake, Limits(max_splits_per_response=7))) as seven,
    ):
        sidecars = {1: one, 3: three, 7: seven}
        assert all(s.wait_ready(10) for s in sidecars.values())
        channels = {size: grpc.insecure_channel(address(s)) for size, s in sidecars.items()}
        yield {size: spb_grpc.PruningServiceStub(c) for size, c in channels.items()}
        for channel in channels.values():
            channel.close()


def test_pages_concatenated_are_the_unary_prune(
    paged: dict[int, Any], indexed_table: str, oracle: Oracle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(codec, "MIN_SPLIT_BYTES", 1 << 10)  # the table's files are a few KiB
    table = LakeTable.open(indexed_table)

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(random_predicates(oracle), st.sampled_from(sorted(paged)), st.sampled_from([0, 1 << 10, 3 << 10]))
    def check(predicate: TupleDomain, size: int, cut: int) -> None:
        unary = prune(table, predicate)
        messages = list(paged[size].PruneStream(prune_request(predicate, max_split_bytes=cut, explain=True)))
        streamed = [codec.decode_split(s) for m in messages for s in m.splits]
        assert streamed == [r for s in unary.splits for r in s.ranges(cut)]
        assert len({(s.path, s.start) for s in streamed}) == len(streamed), "a split returned twice"
        assert oracle.files_matching(predicate) <= {s.path for s in streamed}
        assert all(len(m.splits) <= size for m in messages)
        last = messages[-1]
        assert (last.files_total, last.files_selected) == (unary.files_total, unary.files_selected)
        assert [(e.step, e.files_in, e.files_out) for e in last.explain] == [
            (s.step, s.files_in, s.files_out) for s in unary.explain
        ]

    check()
