"""The report per index over gRPC: `Prune` and `PruneStream` asked for explain carry each index's
files pruned or why none, and the client decodes them into the result the in-process planner
returns; without explain, as the explain record, no report is sent."""

from __future__ import annotations

import pytest

from pruner.client import PruningClient
from pruner.planner.prune import prune
from pruner.table.table import LakeTable
from tests.pruner.service.conftest import SCHEMA, TABLE


@pytest.mark.parametrize("stream", [False, True], ids=["Prune", "PruneStream"])
def test_the_report_round_trips(client: PruningClient, indexed_table: str, stream: bool) -> None:
    where = "seq < 100 AND hour(ts) = 5"
    local = prune(LakeTable.open(indexed_table), where)
    remote = client.prune(SCHEMA, TABLE, where, explain=True, stream=stream)
    assert remote.index_report == local.index_report
    assert {e.index for e in remote.index_report} == {"record_index", "stats", "pstats", "bf", "by_hot_day"}
    stats = next(e for e in remote.index_report if e.index == "stats")
    assert stats.files_pruned > 0 and stats.why_not is None
    bf = next(e for e in remote.index_report if e.index == "bf")
    assert bf.files_pruned == 0 and bf.why_not == (
        "the predicate constrains none of its columns (token, id); it constrains seq"
    )
    assert client.prune(SCHEMA, TABLE, where, stream=stream).index_report == ()
