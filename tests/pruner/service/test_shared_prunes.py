"""Identical prune requests share one plan (`pruner.service.shared_prunes`): `SharedPrunes` alone
(who plans, who waits, what is remembered and for how long), then through a sidecar: a request
equal to one being planned replays its messages instead of planning again, a later equal one
replays the remembered plan, an unpinned request or a different predicate plans for itself, and a
first request that is cancelled leaves the waiting one to plan — every answer equal to the unary
prune's, every file once."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from pruner.client import PruningClient
from pruner.metadata.files_index import DataFile
from pruner.planner.prune import prune
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.service.shared_prunes import SharedPrunes, request_key
from pruner.serving.config import Limits
from pruner.table.table import LakeTable
from tests.pruner.service.conftest import StartSidecar, address
from tests.pruner.service.test_grpc_service import prune_request

SEQ_RANGE = TupleDomain.with_domains(
    {"seq": Domain(SortedRangeSet.of_ranges(Range(100, True, 400, True)), False)}
)


# SharedPrunes alone ---------------------------------------------------------------------------------


def test_the_first_request_plans_and_an_equal_one_waits_for_it() -> None:
    shared: SharedPrunes[str] = SharedPrunes(remember=4)
    flight, first = shared.join(b"k")
    again, second_first = shared.join(b"k")
    assert first and not second_first and again is flight
    assert again.wait(0.01) is None  # still planning
    shared.settle(b"k", flight, "plan", keep=True)
    assert again.wait(0) == "plan"
    later, later_first = shared.join(b"k")  # remembered: no new plan
    assert not later_first and later.wait(0) == "plan" and len(shared) == 1
    other, other_first = shared.join(b"other")
    assert other_first and other is not flight


def test_a_first_request_that_fails_leaves_the_next_to_plan() -> None:
    shared: SharedPrunes[str] = SharedPrunes(remember=4)
    flight, _ = shared.join(b"k")
    waiting, _ = shared.join(b"k")
    shared.settle(b"k", flight, None, keep=True)
    assert waiting.wait(0) is None and len(shared) == 0
    _, first = shared.join(b"k")
    assert first


def test_a_plan_not_kept_is_shared_with_the_waiting_only() -> None:
    shared: SharedPrunes[str] = SharedPrunes(remember=4)
    flight, _ = shared.join(b"k")
    waiting, _ = shared.join(b"k")
    shared.settle(b"k", flight, "with a fallback", keep=False)
    assert waiting.wait(0) == "with a fallback"
    _, first = shared.join(b"k")
    assert first and len(shared) == 0


def test_only_the_newest_finished_plans_are_remembered() -> None:
    shared: SharedPrunes[str] = SharedPrunes(remember=2)
    for key in (b"a", b"b", b"c"):
        flight, _ = shared.join(key)
        shared.settle(key, flight, key.decode(), keep=True)
    shared.join(b"b")  # used again: the newest
    flight, _ = shared.join(b"d")
    shared.settle(b"d", flight, "d", keep=True)
    assert len(shared) == 2
    assert {key for key in (b"a", b"b", b"c", b"d") if not shared.join(key)[1]} == {b"b", b"d"}


def test_remembering_none_still_shares_a_running_plan() -> None:
    shared: SharedPrunes[str] = SharedPrunes(remember=0)
    flight, _ = shared.join(b"k")
    waiting, first = shared.join(b"k")
    shared.settle(b"k", flight, "plan", keep=True)
    assert not first and waiting.wait(0) == "plan" and len(shared) == 0
    assert shared.join(b"k")[1]


def test_only_a_request_that_pins_a_snapshot_has_a_key() -> None:
    assert request_key(prune_request(SEQ_RANGE)) is None
    pinned = prune_request(SEQ_RANGE, snapshot="20261201000000000")
    assert request_key(pinned) == request_key(prune_request(SEQ_RANGE, snapshot="20261201000000000"))
    assert request_key(pinned) != request_key(prune_request(SEQ_RANGE, snapshot="20261201000000001"))
    assert request_key(pinned) != request_key(prune_request(None, snapshot="20261201000000000"))


# Through a sidecar ----------------------------------------------------------------------------------


def _streams(client: PruningClient, requests: list[spb.PruneRequest]) -> list[list[spb.PruneResponse]]:
    """The messages of each request's PruneStream, all started together."""
    answers: list[list[spb.PruneResponse]] = [[] for _ in requests]

    def read(i: int) -> None:
        answers[i] = list(client._stub.PruneStream(requests[i]))

    threads = [threading.Thread(target=read, args=(i,)) for i in range(len(requests))]
    for thread in threads:
        thread.start()
        time.sleep(0.05)  # the first is planning when the next arrives
    for thread in threads:
        thread.join(30)
    return answers


def _paths(messages: list[spb.PruneResponse]) -> list[tuple[str, int]]:
    return [(s.path, s.start) for m in messages for s in m.splits]


def _requests_logged(sidecar: Any) -> Callable[[], float]:
    def count() -> float:
        labels = {"api": "grpc", "method": "PruneStream", "status": "ok"}
        return sidecar.metrics.registry.get_sample_value("lakeprune_requests_total", labels) or 0.0

    return count


def test_equal_requests_share_one_plan_and_the_same_answer(
    start_sidecar: StartSidecar, lake: str, indexed_table: str, slow_splits: list[DataFile]
) -> None:
    table = LakeTable.open(indexed_table)
    expected = prune(table, SEQ_RANGE)
    snapshot = expected.snapshot
    assert snapshot is not None and expected.files_selected > 2
    sidecar = start_sidecar(lake, limits=Limits(max_splits_per_response=1))
    request = prune_request(SEQ_RANGE, snapshot=snapshot, explain=True)
    slow_splits.clear()  # the unary prune's above
    with PruningClient(address(sidecar)) as client:
        together = _streams(client, [request, request, request])
        planned_once = len(slow_splits)
        later = list(client._stub.PruneStream(request))  # remembered: replayed, not planned
        assert len(slow_splits) == planned_once == expected.files_selected
        unpinned = _streams(client, [prune_request(SEQ_RANGE), prune_request(SEQ_RANGE)])
        assert len(slow_splits) == planned_once + 2 * expected.files_selected
    wanted = [(s.path, s.start) for s in expected.splits]
    for answer in [*together, later, *unpinned]:
        assert _paths(answer) == wanted  # every file once, in the plan's order
        assert (answer[-1].files_selected, answer[-1].files_total) == (
            expected.files_selected,
            expected.files_total,
        )
    assert _requests_logged(sidecar)() == 6  # each request counted as a prune of its own


def test_a_cancelled_first_request_leaves_the_waiting_one_to_plan(
    start_sidecar: StartSidecar, lake: str, indexed_table: str, slow_splits: list[DataFile]
) -> None:
    expected = prune(LakeTable.open(indexed_table), TupleDomain.all())
    sidecar = start_sidecar(lake, limits=Limits(max_splits_per_response=1, remembered_prunes=0))
    request = prune_request(None, snapshot=expected.snapshot)
    with PruningClient(address(sidecar)) as client:
        first = client._stub.PruneStream(request)
        next(first)
        waiting: list[spb.PruneResponse] = []
        reader = threading.Thread(target=lambda: waiting.extend(client._stub.PruneStream(request)))
        reader.start()
        time.sleep(0.1)
        first.cancel()
        reader.join(30)
    assert _paths(waiting) == [(s.path, s.start) for s in expected.splits]
    assert waiting[-1].files_selected == expected.files_selected
