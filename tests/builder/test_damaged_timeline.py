"""A damaged timeline is an error, never an empty table, and never a reason to delete committed data
(`pruner.table.integrity`). An indexed table with two commits is written once; each case damages a
copy as an operator's mistake or a storage lifecycle rule would (the first commit's completion
marker deleted; the whole timeline deleted; every timeline file of the first commit deleted, with
or without a later entry naming it, the `files` index then naming a lost instant), then
every command is run against it: `table show`, `table read`, `table history`, `prune`, `compact`,
`clean`, a write, `index build` and `sql` through the CLI, and a prune through the sidecar's gRPC
service. Each refuses
with one line naming the damage (CLI exit 2, gRPC FAILED_PRECONDITION with the `lakeprune-reason`
trailer the Trino connector maps to LAKEPRUNE_BAD_DATA), and afterwards every data and index file
is byte-for-byte what it was."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from pruner.cli.main import app
from pruner.client import PruningClient, ServiceError
from pruner.errors import TableDamagedError
from pruner.format.layout import TIMELINE_DIR
from pruner.format.timeline import PREVIOUS, Timeline
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2_grpc as spb_grpc
from pruner.service.grpc_service import REASON_TRAILER
from pruner.serving.config import Limits, Security, ServeConfig
from pruner.serving.errors import TABLE_DAMAGED
from pruner.sidecar import Sidecar
from pruner.storage import Storage
from pruner.table.table import LakeTable
from tests.support import CITIES, create, make_row, to_df

runner = CliRunner()


@pytest.fixture(scope="module")
def pristine(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An indexed table: an insert, an index, an upsert (the first commit's files partly live)."""
    location = tmp_path_factory.mktemp("pristine") / "t"
    table = create(str(location), spark)
    table.insert(to_df(spark, [make_row(k, CITIES[k % 3]) for k in range(24)]))
    table.sql("CREATE INDEX stats ON t USING column_stats (amount)")
    table.upsert(to_df(spark, [make_row(k, CITIES[k % 3], 1) for k in range(0, 24, 6)]))
    return location


def _first_commit(location: Path) -> str:
    return Timeline.load(Storage.from_uri(str(location))).commits()[0].timestamp


def _remove_completion_marker(location: Path) -> None:
    (location / TIMELINE_DIR / f"{_first_commit(location)}.commit.completed").unlink()


def _remove_timeline(location: Path) -> None:
    shutil.rmtree(location / TIMELINE_DIR)


def _remove_first_instant(location: Path) -> None:
    first = _first_commit(location)
    for path in (location / TIMELINE_DIR).glob(f"{first}.*"):
        path.unlink()


def _lose_an_instant_the_files_index_names(location: Path) -> None:
    """A compaction's base names the first commit's files; that commit's timeline files are then
    lost, and no entry names its predecessor (as a table written before entries did)."""
    assert runner.invoke(app, ["compact", str(location)]).exit_code == 0
    _remove_first_instant(location)
    for path in (location / TIMELINE_DIR).glob("*.completed"):
        entry = json.loads(path.read_bytes())
        entry.pop(PREVIOUS)
        path.write_text(json.dumps(entry))


# Each case: how to damage a table, what the error says, and whether the timeline alone shows it
# (else it is found where the `files` index is read: `table history` lists the timeline as it is,
# and `index build` of an index that is ready has nothing to read).
DAMAGE: dict[str, tuple[Callable[[Path], None], str, bool]] = {
    "files index names a lost instant": (
        _lose_an_instant_the_files_index_names,
        r"the files index of snapshot \d{17} names instant\(s\) the timeline does not hold completed",
        False,
    ),
    "completion marker deleted": (
        _remove_completion_marker,
        r"is inflight below the completed instant",
        True,
    ),
    "timeline deleted": (
        _remove_timeline,
        r"the timeline has no completed instant, yet \d+ index files",
        True,
    ),
    "first instant deleted": (
        _remove_first_instant,
        r"instant \d{17} is missing from the timeline",
        True,
    ),
}


