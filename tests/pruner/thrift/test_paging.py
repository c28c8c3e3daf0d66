"""One plan per query: `GetSplits` and `GetIndexSplits` page a listing planned once. Between the
first page and the rest, the table's index state flips — an index dropped, one created and built,
the index partitions compacted — and the rows read through every split equal an oracle scan of the
snapshot: nothing lost, nothing read twice. With the plan evicted in between (as when another
sidecar serves the later pages), a page is served again only when the listing can be planned
again on the same basis; otherwise it is refused with a clear error, never a different listing."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pyspark.sql import SparkSession

from builder.compaction import compact
from builder.index_build import build_index, execute
from pruner.advisor.shapes import Operation, Shape
from pruner.table.table import LakeTable
from pruner.thrift import idl
from pruner.thrift.endpoint import ThriftEndpoint
from tests.pruner.thrift.support import bigint_range, rows, thrift_sidecar

SCHEMA = "lake"
TABLE = idl.SchemaTableName(SCHEMA, "events")
SEQ_LOW, SEQ_HIGH = 100, 400
HOT_VALUES = ["h1", "h3", "h8"]


@pytest.fixture(scope="module")
def source(indexed_table: str, spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The shared indexed table with a secondary index on `hot` (for index joins)."""
    location = str(tmp_path_factory.mktemp("paging") / "events")
    shutil.copytree(indexed_table, location)
    execute(location, "CREATE INDEX idx_hot ON events (hot)", spark)
    return location


@pytest.fixture
def location(source: str, tmp_path: Path) -> str:
    target = tmp_path / "lake" / "events"
    shutil.copytree(source, target)
    return str(target)


@pytest.fixture
def sidecar(location: str) -> Iterator[tuple[Any, ThriftEndpoint]]:
    with thrift_sidecar({SCHEMA: str(Path(location).parent)}) as running:
        yield running


Flip = Callable[[str, SparkSession], object]
# Per listing, the index state flips between its first page and the rest: (prepare, flip).
FLIPS: dict[str, dict[str, tuple[Flip | None, Flip]]] = {
    "GetSplits": {
        "drop": (None, lambda at, _: execute(at, "DROP INDEX stats ON events")),
        "create_and_build": (
            lambda at, _: (
                execute(at, "DROP INDEX pstats ON events"),
                execute(at, "DROP INDEX stats ON events"),
            ),
            lambda at, spark: execute(at, "CREATE INDEX stats ON events USING column_stats", spark),
        ),
        "compaction": (None, lambda at, _: compact(at)),
    },
    "GetIndexSplits": {
        "drop": (None, lambda at, _: execute(at, "DROP INDEX idx_hot ON events")),
        "create_and_build": (
            lambda at, spark: (
                execute(at, "DROP INDEX idx_hot ON events"),
                execute(at, "CREATE INDEX idx_hot ON events (hot)", spark, build=False),
            ),
            lambda at, spark: build_index(at, "idx_hot", spark),
        ),
        "compaction": (None, lambda at, _: compact(at)),
    },
}


def _oracle_ids(location: str, keep: Callable[[Any], Any]) -> list[int]:
    """The `id` of every row of the latest snapshot that `keep` (an Arrow filter on the rows) keeps."""
    data = LakeTable.open(location).snapshot().read()
    return sorted(data.filter(keep(data))["id"].to_pylist())


def _read_ids(client: Any, splits: list[idl.Split]) -> list[int]:
    ids: list[int] = []
    for split in splits:
        values, _ = rows(client, split, ["id"])
        ids += values[0]
    return sorted(ids)


def _all_pages(first: idl.SplitBatch, next_page: Callable[[idl.Id], idl.SplitBatch]) -> list[idl.Split]:
    found, batch = list(first.splits), first
    while batch.nextToken is not None:
        batch = next_page(batch.nextToken)
        found += batch.splits
    return found


def _split_pages(client: Any, token: idl.Id | None) -> idl.SplitBatch:
    constraint = bigint_range("seq", SEQ_LOW, SEQ_HIGH)
    return client.trinoGetSplits(TABLE, idl.NullableColumnSet(None), constraint, 1, idl.NullableToken(token))


def _index_pages(client: Any, token: idl.Id | None) -> idl.SplitBatch:
    keys = idl.PageResult([idl.Block(varcharData=_varchar(HOT_VALUES))], len(HOT_VALUES), None)
    return client.trinoGetIndexSplits(
        TABLE, ["hot"], ["id", "hot"], keys, idl.TupleDomain({}), 1, idl.NullableToken(token)
    )


def _varchar(values: list[str]) -> idl.Varchar:
    data = [v.encode() for v in values]
    return idl.Varchar(None, [len(d) for d in data], b"".join(data))


LISTINGS = {
    "GetSplits": (
        _split_pages,
        lambda t: pc.and_(pc.greater_equal(t["seq"], SEQ_LOW), pc.less_equal(t["seq"], SEQ_HIGH)),
    ),
    "GetIndexSplits": (_index_pages, lambda t: pc.is_in(t["hot"], value_set=pa.array(HOT_VALUES))),
}


