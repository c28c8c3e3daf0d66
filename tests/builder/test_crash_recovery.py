"""A writer killed between inflight and completed: the table still reads as the previous snapshot,
the next writer rolls the instant back (its files deleted), and after `clean` no orphan remains."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from pyspark.sql import SparkSession

from builder.cleaner import clean
from pruner.format.layout import META_DIR
from pruner.format.timeline import State
from pruner.table.table import LakeTable
from tests.support import CITIES, Row, contents, create, make_row, to_df

# Runs in a child process: patches the commit protocol so the process dies (no cleanup, no
# exception handlers) right after the data and index files are written.
CHILD = textwrap.dedent(
    """
    import os, sys
    from builder import instants
    from builder.session import spark_session
    from builder import LakepruneTable
    from tests.support import make_row, to_df

    def die(self, content):
        os._exit(137)

    instants.PendingInstant.complete = die
    spark = spark_session(master="local[1]")
    table = LakepruneTable(sys.argv[1], spark)
    table.upsert(to_df(spark, [make_row(k, "ams", version=5) for k in range(0, 30, 3)]
                               + [make_row(500, "zrh")]))
    """
)


def _files_on_disk(location: Path) -> set[str]:
    return {str(p.relative_to(location)) for p in location.rglob("*.parquet")}


def test_killed_commit_is_invisible_then_rolled_back_and_cleaned(spark: SparkSession, tmp_path: Path) -> None:
    location = tmp_path / "t"
    table = create(str(location), spark)
    rows = [make_row(k, CITIES[k % 3]) for k in range(30)]
    table.insert(to_df(spark, rows))
    reference: dict[int, Row] = {r["id"]: r for r in rows}
    before = LakeTable.open(str(location))

    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(location)],
        check=False,
        cwd=Path(__file__).parents[2],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == 137, child.stderr[-3000:]

    crashed = LakeTable.open(str(location))
    (pending,) = crashed.timeline.pending()
    assert pending.state == State.INFLIGHT
    leftovers = {f for f in _files_on_disk(location) if pending.timestamp in f}
    assert any(not f.startswith(META_DIR) for f in leftovers), (
        "the crash happened after data files were written"
    )
    assert any(f.startswith(META_DIR) for f in leftovers), "... and after index files were written"
    assert crashed.snapshot().instant == before.snapshot().instant
    assert contents(str(location)) == reference

    # The next writer rolls the crashed instant back before writing.
    update = [make_row(7, "ber", version=9)]
    table.upsert(to_df(spark, update))
    reference.update({r["id"]: r for r in update})
    after = LakeTable.open(str(location))
    assert not after.timeline.pending()
    assert pending.timestamp not in {i.timestamp for i in after.timeline.instants}
    assert not {f for f in _files_on_disk(location) if pending.timestamp in f}
    assert contents(str(location)) == reference

    # After clean, every Parquet file on disk is needed by a retained snapshot.
    clean(str(location))
    table_now = LakeTable.open(str(location))
    retained = [
        i.timestamp
        for i in table_now.timeline.completed()
        if i.timestamp >= (table_now.earliest_retained() or "")
    ]
    needed_data = {f.path for t in retained for f in table_now.snapshot(t).files()}
    needed_index = {
        p
        for t in retained
        for spec in table_now.index_partition_specs()
        for p in table_now.snapshot(t).index_partition(spec).file_paths()
    }
    assert _files_on_disk(location) == needed_data | needed_index
