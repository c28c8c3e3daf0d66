"""The advisor end to end: a table with no index but the built-in ones, a workload of lookups sent
to a real sidecar through the Python client (its prunes land in the sidecar's workload log), then
`lakeprune advise` recommends what the bench tables use — the record index answers key lookups, a
secondary index or bloom filter the non-key equality, a functional index `hour(ts)`, a text index
the infix LIKE — and after `--apply` the same workload reads fewer files, measured from the log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from builder.api import LakepruneTable
from pruner.advisor.advise import Writes, advise
from pruner.advisor.shapes import Operation, Shape
from pruner.advisor.workload import WorkloadEntry, WorkloadLog
from pruner.client import PruningClient
from pruner.format.instant import parse_instant
from pruner.serving.config import WorkloadSettings
from pruner.sidecar import Sidecar
from pruner.table.table import LakeTable
from tests.cli.test_cli import lakeprune
from tests.pruner.service.conftest import address, make_config

SCHEMA = "id bigint, customer bigint, ts timestamp, note string"
ROWS = 1_200
SMALL_FILES = {"write.target_file_size_bytes": 1024, "write.small_file_limit_bytes": 512}
BASE = datetime(2026, 3, 1, tzinfo=UTC)
WORKLOAD = (
    *(["id = 17"] * 2),
    *(["customer = 7", "customer = 31", "customer IN (3, 40)"] * 2),
    *(["hour(ts) = 3"] * 3),
    *(["note LIKE '%zeta-42 %'", "note LIKE '%zeta-7 %'"] * 2),
)


@pytest.fixture(scope="module")
def orders(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    """1,200 orders in ~40 files in key order: customers, times and notes' tokens clustered."""
    location = str(tmp_path_factory.mktemp("advisor") / "orders")
    table = LakepruneTable.create(
        location,
        SCHEMA,
        record_key="id",
        ordering_field="ts",
        properties=SMALL_FILES,
        spark=spark,
    )
    rows = [
        (i, i // 30, BASE + timedelta(minutes=i), f"order {i} ref zeta-{i // 25} ok") for i in range(ROWS)
    ]
    table.insert(spark.createDataFrame(rows, SCHEMA), sort_by=["id"])
    return location


@pytest.fixture
def sidecar(orders: str, tmp_path: Path) -> Iterator[Sidecar]:
    settings = WorkloadSettings(directory=str(tmp_path / "workload"))
    with Sidecar(make_config(str(Path(orders).parent), workload=settings)) as running:
        assert running.wait_ready(10)
        yield running


def _run_workload(sidecar: Sidecar) -> None:
    with PruningClient(address(sidecar)) as client:
        for where in WORKLOAD:
            client.prune("lake", "orders", where)


def _files_kept(entries: list[WorkloadEntry], target: str) -> float:
    chosen = [e.files_kept for e in entries if any(s.target == target for s in e.shapes)]
    assert chosen, target
    return sum(chosen) / len(chosen)


@pytest.mark.slow
def test_advise_recommends_the_indexes_the_workload_needs_and_apply_reads_fewer_files(
    orders: str, sidecar: Sidecar, tmp_path: Path
) -> None:
    _run_workload(sidecar)
    log = WorkloadLog(tmp_path / "workload")
    table = LakeTable.open(orders)
    assert not table.definitions  # no index yet: every recommendation comes from the log
    before, unreadable = log.entries(table.storage.uri)
    assert unreadable == 0 and len(before) == len(WORKLOAD)
    assert {e.engine for e in before} == {"python"}
    assert all(e.files_total == len(table.snapshot().files()) > 20 for e in before)

    advice = advise(table, before)
    kinds = {(r.index_type, target) for r in advice.recommendations for target in r.targets}
    assert ("functional", "hour(ts)") in kinds
    assert ("text", "note") in kinds
    by_customer = {"secondary_index", "bloom_filters", "column_stats"}
    assert {(kind, "customer") for kind in by_customer} & kinds
    assert any("record index answers them" in note for note in advice.notes)
    assert not any(target == "id" for _, target in kinds)

    workload = str(tmp_path / "workload")
    shown = json.loads(lakeprune("advise", orders, "--workload", workload, "--json"))
    statements = [s for r in advice.recommendations for s in r.statements]
    assert [s for r in shown["recommendations"] for s in r["statements"]] == statements
    applied = lakeprune("advise", orders, "--workload", workload, "--apply", "9")
    assert all(f"[{n}/{len(statements)}] {s}" in applied for n, s in enumerate(statements, start=1))

    _run_workload(sidecar)
    after = log.entries(table.storage.uri)[0][len(before) :]
    assert len(after) == len(WORKLOAD)
    for target in ("customer", "hour(ts)", "note"):
        assert _files_kept(after, target) < _files_kept(before, target), target
    # the same answers: the log's counts are the prunes' own; each kept file still holds its rows
    assert _files_kept(after, "id") == _files_kept(before, "id") == 1

    # every new index pruned files now: none is a drop candidate
    applied_table = LakeTable.open(orders)
    assert advise(applied_table, after).unused == ()
    # on the key lookups alone, none of them pruned a file: each is a drop candidate, with the reason
    lookups = [e for e in after if e.shapes[0].target == "id"]
    unused = advise(applied_table, lookups).unused
    assert {u.name for u in unused} == {d.name for d in applied_table.definitions}
    assert all(u.prunes == len(lookups) and len(u.reasons) == 1 for u in unused)
    assert all(u.reasons[0][0].endswith("constrains id") or "no LIKE" in u.reasons[0][0] for u in unused)


def test_advise_without_a_workload_and_its_mistakes(orders: str, tmp_path: Path) -> None:
    empty = lakeprune("advise", orders, "--workload", str(tmp_path / "none"), "--apply", "2")
    assert "0 logged prune(s)" in empty and "nothing to advise yet" in empty and "nothing to apply" in empty
    assert (
        json.loads(lakeprune("advise", orders, "--workload", str(tmp_path), "--json"))["recommendations"]
        == []
    )
    both = lakeprune("advise", orders, "--workload", "w", "--config", "c.yaml", expect=2)
    assert "--workload and --config exclude each other" in both
    assert "error:" in lakeprune("advise", str(tmp_path / "missing"), expect=2)
    assert "error:" in lakeprune("advise", orders, "--config", str(tmp_path / "missing.yaml"), expect=2)


def _lookups_at(table: LakeTable, moments: list[datetime]) -> list[WorkloadEntry]:
    """Logged lookups of a customer that read every file, made at `moments`."""
    files = table.snapshot().files()
    shape = Shape("customer", Operation.EQUAL, values=1)
    n, total = len(files), sum(f.size for f in files)
    uri = table.storage.uri
    return [WorkloadEntry(m.isoformat(), uri, "python", None, (shape,), n, n, total) for m in moments]


def test_advise_charges_each_index_the_upkeep_of_the_commits_among_the_logged_prunes(
    spark: SparkSession, tmp_path: Path
) -> None:
    location = str(tmp_path / "orders")
    # the module's `orders` gets indexes from another test: this one needs a table without any
    written = LakepruneTable.create(location, SCHEMA, record_key="id", properties=SMALL_FILES, spark=spark)
    rows = [(i, i // 30, BASE + timedelta(minutes=i), f"order {i}") for i in range(300)]
    written.insert(spark.createDataFrame(rows, SCHEMA), sort_by=["id"])
    written.sql("CREATE INDEX note_bloom ON orders USING bloom_filters (note)")
    table = LakeTable.open(location)
    data_commits = [c for c in table.timeline.commits() if "added" in table.timeline.read(c)]
    assert len(table.timeline.commits()) == 2  # the insert and the index build
    (insert,) = data_commits
    written = parse_instant(insert.timestamp)
    files = len(table.snapshot().files())
    assert Writes.in_window(table, _lookups_at(table, [written])) == Writes(1, files)

    later = [written + timedelta(hours=1), written + timedelta(hours=2)]
    quiet = advise(table, _lookups_at(table, later))
    assert quiet.recommendations and all(r.upkeep_bytes == 0 for r in quiet.recommendations)
    assert not any("data commit" in note for note in quiet.notes)

    # The window now holds the insert, which added every live file: maintaining an index over it
    # reads what building it reads.
    spanning = [written - timedelta(minutes=1), written + timedelta(minutes=1)]
    busy = advise(table, _lookups_at(table, spanning))
    assert f"1 data commit(s) among the logged prunes added {files} file(s)" in " ".join(busy.notes)
    assert busy.recommendations
    for r in busy.recommendations:
        assert r.upkeep_bytes == pytest.approx(r.build_bytes) and r.upkeep_bytes > 0
        assert r.bytes_saved > r.build_bytes + r.upkeep_bytes