def _fingerprint(location: Path) -> dict[str, str]:
    """Every data and index file (not the timeline, not the lock) and its content's digest."""
    return {
        str(path.relative_to(location)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(location.rglob("*"))
        if path.is_file() and not str(path.relative_to(location)).startswith(TIMELINE_DIR)
    }


def _refuses(args: list[str], pattern: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, (args, result.stdout, result.stderr, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "is damaged" in lines[0], lines[0]
    assert re.search(pattern, lines[0]), lines[0]


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_every_command_refuses_a_damaged_table_and_deletes_nothing(
    case: str, pristine: Path, tmp_path: Path
) -> None:
    damage, pattern, on_the_timeline = DAMAGE[case]
    location = tmp_path / "lake" / "t"
    shutil.copytree(pristine, location)
    damage(location)
    before = _fingerprint(location)
    where = str(location)

    with pytest.raises(TableDamagedError, match=pattern):
        LakeTable.open(where).snapshot().files()
    upsert = tmp_path / "upsert.parquet"
    schema = LakeTable.open(str(pristine)).config.schema.to_arrow()
    pq.write_table(pa.Table.from_pylist([make_row(3, "ams", 2)], schema=schema), upsert)
    for args in (
        ["table", "show", where],
        ["table", "read", where],
        ["prune", where, "--where", "id = 3", "--json"],
        ["compact", where],
        ["clean", where],
        ["write", where, "--input", str(upsert), "--mode", "upsert"],
        # These two read no snapshot: a damage only the files index shows does not reach them.
        *([["table", "history", where], ["index", "build", where, "stats"]] if on_the_timeline else []),
        ["sql", "--table", where, "CREATE INDEX bf ON t USING bloom_filters (city)"],
    ):
        _refuses(args, pattern)

    config = ServeConfig({"lake": str(location.parent)}, grpc_port=0, limits=Limits(), security=Security())
    with Sidecar(config) as sidecar, PruningClient(f"127.0.0.1:{sidecar.grpc_port}") as client:
        assert sidecar.wait_ready(10)
        with pytest.raises(ServiceError, match=pattern) as raised:
            client.prune("lake", "t", "id = 3")
        assert raised.value.code == grpc.StatusCode.FAILED_PRECONDITION
        if on_the_timeline:  # GetTable reads no snapshot
            with grpc.insecure_channel(f"127.0.0.1:{sidecar.grpc_port}") as channel:
                stub = spb_grpc.PruningServiceStub(channel)
                with pytest.raises(grpc.RpcError) as call:
                    stub.GetTable(spb.GetTableRequest(table=spb.TableName(schema="lake", table="t")))
            assert call.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert (REASON_TRAILER, TABLE_DAMAGED) in tuple(call.value.trailing_metadata() or ())

    assert _fingerprint(location) == before, "a command changed or deleted data or index files"


def _check(location: Path, *extra: str, expect: int) -> dict[str, Any]:
    result = runner.invoke(app, ["table", "check", str(location), "--json", *extra])
    assert result.exit_code == expect, (result.stdout, result.stderr, result.exception)
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def _rows(location: Path) -> list[dict[str, Any]]:
    return sorted(LakeTable.open(str(location)).snapshot().read().to_pylist(), key=lambda r: r["id"])


def _timeline(location: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (location / TIMELINE_DIR).glob("*")}


def test_check_finds_an_intact_table_intact(pristine: Path) -> None:
    report = _check(pristine, expect=0)
    assert report["intact"] and report["findings"] == []
    assert report["snapshot"] == Timeline.load(Storage.from_uri(str(pristine))).commits()[-1].timestamp


def test_repair_recreates_a_deleted_completion_marker_and_the_table_reads_as_before(
    pristine: Path, tmp_path: Path
) -> None:
    location = tmp_path / "t"
    shutil.copytree(pristine, location)
    _remove_completion_marker(location)
    found = _check(location, expect=1)["findings"]
    assert len(found) == 1 and "completion marker is missing" in found[0]["what"]
    assert "--repair" in found[0]["repair"]

    report = _check(location, "--repair", expect=0)
    assert [r["repaired"] for r in report["repairs"]] == [True]
    assert _rows(location) == _rows(pristine)
    entry = Timeline.load(Storage.from_uri(str(location))).commits()[0]
    assert Timeline.load(Storage.from_uri(str(location))).read(entry)["repaired"] is True


def test_repair_changes_nothing_when_a_file_of_the_instant_is_gone(pristine: Path, tmp_path: Path) -> None:
    location = tmp_path / "t"
    shutil.copytree(pristine, location)
    first = _first_commit(location)
    _remove_completion_marker(location)
    next((location / ".lakeprune" / "metadata" / "files").glob(f"*.log.{first}.parquet")).unlink()
    timeline, files = _timeline(location), _fingerprint(location)

    report = _check(location, "--repair", expect=1)
    assert [r["repaired"] for r in report["repairs"]] == [False]
    assert "a log may be missing" in report["repairs"][0]["reason"]
    assert _timeline(location) == timeline and _fingerprint(location) == files


def test_check_reports_a_missing_data_file_and_the_timeline_damage_it_cannot_repair(
    pristine: Path, tmp_path: Path
) -> None:
    location = tmp_path / "t"
    shutil.copytree(pristine, location)
    live = LakeTable.open(str(location)).snapshot().files()[0]
    (location / live.path).unlink()
    found = _check(location, expect=1)["findings"]
    assert [f["what"] for f in found] == [f"data file(s) the files index lists are missing: {live.path}"]

    _remove_timeline(location)
    timeline_gone = _check(location, "--repair", expect=1)
    assert "no completed instant" in timeline_gone["findings"][0]["what"]
    assert "backup" in timeline_gone["findings"][0]["repair"]
