"""The planner's cost guard and deadline (`pruner.planner.limits`): each guard decision on its own
(no table), then on the indexed table with a secondary index added — which lookups are skipped and
why the explain record says, that a guarded or interrupted prune keeps every file it does not
prove empty (hypothesis, against the oracle), and the deadline, passed at every point of a prune
by an injected clock."""

from __future__ import annotations

import itertools
import logging
import re
import shutil
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from builder import LakepruneTable
from pruner.client import PruningClient
from pruner.planner.keys import combinations, discrete_keys, key_array
from pruner.planner.limits import DEFAULT_LIMITS, PruneLimits, expected_pruned_share
from pruner.planner.prune import prune
from pruner.planner.result import ExplainStep, PruneResult
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.tuple_domain import TupleDomain
from pruner.serving.config import Limits
from pruner.sidecar import Sidecar
from pruner.table.table import LakeTable
from pruner.types import parse_type
from tests.pruner.planner.conftest import COLUMNS, Oracle
from tests.pruner.planner.test_invariant import _pool, domains
from tests.pruner.service.conftest import SCHEMA, TABLE, address, make_config

NO_GUARD = PruneLimits(lookup_min_pruned_share=0.0)
EVERY_LOOKUP = PruneLimits(lookup_min_pruned_share=0.0, range_max_index_share=1.0)


class StepClock:
    """A clock that reads 0 for its first `ticks` reads and 1,000 from then on (deadline: 1)."""

    def __init__(self, ticks: int) -> None:
        self.ticks = ticks
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return 0.0 if self.reads <= self.ticks else 1000.0


def passing_after(ticks: int, **options: float) -> PruneLimits:
    clock = StepClock(ticks)
    return PruneLimits(deadline=1.0, clock=clock, **options)  # type: ignore[arg-type]


# Decisions, without a table ------------------------------------------------------------------


def test_expected_pruned_share() -> None:
    assert expected_pruned_share(0, 40) == 1.0  # no key: nothing expected to match
    assert expected_pruned_share(1, 1) == 0.0  # one file holds every present key
    assert expected_pruned_share(5, 1) == 0.0
    assert expected_pruned_share(100, 100) == pytest.approx(0.366, abs=0.001)  # ~ 1/e
    assert expected_pruned_share(30_000, 125) < 1e-100  # the TPC-H o_custkey dynamic filter
    shares = [expected_pruned_share(k, 50) for k in range(0, 500, 10)]
    assert shares == sorted(shares, reverse=True)  # more keys never promise more pruning


def test_few_keys_always_run() -> None:
    assert DEFAULT_LIMITS.lookup_skipped("c", DEFAULT_LIMITS.lookup_free_keys, 1) is None
    assert PruneLimits(lookup_free_keys=3).lookup_skipped("c", 3, 1) is None
    assert DEFAULT_LIMITS.lookup_skipped("c", 10**6, 0) is None  # no file in play: nothing to skip


def test_many_keys_that_every_file_holds_are_skipped_and_say_why() -> None:
    reason = DEFAULT_LIMITS.lookup_skipped("o_custkey", 30_000, 125)
    assert reason is not None
    assert reason.startswith("o_custkey: 30,000 keys over 125 files are expected to prune 0.0%")
    assert "below the 5%" in reason and "more than 1,000 keys" in reason
    one_file = DEFAULT_LIMITS.lookup_skipped("s_suppkey", 1_001, 1)  # a bloom step on one file
    assert one_file is not None and "over 1 files" in one_file


def test_many_keys_over_many_files_run_when_they_may_prune() -> None:
    # 5,000 keys over 100,000 files: ~95% of the files are expected to hold none of them.
    assert DEFAULT_LIMITS.lookup_skipped("c", 5_000, 100_000) is None
    # The threshold is the configured share: 0 never skips, 1 skips every lookup it applies to.
    assert PruneLimits(lookup_min_pruned_share=0.0).lookup_skipped("c", 10**6, 2) is None
    assert PruneLimits(lookup_min_pruned_share=1.0).lookup_skipped("c", 1_001, 10**9) is not None


