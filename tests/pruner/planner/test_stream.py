"""A plan read batch by batch is the plan collected at once: for random predicates and planner
batch sizes, `prune_stream`'s batches concatenated are `prune`'s splits — no file twice, none that
holds a match missing (the oracle) — every batch decides at most its share of the files, and the
explain record counts the same files in and out of every step; the plan knows it has decided
every file as it hands out the last batch. Cancelling stops the batches."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pruner.planner import planner
from pruner.planner.prune import prune, prune_stream
from pruner.planner.result import PruneResult
from pruner.predicate.tuple_domain import TupleDomain
from pruner.table.table import LakeTable
from tests.pruner.planner.conftest import Oracle
from tests.pruner.planner.test_invariant import random_predicates


def _counts(result: PruneResult) -> list[tuple[object, ...]]:
    return [(s.step, s.files_in, s.files_out, s.skipped, s.fallback) for s in result.explain]


def test_batches_are_the_plan_collected(indexed_table: str, oracle: Oracle) -> None:
    table = LakeTable.open(indexed_table)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(random_predicates(oracle), st.sampled_from([1, 2, 7, 1_000]))
    def check(predicate: TupleDomain, batch: int) -> None:
        whole = prune(table, predicate)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(planner, "FILES_PER_BATCH", batch)
            planned = prune_stream(table, predicate)
            batches, decided = [], []
            for b in planned.batches():
                batches.append(b)
                decided.append(planned.decided)
        streamed = [s for b in batches for s in b]
        assert streamed == whole.splits
        assert len({s.path for s in streamed}) == len(streamed), "a file returned twice"
        assert oracle.files_matching(predicate) <= {s.path for s in streamed}
        assert all(len(b) <= batch for b in batches)
        # the last batch says it is the last as it is handed out, none before it does
        assert decided == [i == len(batches) - 1 for i in range(len(batches))]
        assert len(batches) == (0 if predicate.is_none() else -(-whole.files_total // batch))
        result = planned.result()
        assert result.splits == whole.splits and _counts(result) == _counts(whole)
        assert (result.snapshot, result.files_total, result.widened) == (
            whole.snapshot,
            whole.files_total,
            whole.widened,
        )

    check()


def test_a_cancelled_plan_decides_no_more_files(indexed_table: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(planner, "FILES_PER_BATCH", 2)
    planned = prune_stream(LakeTable.open(indexed_table), TupleDomain.all())
    batches = planned.batches()
    first = next(batches)
    assert not planned.cancelled
    planned.cancel()
    assert len(first) == 2 and list(batches) == [] and planned.cancelled
    with pytest.raises(RuntimeError, match="have not all been read"):
        planned.result()


def test_a_predicate_no_row_can_match_streams_nothing(indexed_table: str) -> None:
    table = LakeTable.open(indexed_table)
    planned = prune_stream(table, TupleDomain.none())
    assert list(planned.batches()) == []
    planned.cancel()  # after the last batch: nothing to stop
    assert not planned.cancelled
    assert planned.result() == prune(table, TupleDomain.none())
    assert [s.step for s in planned.result().explain] == ["predicate"]
