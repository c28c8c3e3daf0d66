"""Partition evolution with Spark: RFC-63 use case 2 (a table whose partitioning evolved from
`org_id/datestr` to `org_id` is pruned uniformly by the event date through a functional index,
kept file counts asserted per layout), and the write semantics after evolution (new records use
the new layout, updates of old-layout records move them to it, deletes rewrite old groups in
place, evolving back to an earlier partitioning works, every file's path agrees with its rows, the
record index stays exact)."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from builder import LakepruneTable
from builder.write.writer import WriteResult
from pruner.format.keys import parse_partition_path
from pruner.planner.result import PruneResult
from pruner.table.table import LakeTable
from tests.support import assert_record_index_consistent
from tests.support_evolution import (
    NEW_COMMITS,
    OLD_DAYS,
    ORGS,
    ROWS_PER_DAY,
    day_text,
    event,
)

OLD_FILES = len(ORGS) * len(OLD_DAYS)
NEW_FILES = len(ORGS) * len(NEW_COMMITS)


def _layout(partition: str) -> str:
    return "old" if set(parse_partition_path(partition)) == {"org_id", "datestr"} else "new"


def _kept(result: PruneResult) -> dict[str, int]:
    counts = {"old": 0, "new": 0}
    for split in result.splits:
        counts[_layout(split.partition)] += 1
    return counts


def _step(result: PruneResult, name: str) -> tuple[int, int]:
    step = next(s for s in result.explain if s.step == name)
    return step.files_in, step.files_out


def test_files_of_both_layouts(evolved_events: str) -> None:
    table = LakeTable.open(evolved_events)
    assert table.config.partition_fields == ("org_id",)
    assert table.config.partition_history[0].fields == ("org_id", "datestr")
    files = table.snapshot().files()
    assert sorted(_layout(f.partition) for f in files) == ["new"] * NEW_FILES + ["old"] * OLD_FILES
    assert {f.partition for f in files if _layout(f.partition) == "new"} == {f"org_id={o}" for o in ORGS}


@pytest.mark.parametrize(
    ("where", "old", "new"),
    [
        (f"event_date = '{day_text(1)}'", len(ORGS), 0),
        (f"date_format(ts, '%Y-%m-%d') = '{day_text(6)}'", 0, len(ORGS)),
        (f"event_date BETWEEN '{day_text(3)}' AND '{day_text(4)}'", len(ORGS), len(ORGS)),
        (f"org_id = 2 AND event_date = '{day_text(7)}'", 0, 1),
        (f"event_date > '{day_text(7)}'", 0, 0),
    ],
)
def test_use_case_2_the_event_date_prunes_both_layouts_uniformly(
    evolved_events: str, where: str, old: int, new: int
) -> None:
    result = LakepruneTable(evolved_events).prune(where)
    assert _kept(result) == {"old": old, "new": new}
    one_org = len(OLD_DAYS) + len(NEW_COMMITS)  # partition values leave one organisation's files
    files_in = one_org if "org_id" in where else OLD_FILES + NEW_FILES
    assert _step(result, "functional_index") == (files_in, old + new)  # the index alone decides


def test_a_source_range_is_projected_onto_the_event_date_in_both_layouts(evolved_events: str) -> None:
    # Noon of day 3 (old layout, one file per org and day) to 01:00 of day 4 (new, two days a file).
    result = LakepruneTable(evolved_events).prune(
        "ts >= TIMESTAMP '2022-10-04 12:00:00' AND ts < TIMESTAMP '2022-10-05 01:00:00'"
    )
    assert _kept(result) == {"old": len(ORGS), "new": len(ORGS)}
    # Partition stats on ts already drop the old day partitions outside the range, but cannot split
    # an organisation's new partition (it spans every new day); the functional index splits both.
    assert _step(result, "partition_stats") == (OLD_FILES + NEW_FILES, len(ORGS) + NEW_FILES)
    assert _step(result, "functional_index") == (len(ORGS) + NEW_FILES, 2 * len(ORGS))


def test_a_partition_column_missing_from_new_paths_keeps_their_files(evolved_events: str) -> None:
    table = LakepruneTable(evolved_events)
    by_column = table.prune(f"datestr = '{day_text(1)}'")
    # Old paths carry datestr and are pruned by it; new paths lack it: kept, for column stats.
    assert _step(by_column, "partition_values") == (OLD_FILES + NEW_FILES, len(ORGS) + NEW_FILES)
    assert _kept(by_column) == {"old": len(ORGS), "new": 0}
    by_org = table.prune("org_id = 2")
    assert _step(by_org, "partition_values") == (OLD_FILES + NEW_FILES, len(OLD_DAYS) + len(NEW_COMMITS))


def _expected_rows() -> dict[int, tuple[object, ...]]:
    days = [*OLD_DAYS, *(d for commit in NEW_COMMITS for d in commit)]
    rows = {r[0]: r for r in (event(o, d, i) for o in ORGS for d in days for i in range(ROWS_PER_DAY))}
    for i in range(3):
        rows[event(1, 0, i)[0]] = event(1, 0, i, version=1)
    reassigned = event(3, 2, 4, version=1)
    rows[reassigned[0]] = (reassigned[0], 2, *reassigned[2:])
    for i in range(ROWS_PER_DAY):
        del rows[event(2, 1, i)[0]]
        new = event(1, 8, i)
        rows[new[0]] = new
    return rows


def test_writes_after_evolution(evolved_events_changed: tuple[str, list[WriteResult]]) -> None:
    location, (upsert, delete, insert) = evolved_events_changed
    assert (upsert.updated, upsert.moved, upsert.inserted) == (4, 4, 0)  # all leave old-layout groups
    assert (delete.deleted, delete.not_found, insert.inserted) == (ROWS_PER_DAY, 0, ROWS_PER_DAY)
    snapshot = LakeTable.open(location).snapshot()
    rows = snapshot.read().to_pylist()
    assert {r["id"]: tuple(r.values()) for r in rows} == _expected_rows()
    assert len(rows) == len(_expected_rows())
    assert_record_index_consistent(location)

    by_partition: dict[str, int] = {}
    for f in snapshot.files():
        data = pq.read_table(snapshot.table.storage.path(f.path)).to_pylist()
        for column, value in parse_partition_path(f.partition).items():  # the path agrees with the rows
            assert {str(r[column]) for r in data} == {value}, f.path
        by_partition[f.partition] = by_partition.get(f.partition, 0) + len(data)
    # Old groups were rewritten in place, under their old paths; the emptied one is gone.
    assert by_partition[f"org_id=1/datestr={day_text(0)}"] == ROWS_PER_DAY - 3
    assert by_partition[f"org_id=3/datestr={day_text(2)}"] == ROWS_PER_DAY - 1
    assert f"org_id=2/datestr={day_text(1)}" not in by_partition
    # The moved records went to the layout of their write, the day-8 records to the one after it.
    assert by_partition["org_id=1"] == 2 * ROWS_PER_DAY * len(NEW_COMMITS) + 3
    assert by_partition["org_id=2"] == 2 * ROWS_PER_DAY * len(NEW_COMMITS) + 1
    assert by_partition[f"org_id=1/datestr={day_text(8)}"] == ROWS_PER_DAY
    history = LakeTable.open(location).config.partition_history
    assert [e.fields for e in history] == [("org_id", "datestr"), ("org_id",)]
    assert history[1].until == delete.instant