def test_deadline_reads_the_injected_clock() -> None:
    now = [100.0]
    limits = PruneLimits(clock=lambda: now[0]).within(2.0)
    assert limits.deadline == 102.0 and not limits.deadline_passed()
    now[0] = 102.5
    assert limits.deadline_passed()
    assert not PruneLimits(clock=lambda: now[0]).within(None).deadline_passed()


def test_key_arrays_drop_values_no_row_can_hold() -> None:
    assert key_array([1, 2**70, -3], parse_type("bigint")).to_pylist() == [1, -3]
    assert key_array([1, 200], parse_type("tinyint")).to_pylist() == [1]
    decimals = [Decimal("1.5"), Decimal("1.234"), Decimal("1E+40")]
    assert key_array(decimals, parse_type("decimal(10,2)")).to_pylist() == [Decimal("1.50")]
    assert key_array(["a", "b"], parse_type("string")).type == pa.string()
    assert key_array(["a", 7], parse_type("bigint")).to_pylist() == [7]  # no bigint equals "a"
    assert key_array([5, "b"], parse_type("string")).to_pylist() == ["b"]


def test_packed_keys_are_converted_at_once_and_checked_like_any() -> None:
    packed = SortedRangeSet.of_integers(np.array([200, 1, -3], dtype=np.int64))
    assert discrete_keys(packed, parse_type("bigint")).to_pylist() == [-3, 1, 200]
    assert discrete_keys(packed, parse_type("tinyint")).to_pylist() == [-3, 1]
    assert discrete_keys(packed, parse_type("string")).to_pylist() == []  # no string equals a number
    assert discrete_keys(SortedRangeSet.of_values("b", "a"), parse_type("string")).to_pylist() == ["a", "b"]


def test_combinations_are_the_cartesian_product() -> None:
    a, b = pa.array([1, 2, 3]), pa.array(["x", "y"])
    got = combinations([a, b])
    assert list(zip(got[0].to_pylist(), got[1].to_pylist(), strict=True)) == list(
        itertools.product([1, 2, 3], ["x", "y"])
    )
    assert combinations([a, pa.array([], pa.string())])[0].to_pylist() == []


