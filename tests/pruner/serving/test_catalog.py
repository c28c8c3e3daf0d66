"""The catalog: schemas are warehouse roots, tables the table directories directly under them, and
no name reaches anything else; opened tables are reused until their timeline, their index
definitions or their partitioning change; index data is read through the shared cache."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from builder import LakepruneTable
from builder.create import create_table
from pruner.errors import SnapshotNotFoundError, TableNotFoundError
from pruner.index.definitions import INDEX_DEFS
from pruner.metadata.cache import IndexCache
from pruner.planner.prune import prune
from pruner.predicate.domain import Domain
from pruner.predicate.tuple_domain import TupleDomain
from pruner.serving import catalog as catalog_module
from pruner.serving.catalog import Catalog, TableName
from pruner.storage_requests import StorageRequests, counting


@pytest.fixture
def warehouses(tmp_path: Path) -> dict[str, str]:
    """Two roots: `a` with two tables and some things that are not tables, `b` empty."""
    a, b = tmp_path / "a", tmp_path / "b"
    for name in ("events", "users"):
        create_table(str(a / name), "id bigint, name string", record_key="id")
    (a / "not_a_table").mkdir()
    (a / "file.txt").write_text("x")
    create_table(str(tmp_path / "outside"), "id bigint", record_key="id")
    shutil.copytree(a / "users", a / "Upper")  # a table, but not a name engines can address
    b.mkdir()
    return {"a": str(a), "b": str(b)}


def test_schemas_and_tables(warehouses: dict[str, str]) -> None:
    catalog = Catalog(warehouses, IndexCache(10**6))
    assert catalog.schemas() == ["a", "b"]
    assert catalog.tables("a") == ["events", "users"]
    assert catalog.tables("b") == []
    assert catalog.load() == {"a": ["events", "users"], "b": []}


def test_unknown_schema_names_the_known_ones(warehouses: dict[str, str]) -> None:
    catalog = Catalog(warehouses, IndexCache(10**6))
    with pytest.raises(TableNotFoundError, match=r"schema 'c' does not exist \(schemas: a, b\)"):
        catalog.tables("c")
    with pytest.raises(TableNotFoundError, match="schema 'c'"):
        catalog.table(TableName("c", "events"))


@pytest.mark.parametrize(
    "name",
    ["../outside", "..", ".", "a/b", "events/../users", "/etc", "/tmp", ".lakeprune", "Upper", "", "x y"],
)
def test_only_plain_table_names_under_a_root_are_reachable(warehouses: dict[str, str], name: str) -> None:
    catalog = Catalog(warehouses, IndexCache(10**6))
    with pytest.raises(TableNotFoundError, match="does not exist"):
        catalog.table(TableName("a", name))


def test_a_missing_table_is_reported_by_name_without_server_paths(warehouses: dict[str, str]) -> None:
    catalog = Catalog(warehouses, IndexCache(10**6))
    with pytest.raises(TableNotFoundError) as raised:
        catalog.table(TableName("a", "nope"))
    assert str(raised.value) == "table a.nope does not exist"
    with pytest.raises(TableNotFoundError, match=r"table a\.not_a_table does not exist"):
        catalog.table(TableName("a", "not_a_table"))


def test_load_fails_while_a_root_is_missing(tmp_path: Path) -> None:
    catalog = Catalog({"a": str(tmp_path / "later")}, IndexCache(10**6))
    with pytest.raises(FileNotFoundError, match=r"warehouse root .*later of schema a is not a directory"):
        catalog.load()
    (tmp_path / "later").mkdir()
    assert catalog.load() == {"a": []}


def test_an_unchanged_table_is_reused(warehouses: dict[str, str]) -> None:
    catalog = Catalog(warehouses, IndexCache(10**6))
    first = catalog.table(TableName("a", "events"))
    assert catalog.table(TableName("a", "events")) is first
    assert first.cache is catalog.cache
    assert catalog.snapshot(TableName("a", "events")).instant is None
    with pytest.raises(SnapshotNotFoundError):
        catalog.snapshot(TableName("a", "events"), "20260101000000000")


def test_index_definitions_changed_without_an_instant_are_seen(warehouses: dict[str, str]) -> None:
    """CREATE / DROP INDEX rewrite index_defs.json without a timeline instant."""
    catalog = Catalog(warehouses, IndexCache(10**6))
    name = TableName("a", "events")
    assert catalog.table(name).definitions == ()
    location = str(Path(warehouses["a"]) / "events")
    LakepruneTable(location).sql("CREATE INDEX stats ON events USING column_stats")
    assert [d.name for d in catalog.table(name).definitions] == ["stats"]
    LakepruneTable(location).sql("DROP INDEX stats ON events")
    assert catalog.table(name).definitions == ()


def test_an_unchanged_table_is_checked_with_two_listings_once_its_files_settled(
    warehouses: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Settled definition files are not read again: only the timeline and `.lakeprune/` are
    listed. Files modified within the margin are read again at every call."""
    catalog = Catalog(warehouses, IndexCache(10**6))
    name = TableName("a", "events")
    first = catalog.table(name)
    with counting() as recent:
        assert catalog.table(name) is first
    assert recent.value().gets > 0  # table.json, written just now, is read again
    monkeypatch.setattr(catalog_module, "SETTLED_SECONDS", 0.0)
    catalog.table(name)  # remembers the listing, now settled
    with counting() as settled:
        assert catalog.table(name) is first
    assert settled.value() == StorageRequests(lists=2)


