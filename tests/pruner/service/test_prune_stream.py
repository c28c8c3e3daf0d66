"""`PruneStream`: a result too large for one `Prune` response comes in pages of
`limits.max_splits_per_response` splits, all cut from one plan — an index dropped while the stream
is being read changes nothing in it — and the client falls back to it by itself."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from builder.index_build import execute
from pruner.client import PruningClient
from pruner.planner.prune import prune
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.service import codec
from pruner.serving.config import Limits
from pruner.table.table import LakeTable
from tests.pruner.service.conftest import SCHEMA, TABLE, StartSidecar, address
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
        assert len(messages) == -(-expected.files_selected // 7) and all(len(m.splits) <= 7 for m in messages)
        assert messages[0].explain and not messages[1].explain
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
