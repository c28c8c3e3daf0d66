"""pruner.index.prunable: the columns GetTable declares prunable are exactly those on which a
one-column predicate makes some planner step run (checked against the planner itself over
generated sets of index definitions), and each kind of index counts only where its step would
use it."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pruner.format.config import TableConfig
from pruner.format.timeline import Timeline
from pruner.index.defining import define
from pruner.index.definitions import IndexDefinition
from pruner.index.prunable import prunable_columns
from pruner.planner.prune import prune
from pruner.storage import Storage
from pruner.table.table import LakeTable
from pruner.types import TableSchema

SCHEMA = TableSchema.parse("id bigint, k bigint, city string, ts timestamp, v bigint, w bigint, s string")
LITERALS = {
    "id": "1",
    "k": "2",
    "city": "'ams'",
    "ts": "TIMESTAMP '2026-01-01 10:00:00'",
    "v": "3",
    "w": "4",
    "s": "'x'",
}
INSTANT = "20260101000000000"
# (name, index type, columns, expression): every kind of index, over several columns.
CANDIDATES = [
    ("stats", "column_stats", ["v", "ts"], None),
    ("pstats", "partition_stats", ["w"], None),
    ("bf", "bloom_filters", ["s", "k"], None),
    ("by_s", "secondary_index", ["s"], None),
    ("by_w", "secondary_index", ["w"], None),
    ("yr", None, [], "year(ts)"),  # monotonic: a range on ts projects onto it
    ("hr", None, [], "hour(ts)"),  # not monotonic: an `=` / IN on ts maps to it
    ("kv", None, [], "k + v"),  # two columns: a predicate on one of them alone says nothing
]


def config(record_key: tuple[str, ...] = ("id",), partitions: tuple[str, ...] = ("city",)) -> TableConfig:
    return TableConfig("t", SCHEMA, record_key, partition_fields=partitions)


def definition(cfg: TableConfig, index: int, ready: bool, up_to: str | None = INSTANT) -> IndexDefinition:
    name, index_type, columns, expression = CANDIDATES[index]
    made = define(cfg, [], name, index_type, columns, {}, expression)
    return made.ready(up_to) if ready else made  # type: ignore[arg-type]


def test_partition_columns_and_a_one_column_record_key_prune_without_indexes() -> None:
    assert prunable_columns(config(), [], INSTANT) == ("id", "city")
    assert prunable_columns(config(("id", "k"), ()), [], INSTANT) == ()


def test_an_index_counts_once_ready_and_a_secondary_index_only_from_the_instant_it_covers() -> None:
    cfg = config()
    building = [definition(cfg, i, ready=False) for i in range(len(CANDIDATES))]
    assert prunable_columns(cfg, building, INSTANT) == ("id", "city")
    ready = [definition(cfg, i, ready=True) for i in range(len(CANDIDATES))]
    everything = ("id", "k", "city", "ts", "v", "w", "s", "hr", "kv", "yr")
    assert prunable_columns(cfg, ready, INSTANT) == everything
    # the secondary indexes are complete from INSTANT on: an older snapshot cannot use them, but s
    # still has bloom filters and w partition stats
    assert prunable_columns(cfg, ready, "20250101000000000") == everything
    cfg = config(partitions=())
    secondary_only = [definition(cfg, 4, ready=True)]
    assert prunable_columns(cfg, secondary_only, "20250101000000000") == ("id",)
    assert prunable_columns(cfg, secondary_only, INSTANT) == ("id", "w")


def test_a_functional_index_prunes_by_the_column_of_an_expression_over_one_column() -> None:
    cfg = config(partitions=())
    assert prunable_columns(cfg, [definition(cfg, 5, ready=True)], INSTANT) == ("id", "ts", "yr")
    assert prunable_columns(cfg, [definition(cfg, 6, ready=True)], INSTANT) == ("id", "ts", "hr")
    assert prunable_columns(cfg, [definition(cfg, 7, ready=True)], INSTANT) == ("id", "kv")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    record_key=st.sampled_from([("id",), ("id", "k")]),
    partitions=st.sampled_from([(), ("city",)]),
    chosen=st.lists(
        st.tuples(st.integers(0, len(CANDIDATES) - 1), st.booleans(), st.sampled_from([None, INSTANT])),
        max_size=5,
        unique_by=lambda c: c[0],
    ),
)
def test_prunable_columns_are_those_a_planner_step_runs_for(
    tmp_path: Path,
    record_key: tuple[str, ...],
    partitions: tuple[str, ...],
    chosen: list[tuple[int, bool, str | None]],
) -> None:
    """On a table without commits (no files: every step that runs keeps nothing it was not
    given), a predicate `c = literal` makes some step run exactly when c is declared prunable."""
    cfg = config(record_key, partitions)
    # partition stats need a partitioned table
    definitions = [definition(cfg, i, r, up_to) for i, r, up_to in chosen if partitions or i != 1]
    storage = Storage.from_uri(str(tmp_path))
    table = LakeTable(storage, cfg, Timeline.load(storage), tuple(definitions))
    declared = set(prunable_columns(cfg, definitions, table.snapshot().instant))
    literals = dict(LITERALS, hr="10", yr="2026", kv="5")
    for column in (*SCHEMA.names, *(v.name for v in table.virtual_columns)):
        result = prune(table, f"{column} = {literals[column]}")
        ran = [e.step for e in result.explain if e.skipped is None]
        assert bool(ran) == (column in declared), (column, ran, sorted(declared))
