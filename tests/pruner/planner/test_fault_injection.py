"""Fault injection: every kind of index file (files, record index, column stats, partition stats,
bloom filters, a secondary and a functional index) removed, truncated or garbled — all of a
partition's files, or only those the latest commit wrote — and every query checked against an
oracle that scans the data files. Nothing a query matches is ever pruned; a damaged index shows as
a fallback in the explain record of the step that uses it (and in the sidecar's metrics); damage
to the `files` partition, without which the table's file set is unknown, fails reads with a clear
error naming the file instead of returning an empty table."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from builder import LakepruneTable
from pruner.cli.main import app
from pruner.client import PruningClient
from pruner.errors import TableCorruptError
from pruner.format.layout import METADATA_DIR, IndexFileName
from pruner.index.functional import sql_context
from pruner.planner.prune import prune
from pruner.planner.result import PruneResult
from pruner.predicate.sql import translate
from pruner.sidecar import Sidecar
from pruner.table.table import LakeTable
from tests.pruner.planner.conftest import SCHEMA as SCHEMA_DDL
from tests.pruner.planner.conftest import FunctionalOracle, row
from tests.pruner.service.conftest import SCHEMA, TABLE, address, make_config

# Each damaged partition, the planner step that reads it, and queries that make that step read it.
NEW_KEYS = "id IN (5000, 5007, 5011, 5029)"  # inserted by the table's latest commit
USES = {
    "record_index": ("record_index", ["id = 42", NEW_KEYS]),
    "column_stats": ("column_stats", ["seq BETWEEN 100 AND 120", "score > 30"]),
    "partition_stats": ("partition_stats", ["seq BETWEEN 100 AND 120"]),
    "bloom_filters": ("bloom_filters", ["token = 't1234'", "id = 42"]),
    "secondary_index_idx_hot": ("secondary_index", ["hot = 'h3'", "hot IN ('h1', 'h12')"]),
    "func_index_hour_of_day": ("functional_index", ["hour_of_day = 5", "hour(ts) IN (1, 2)"]),
}
QUERIES = sorted({q for _, queries in USES.values() for q in queries} | {"region = 'eu' AND seq < 300"})


def _remove(path: Path) -> None:
    path.unlink()


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _garble(path: Path) -> None:
    """Flip the last byte of every column chunk: the footer stays valid, no chunk's last page does.

    A chunk ends with its last page's (compressed) values, so the flip always lands in a page body,
    where only the page checksum tells the damage apart from data. Flipping the middle of the file
    instead lands, in a small index file, in the footer's min/max strings: the footer still parses,
    the pages still read, and nothing was damaged."""
    metadata = pq.read_metadata(path)
    data = bytearray(path.read_bytes())
    for group in range(metadata.num_row_groups):
        for column in range(metadata.num_columns):
            chunk = metadata.row_group(group).column(column)
            start = chunk.dictionary_page_offset or chunk.data_page_offset
            data[start + chunk.total_compressed_size - 1] ^= 0x5A
    path.write_bytes(bytes(data))


DAMAGES: dict[str, Callable[[Path], None]] = {"remove": _remove, "truncate": _truncate, "garble": _garble}


@pytest.fixture(scope="module")
def source(indexed_table: str, spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The shared indexed table plus a secondary and a functional index: every kind of index file."""
    location = str(tmp_path_factory.mktemp("faults") / TABLE)
    shutil.copytree(indexed_table, location)
    table = LakepruneTable(location, spark)
    table.sql("CREATE INDEX idx_hot ON events (hot)")
    table.sql("CREATE INDEX hour_of_day ON events (hour(ts))")
    return location


class SourceOracle(FunctionalOracle):
    """The oracle over the undamaged source, which knows its root to compare paths by."""

    def __init__(self, location: str) -> None:
        super().__init__(LakeTable.open(location).snapshot())
        self.root = location


@pytest.fixture(scope="module")
def oracle(source: str) -> SourceOracle:
    return SourceOracle(source)


def _damaged_copy(source: str, target: Path, partition: str, damage: str, latest_only: bool) -> Path:
    shutil.copytree(source, target)
    files = sorted((target / METADATA_DIR / partition).glob("*.parquet"))
    if latest_only:
        newest = max(_instant(f) for f in files)
        files = [f for f in files if _instant(f) == newest]
    assert files, f"no index files in {partition}"
    for path in files:
        DAMAGES[damage](path)
    return target


def _instant(path: Path) -> str:
    name = IndexFileName.parse(path.name)
    assert name is not None
    return name.instant