# On a table ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def guarded_table(indexed_table: str, spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The indexed table (record index, bloom filters on `token` and `id`, column stats) with
    secondary indexes on `token` and `hot`."""
    location = str(tmp_path_factory.mktemp("guard") / "events")
    shutil.copytree(indexed_table, location)
    table = LakepruneTable(location, spark)
    table.sql("CREATE INDEX by_token ON events USING secondary_index (token)")
    table.sql("CREATE INDEX by_hot ON events USING secondary_index (hot)")
    return location


@pytest.fixture(scope="module")
def guarded_oracle(guarded_table: str) -> Oracle:
    return Oracle(LakeTable.open(guarded_table).snapshot())


def _tokens(oracle: Oracle, count: int) -> list[str]:
    present = sorted({r["token"] for rows in oracle.rows.values() for r in rows})
    return (present + [f"absent-{i}" for i in range(count)])[:count]


def _step(result: PruneResult, name: str) -> ExplainStep:
    return next(s for s in result.explain if s.step == name)


def _keeps_every_match(result: PruneResult, oracle: Oracle, predicate: TupleDomain) -> None:
    paths = [s.path for s in result.splits]
    assert len(paths) == len(set(paths)), "a file returned twice"
    assert oracle.files_matching(predicate) <= set(paths)


def test_large_in_lists_skip_the_lookups_that_cannot_pay(guarded_table: str, guarded_oracle: Oracle) -> None:
    table = LakeTable.open(guarded_table)
    ids = TupleDomain.with_domains({"id": Domain.multiple_values(range(1_500))})
    result = prune(table, ids)
    for name in ("record_index", "bloom_filters"):
        step = _step(result, name)
        weighed = re.search(r"1,500 keys over ([\d,]+) files", step.skipped or "")
        # The guard weighs the keys against the files in play as the lookups know them before any
        # file is decided: those the partition-level and key steps left, at least the step's files_in.
        assert weighed is not None and int(weighed[1].replace(",", "")) >= step.files_in, step
        assert step.files_out == step.files_in
    assert result.fallbacks == 0
    _keeps_every_match(result, guarded_oracle, ids)
    tokens = TupleDomain.with_domains({"token": Domain.multiple_values(_tokens(guarded_oracle, 1_500))})
    result = prune(table, tokens)
    step = _step(result, "secondary_index")
    assert step.skipped is not None and step.skipped.startswith("token (by_token): 1,500 keys"), step
    _keeps_every_match(result, guarded_oracle, tokens)


def test_without_the_guard_the_same_lookups_run(guarded_table: str, guarded_oracle: Oracle) -> None:
    table = LakeTable.open(guarded_table)
    for predicate, steps in [
        (
            TupleDomain.with_domains({"id": Domain.multiple_values(range(1_500))}),
            ("record_index", "bloom_filters"),
        ),
        (
            TupleDomain.with_domains({"token": Domain.multiple_values(_tokens(guarded_oracle, 1_500))}),
            ("secondary_index", "bloom_filters"),
        ),
    ]:
        result = prune(table, predicate, limits=NO_GUARD)
        for name in steps:
            assert _step(result, name).skipped is None, _step(result, name)
        _keeps_every_match(result, guarded_oracle, predicate)


def test_few_keys_run_and_prune(guarded_table: str, guarded_oracle: Oracle) -> None:
    table = LakeTable.open(guarded_table)
    absent = TupleDomain.with_domains({"token": Domain.multiple_values(["absent-1", "absent-2"])})
    result = prune(table, absent)
    assert _step(result, "secondary_index").skipped is None
    assert result.files_selected == 0 == len(guarded_oracle.files_matching(absent))
    ids = TupleDomain.with_domains({"id": Domain.multiple_values([1, 2, 3])})
    result = prune(table, ids)
    assert _step(result, "record_index").skipped is None and result.files_selected < result.files_total
    _keeps_every_match(result, guarded_oracle, ids)


def test_a_column_the_guard_skips_does_not_stop_the_others(
    guarded_table: str, guarded_oracle: Oracle
) -> None:
    # Bloom filters on `token` (1,500 values: skipped) and `id` (3 values: probed) in one step.
    predicate = TupleDomain.with_domains(
        {
            "token": Domain.multiple_values(_tokens(guarded_oracle, 1_500)),
            "id": Domain.multiple_values([1, 2, 3]),
        }
    )
    no_record_index = PruneLimits(max_key_lookups=0)  # leave `id` to the bloom filters
    result = prune(LakeTable.open(guarded_table), predicate, limits=no_record_index)
    step = _step(result, "bloom_filters")
    assert step.skipped is not None and step.skipped.startswith("token: 1,500 keys"), step
    assert step.fallback is None and step.files_out < step.files_in
    _keeps_every_match(result, guarded_oracle, predicate)


def test_the_deadline_passing_during_a_step_keeps_its_files(
    guarded_table: str, guarded_oracle: Oracle, caplog: pytest.LogCaptureFixture
) -> None:
    # 2,000 absent tokens within the column's min / max (so column stats keep every file): every
    # file's filter is probed with both chunks of hashes, and the deadline is checked between them.
    predicate = TupleDomain.with_domains({"token": Domain.multiple_values([f"t{i}x" for i in range(2_000)])})
    table = LakeTable.open(guarded_table)
    no_secondary = {"lookup_min_pruned_share": 0.0, "max_key_lookups": 0}
    counting = StepClock(10**9)
    prune(table, predicate, limits=PruneLimits(deadline=1.0, clock=counting, **no_secondary))  # type: ignore[arg-type]
    during = 0
    for ticks in range(counting.reads + 1):
        with caplog.at_level(logging.WARNING, logger="pruner.planner"):
            result = prune(table, predicate, limits=passing_after(ticks, **no_secondary))
        _keeps_every_match(result, guarded_oracle, predicate)
        fallbacks = [s for s in result.explain if s.fallback]
        if ticks == counting.reads:
            assert not fallbacks and result.files_selected < result.files_total  # bloom filters pruned
            continue
        assert fallbacks and all(s.files_out == s.files_in for s in fallbacks)
        first = result.explain.index(fallbacks[0])
        # Every later step falls back, or had nothing to do (skipped when it was planned, before the
        # deadline passed during an earlier step's batches): none removes a file.
        later = result.explain[first:]
        assert all(s.fallback or s.skipped for s in later) and all(s.files_out == s.files_in for s in later)
        assert result.fallbacks == len(fallbacks)
        during += "during this step" in fallbacks[0].fallback  # type: ignore[operator]
    assert during >= 1  # the bloom step was interrupted between its batches at least once
    assert "planning deadline passed" in caplog.text


def test_a_passed_deadline_falls_back_every_step(guarded_table: str, guarded_oracle: Oracle) -> None:
    predicate = TupleDomain.with_domains({"id": Domain.single_value(5)})
    result = prune(LakeTable.open(guarded_table), predicate, limits=passing_after(0))
    assert all(s.fallback and "before this step" in s.fallback for s in result.explain)
    assert result.files_selected == result.files_total and result.fallbacks == len(result.explain)


def test_the_sidecar_deadline_counts_its_fallbacks(guarded_table: str) -> None:
    limits = Limits(prune_deadline_seconds=1e-9)  # passed before the first step
    with Sidecar(make_config(str(Path(guarded_table).parent), limits)) as sidecar:
        assert sidecar.wait_ready(10)
        with PruningClient(address(sidecar)) as client:
            result = client.prune(SCHEMA, TABLE, "id = 5", explain=True)
        counted = sidecar.metrics.registry.get_sample_value(
            "lakeprune_prune_fallbacks_total", {"api": "grpc"}
        )
    assert result.files_selected == result.files_total
    assert all(s.fallback and "deadline passed" in s.fallback for s in result.explain)
    assert counted == result.fallbacks == len(result.explain)


# The invariant, under every guard setting and deadline ----------------------------------------


@st.composite
def limits(draw: st.DrawFn) -> PruneLimits:
    ticks = draw(st.one_of(st.none(), st.integers(0, 40)))
    options: dict[str, object] = {
        "lookup_free_keys": draw(st.integers(0, 4)),
        "lookup_min_pruned_share": draw(st.sampled_from([0.0, 0.05, 0.5, 1.0])),
        "range_max_index_share": draw(st.sampled_from([0.0, 0.25, 1.0])),
        "bloom_probe_budget": draw(st.sampled_from([0, 50, 20_000_000])),
    }
    clock: Callable[[], float] = StepClock(10**9) if ticks is None else StepClock(ticks)
    return PruneLimits(deadline=1.0, clock=clock, **options)  # type: ignore[arg-type]


def test_guarded_plans_never_drop_a_matching_file(guarded_table: str, guarded_oracle: Oracle) -> None:
    table = LakeTable.open(guarded_table)
    pools = {c: _pool(guarded_oracle, c) for c in COLUMNS}
    pools["token"] = _pool(guarded_oracle, "token") + [f"absent-{i}" for i in range(6)]

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def check(data: st.DataObject) -> None:
        columns = data.draw(st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=3, unique=True))
        predicate = TupleDomain.with_domains({c: data.draw(domains(pools[c])) for c in columns})
        result = prune(table, predicate, limits=data.draw(limits()))
        _keeps_every_match(result, guarded_oracle, predicate)
        for step in result.explain:
            if step.fallback and step.files_out != step.files_in:
                assert "unchecked" in step.fallback  # only a probe budget keeps a part
        # Guards and deadlines only ever keep more than every lookup run in full would.
        full = prune(table, predicate, limits=EVERY_LOOKUP)
        assert {s.path for s in full.splits} <= {s.path for s in result.splits}

    check()
