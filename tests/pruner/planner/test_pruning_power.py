"""Pruning is not just safe but useful: a range on a clustered column, EQUAL / IN on the record key,
and EQUAL on an unclustered high-cardinality column with a bloom filter each remove most files."""

from __future__ import annotations

from pruner.planner.prune import prune
from pruner.planner.result import PruneResult
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.table.table import LakeTable
from tests.pruner.planner.conftest import Oracle


def _prune(location: str, predicate: TupleDomain) -> PruneResult:
    return prune(LakeTable.open(location), predicate)


def _step(result: PruneResult, name: str) -> tuple[int, int]:
    step = next(s for s in result.explain if s.step == name)
    return step.files_in, step.files_out


def test_range_on_clustered_column_selects_few_files(indexed_table: str, oracle: Oracle) -> None:
    predicate = TupleDomain.with_domains(
        {"seq": Domain.of(SortedRangeSet.of_ranges(Range.between(400, True, 440, True)), False)}
    )
    result = _prune(indexed_table, predicate)
    assert oracle.files_matching(predicate) <= {s.path for s in result.splits}
    assert result.files_total >= 30
    assert result.files_selected <= max(4, result.files_total // 8), result.explain


def test_equal_on_record_key_selects_exactly_the_file_groups_holding_the_keys(
    indexed_table: str, oracle: Oracle
) -> None:
    predicate = TupleDomain.with_domains({"id": Domain.multiple_values([5, 640, 5011, 999_999])})
    result = _prune(indexed_table, predicate)
    assert {s.path for s in result.splits} == oracle.files_matching(predicate)
    assert result.files_selected == 3
    assert _step(result, "record_index")[1] == 3


def test_bloom_filter_prunes_equal_on_unclustered_high_cardinality_column(
    indexed_table: str, oracle: Oracle
) -> None:
    wanted = next(r["token"] for rows in oracle.rows.values() for r in rows)
    predicate = TupleDomain.with_domains({"token": Domain.single_value(wanted)})
    result = _prune(indexed_table, predicate)
    stats_in, stats_out = _step(result, "column_stats")
    bloom_in, bloom_out = _step(result, "bloom_filters")
    assert stats_out > stats_in // 2, "tokens are unclustered: min/max cannot prune much"
    assert bloom_out <= 3 < bloom_in
    assert oracle.files_matching(predicate) <= {s.path for s in result.splits}


def test_partition_values_and_none_predicate(indexed_table: str, oracle: Oracle) -> None:
    eu = TupleDomain.with_domains({"region": Domain.single_value("eu")})
    result = _prune(indexed_table, eu)
    assert {s.partition for s in result.splits} == {"region=eu"}
    assert {s.path for s in result.splits} == oracle.files_matching(eu)
    assert _prune(indexed_table, TupleDomain.none()).files_selected == 0