def _prune(location: str, where: str) -> PruneResult:
    return prune(LakeTable.open(location), where)


def _assert_nothing_lost(location: str, oracle: SourceOracle, where: str) -> PruneResult:
    """Prune the damaged copy at `location`; every file the oracle (over the undamaged source)
    finds a match in is kept, and no file is returned twice."""
    result = _prune(location, where)
    table = LakeTable.open(location)
    schema, expressions = sql_context(table.config.schema, table.definitions)
    matching = oracle.files_matching(translate(where, schema, expressions).domain)
    kept = [s.path.removeprefix(location) for s in result.splits]
    lost = {p.removeprefix(oracle.root) for p in matching} - set(kept)
    assert not lost, f"{where}: pruned {sorted(lost)}"
    assert len(set(kept)) == len(kept), f"{where}: a file returned twice"
    return result


@pytest.mark.parametrize("latest_only", [False, True], ids=["every-file", "latest-commit"])
@pytest.mark.parametrize("damage", sorted(DAMAGES))
@pytest.mark.parametrize("partition", sorted(USES))
def test_damaged_index_never_drops_a_matching_file(
    source: str,
    oracle: SourceOracle,
    tmp_path: Path,
    partition: str,
    damage: str,
    latest_only: bool,
) -> None:
    location = str(_damaged_copy(source, tmp_path / TABLE, partition, damage, latest_only))
    step_name, using = USES[partition]
    for where in QUERIES:
        result = _assert_nothing_lost(location, oracle, where)
        step = next(s for s in result.explain if s.step == step_name)
        if where in using and not latest_only:
            assert step.fallback, f"{where}: {step_name} read damaged {partition} without a fallback"
            assert result.fallbacks >= 1
            assert step.files_out == step.files_in
    if partition == "record_index" and latest_only:
        # The prober's case: the newest keys' index entries gone must not make their files vanish.
        step = next(s for s in _prune(location, NEW_KEYS).explain if s.step == "record_index")
        assert step.fallback and "b0" in step.fallback


@pytest.mark.parametrize("latest_only", [False, True], ids=["every-file", "latest-commit"])
@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_damaged_files_partition_fails_reads_naming_the_file(
    source: str, tmp_path: Path, damage: str, latest_only: bool
) -> None:
    location = str(_damaged_copy(source, tmp_path / TABLE, "files", damage, latest_only))
    snapshot = LakeTable.open(location).snapshot()
    with pytest.raises(TableCorruptError, match=r"index file .*/files/b\d{5}\.(base|log)\.\d{17}\.parquet"):
        snapshot.files()
    with pytest.raises(TableCorruptError):
        _prune(location, "id = 42")
    with pytest.raises(TableCorruptError):
        snapshot.read()


def test_cli_reports_a_missing_files_partition_in_one_line(source: str, tmp_path: Path) -> None:
    location = str(_damaged_copy(source, tmp_path / TABLE, "files", "remove", latest_only=False))
    runner = CliRunner()
    for args in (["table", "read", location], ["prune", location, "--where", "id = 42"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert "is missing" in result.stderr and "Traceback" not in result.output
        assert len(result.stderr.strip().splitlines()) == 1


def test_writes_refuse_a_table_whose_record_index_lost_a_file(
    source: str, spark: SparkSession, tmp_path: Path
) -> None:
    location = str(_damaged_copy(source, tmp_path / TABLE, "record_index", "remove", latest_only=True))
    table = LakepruneTable(location, spark)
    before = LakeTable.open(location).timeline.instants
    with pytest.raises(TableCorruptError, match=r"record index file .* is missing"):
        table.upsert(spark.createDataFrame([row(5001, 1)], SCHEMA_DDL))
    assert LakeTable.open(location).timeline.instants == before  # nothing written, nothing pending


def test_fallbacks_reach_the_sidecar_metrics(source: str, tmp_path: Path) -> None:
    location = _damaged_copy(source, tmp_path / "lake" / TABLE, "column_stats", "remove", latest_only=False)

    with Sidecar(make_config(str(location.parent))) as sidecar:
        assert sidecar.wait_ready(10)
        with PruningClient(address(sidecar)) as client:
            result = client.prune(SCHEMA, TABLE, "seq BETWEEN 100 AND 120", explain=True)
        metrics = sidecar.metrics.registry
        counted = metrics.get_sample_value("lakeprune_prune_fallbacks_total", {"api": "grpc"})
    assert result.fallbacks >= 1
    assert any(s.step == "column_stats" and s.fallback for s in result.explain)
    assert counted is not None and counted >= 1