@pytest.mark.parametrize("listing", sorted(LISTINGS))
@pytest.mark.parametrize("flip", ["drop", "create_and_build", "compaction"])
def test_pages_are_slices_of_one_plan_while_indexes_change(
    sidecar: tuple[Any, ThriftEndpoint], location: str, spark: SparkSession, flip: str, listing: str
) -> None:
    client, endpoint = sidecar
    prepare, change = FLIPS[listing][flip]
    if prepare is not None:
        prepare(location, spark)
    page, keep = LISTINGS[listing]
    wanted = _oracle_ids(location, keep)
    planned = _files(endpoint, _all_pages(page(client, None), lambda token: page(client, token)))
    _evict(endpoint)  # the run below plans afresh
    first = page(client, None)
    assert first.nextToken is not None, "the listing must have several pages"
    change(location, spark)
    splits = _all_pages(first, lambda token: page(client, token))
    assert _files(endpoint, splits) == planned  # the listing of the first page's plan, in order
    assert _read_ids(client, splits) == wanted  # nothing lost, nothing read twice


@pytest.mark.parametrize("listing", sorted(LISTINGS))
def test_an_evicted_plan_is_planned_again_on_the_same_basis(
    sidecar: tuple[Any, ThriftEndpoint], location: str, listing: str
) -> None:
    client, endpoint = sidecar
    page, keep = LISTINGS[listing]
    wanted = _oracle_ids(location, keep)
    first = page(client, None)
    compact(location)  # a new instant, the same basis
    _evict(endpoint)
    splits = _all_pages(first, lambda token: page(client, token))
    assert _read_ids(client, splits) == wanted


@pytest.mark.parametrize("listing", sorted(LISTINGS))
def test_an_evicted_plan_whose_basis_changed_is_refused(
    sidecar: tuple[Any, ThriftEndpoint], location: str, listing: str
) -> None:
    client, endpoint = sidecar
    page, _ = LISTINGS[listing]
    first = page(client, None)
    execute(location, "DROP INDEX bf ON events")
    _evict(endpoint)
    with pytest.raises(idl.ServiceException, match="run the query again") as refused:
        page(client, first.nextToken)
    assert not refused.value.retryable


@pytest.fixture
def planned(sidecar: tuple[Any, ThriftEndpoint], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The method of every listing the sidecar plans (and counts) from now on."""
    endpoint = sidecar[1]
    methods: list[str] = []
    original = endpoint.connector.on_prune
    assert original is not None

    def counting(method: str, table: Any, domain: Any, result: Any) -> None:
        methods.append(method)
        original(method, table, domain, result)

    monkeypatch.setattr(endpoint.connector, "on_prune", counting)
    return methods


def test_later_pages_are_not_planned_or_counted_again(
    sidecar: tuple[Any, ThriftEndpoint], location: str, planned: list[str]
) -> None:
    client, endpoint = sidecar
    splits = _all_pages(_split_pages(client, None), lambda token: _split_pages(client, token))
    assert len(splits) > 1 and planned == ["getSplits"]
    # the one plan is one entry of the workload log, named by the engine that asked, over Thrift
    assert endpoint.workload is not None
    logged, _ = endpoint.workload.entries(LakeTable.open(location).storage.uri)
    assert [(e.engine, e.shapes) for e in logged] == [("trino (thrift)", (Shape("seq", Operation.RANGE),))]


def test_every_query_plans_and_counts_afresh(
    sidecar: tuple[Any, ThriftEndpoint], location: str, planned: list[str]
) -> None:
    """A first page is a new query: it is planned and counted even when an equal query ran before
    (another engine, or the same query again), and it sees the index state of now."""
    client, endpoint = sidecar
    earlier = _split_pages(client, None)
    with_stats = _files(endpoint, _all_pages(earlier, lambda token: _split_pages(client, token)))
    again = _split_pages(client, None)  # the same query once more: planned and counted again
    assert _files(endpoint, _all_pages(again, lambda token: _split_pages(client, token))) == with_stats
    execute(location, "DROP INDEX stats ON events")
    execute(location, "DROP INDEX pstats ON events")
    later = _split_pages(client, None)
    without_stats = _files(endpoint, _all_pages(later, lambda token: _split_pages(client, token)))
    assert planned == ["getSplits"] * 3
    assert len(without_stats) > len(with_stats)  # planned on the index state of its own start
    # the earlier query's plan is still the one its tokens name
    assert _files(endpoint, _all_pages(earlier, lambda token: _split_pages(client, token))) == with_stats


def _files(endpoint: ThriftEndpoint, splits: list[idl.Split]) -> list[str]:
    """The data file each split reads, from its sealed id."""
    return [endpoint.connector.sealer.open("split", s.splitId.id)["file"] for s in splits]


def _evict(endpoint: ThriftEndpoint) -> None:
    endpoint.connector.split_plans.clear()
    endpoint.connector.index_plans.clear()