def test_a_rewrite_of_one_size_and_time_within_the_margin_is_seen(warehouses: dict[str, str]) -> None:
    """Object stores keep modification times to the second: a definition file rewritten at the same
    size within that second lists exactly as before, and must still be read again."""
    catalog = Catalog(warehouses, IndexCache(10**6))
    name = TableName("a", "events")
    location = Path(warehouses["a"]) / "events"
    LakepruneTable(str(location)).sql("CREATE INDEX stats ON events USING column_stats")
    assert [d.name for d in catalog.table(name).definitions] == ["stats"]
    defs = location / INDEX_DEFS
    listed = defs.stat()
    defs.write_bytes(defs.read_bytes().replace(b'"stats"', b'"stat2"'))
    os.utime(defs, ns=(listed.st_atime_ns, listed.st_mtime_ns))
    assert defs.stat().st_size == listed.st_size
    assert [d.name for d in catalog.table(name).definitions] == ["stat2"]


def test_a_partitioning_change_without_an_instant_is_seen(warehouses: dict[str, str]) -> None:
    """Partition evolution rewrites table.json without a timeline instant."""
    catalog = Catalog(warehouses, IndexCache(10**6))
    name = TableName("a", "events")
    assert catalog.table(name).config.partition_fields == ()
    LakepruneTable(str(Path(warehouses["a"]) / "events")).alter_partitioning(["name"])
    reopened = catalog.table(name).config
    assert reopened.partition_fields == ("name",) and reopened.partition_history[0].fields == ()
    assert catalog.table(name) is catalog.table(name)


# Over the indexed table (built once per session with Spark) ----------------------------------------

TOKEN = TupleDomain.with_domains({"token": Domain.single_value("t1234")})


def test_repeated_prunes_read_index_data_from_the_cache(table_copy: str) -> None:
    catalog = Catalog({"lake": str(Path(table_copy).parent)}, IndexCache(64 * 1024**2))
    name = TableName("lake", "events")
    first = prune(catalog.table(name), TOKEN)
    stats = catalog.cache.stats()
    assert stats.misses > 0 and stats.entries > 0
    second = prune(catalog.table(name), TOKEN)
    after = catalog.cache.stats()
    assert after.misses == stats.misses and after.hits > stats.hits
    assert second.splits == first.splits


def test_a_compaction_is_picked_up_and_changes_nothing_but_the_snapshot(table_copy: str) -> None:
    catalog = Catalog({"lake": str(Path(table_copy).parent)}, IndexCache(64 * 1024**2))
    name = TableName("lake", "events")
    before = prune(catalog.table(name), TOKEN)
    opened = catalog.table(name)
    LakepruneTable(table_copy).compact()
    misses = catalog.cache.stats().misses
    reopened = catalog.table(name)
    assert reopened is not opened and len(reopened.timeline.instants) == len(opened.timeline.instants) + 1
    after = prune(catalog.table(name), TOKEN)
    assert after.snapshot != before.snapshot and after.splits == before.splits
    assert catalog.cache.stats().misses > misses  # the compacted buckets are new files


def test_a_dropped_index_stops_pruning_at_the_next_call(table_copy: str) -> None:
    catalog = Catalog({"lake": str(Path(table_copy).parent)}, IndexCache(64 * 1024**2))
    name = TableName("lake", "events")
    with_bloom = prune(catalog.table(name), TOKEN)
    LakepruneTable(table_copy).sql("DROP INDEX bf ON events")
    without = prune(catalog.table(name), TOKEN)
    step = next(s for s in without.explain if s.step == "bloom_filters")
    assert step.skipped == "no bloom_filters index"
    assert {s.path for s in with_bloom.splits} <= {s.path for s in without.splits}


def test_a_deleted_table_is_gone_at_the_next_call(table_copy: str) -> None:
    catalog = Catalog({"lake": str(Path(table_copy).parent)}, IndexCache(64 * 1024**2))
    name = TableName("lake", "events")
    catalog.table(name)
    shutil.rmtree(table_copy)
    with pytest.raises(TableNotFoundError, match=r"^table lake\.events does not exist$"):
        catalog.table(name)
