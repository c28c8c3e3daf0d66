"""Corrupt or malformed index data makes pruning keep files: the result stays correct, the fallback
is logged and shows in the explain record (`test_fault_injection` damages every kind of index
file in every way)."""

from __future__ import annotations

import logging
from pathlib import Path

import pyarrow as pa
import pytest

from pruner.metadata.index_partition import write_logs
from pruner.metadata.merge import with_op
from pruner.planner.limits import PruneLimits
from pruner.planner.prune import prune
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.table.table import LakeTable
from tests.pruner.planner.conftest import Oracle

RANGE = TupleDomain.with_domains(
    {"seq": Domain.of(SortedRangeSet.of_ranges(Range.between(100, True, 120, True)), False)}
)


def _index_files(location: str, partition: str) -> list[Path]:
    return sorted((Path(location) / ".lakeprune" / "metadata" / partition).glob("*.parquet"))


def test_corrupt_column_stats_file_falls_back_to_keeping_files(
    table_copy: str, caplog: pytest.LogCaptureFixture
) -> None:
    for path in _index_files(table_copy, "column_stats"):
        path.write_bytes(b"not parquet at all")
    snapshot = LakeTable.open(table_copy).snapshot()
    with caplog.at_level(logging.WARNING, logger="pruner.planner"):
        result = prune(snapshot.table, RANGE, snapshot=snapshot.instant)
    step = next(s for s in result.explain if s.step == "column_stats")
    assert step.fallback and step.files_out == step.files_in
    assert result.fallbacks >= 1
    assert "kept all" in caplog.text
    assert Oracle(snapshot).files_matching(RANGE) <= {s.path for s in result.splits}


def test_malformed_bloom_filter_is_ignored_not_trusted(table_copy: str) -> None:
    table = LakeTable.open(table_copy)
    snapshot = table.snapshot()
    spec = table.spec(table.definition("bf"))
    rows = snapshot.index_partition(spec).read_all()
    broken = rows.set_column(
        rows.schema.get_field_index("filter"), "filter", pa.array([b"\x00" * 33] * rows.num_rows, pa.binary())
    )
    latest = table.timeline.latest_completed()
    assert latest is not None
    write_logs(table.storage, spec, latest.timestamp, with_op(broken, 0))  # overwrite in place
    wanted = Oracle(snapshot)
    token = next(r["token"] for rows_ in wanted.rows.values() for r in rows_)
    predicate = TupleDomain.with_domains({"token": Domain.single_value(token)})
    result = prune(LakeTable.open(table_copy), predicate)
    step = next(s for s in result.explain if s.step == "bloom_filters")
    assert step.files_out == step.files_in
    assert wanted.files_matching(predicate) <= {s.path for s in result.splits}


def test_bloom_probes_past_the_budget_keep_the_files_and_say_so(
    table_copy: str, caplog: pytest.LogCaptureFixture
) -> None:
    snapshot = LakeTable.open(table_copy).snapshot()
    wanted = Oracle(snapshot)
    tokens = sorted({r["token"] for rows_ in wanted.rows.values() for r in rows_})[:3]
    predicate = TupleDomain.with_domains({"token": Domain.multiple_values([*tokens, "no-such-token"])})
    within = prune(snapshot.table, predicate, snapshot=snapshot.instant)
    assert not next(s for s in within.explain if s.step == "bloom_filters").fallback
    with caplog.at_level(logging.WARNING, logger="pruner.planner"):
        over = prune(
            snapshot.table, predicate, snapshot=snapshot.instant, limits=PruneLimits(bloom_probe_budget=0)
        )
    step = next(s for s in over.explain if s.step == "bloom_filters")
    assert step.fallback and "probe budget" in step.fallback
    assert step.files_out == step.files_in and over.fallbacks >= 1
    assert "probe budget" in caplog.text
    assert wanted.files_matching(predicate) <= {s.path for s in over.splits}
    assert {s.path for s in within.splits} <= {s.path for s in over.splits}
