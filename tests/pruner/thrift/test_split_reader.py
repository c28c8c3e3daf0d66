"""Paging through a split: pages concatenate to exactly the filtered rows, respect the byte budget,
and count(*) and key filters work."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.storage import Storage
from pruner.thrift.split_reader import KeyFilter, PagePosition, SplitRead, SplitReader
from pruner.types import TableSchema

SCHEMA = TableSchema.parse("id bigint, city string, score double")
ROWS = 1_000


@pytest.fixture(scope="module")
def storage(tmp_path_factory: pytest.TempPathFactory) -> Storage:
    root = tmp_path_factory.mktemp("split")
    ids = np.arange(ROWS, dtype=np.int64)
    table = pa.table(
        {
            "id": ids,
            "city": pa.array([None if i % 11 == 0 else f"c{i % 7}" * (i % 5) for i in range(ROWS)]),
            "score": ids / 3,
        }
    )
    pq.write_table(table, root / "f.parquet", row_group_size=128)
    return Storage.from_uri(str(root))


def fixed_width(table: pa.Table) -> np.ndarray:
    return np.full(table.num_rows, 10 * table.num_columns)


def read_all(storage: Storage, read: SplitRead, max_bytes: int) -> tuple[pa.Table, int]:
    reader, position, pages, pieces = SplitReader(), PagePosition(), 0, []
    while position is not None:
        page = reader.page(read, position, max_bytes, fixed_width)
        assert page.rows.num_rows * 10 * len(read.columns) <= max(max_bytes, 10 * len(read.columns))
        pieces.append(page.rows)
        position, pages = page.next, pages + 1
    return pa.concat_tables(pieces), pages


def split(
    storage: Storage, columns: tuple[str, ...], constraint: TupleDomain, keys: KeyFilter | None = None
) -> SplitRead:
    return SplitRead(b"id", storage, "f.parquet", SCHEMA, columns, constraint, keys)


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=1, max_value=5_000), st.integers(min_value=0, max_value=ROWS), st.booleans())
def test_pages_concatenate_to_the_filtered_rows(
    storage: Storage, max_bytes: int, low: int, nulls: bool
) -> None:
    domain = Domain.of(SortedRangeSet.of_ranges(Range.greater_than_or_equal(low)), False)
    constraint = TupleDomain.with_domains(
        {"id": domain, "city": Domain.not_null() if not nulls else Domain.all()}
    )
    rows, _ = read_all(storage, split(storage, ("city", "id"), constraint), max_bytes)
    expected = pq.read_table(storage.path("f.parquet")).to_pylist()
    expected = [
        {"city": r["city"], "id": r["id"]}
        for r in expected
        if r["id"] >= low and (nulls or r["city"] is not None)
    ]
    assert rows.to_pylist() == expected


def test_large_budget_reads_in_one_page(storage: Storage) -> None:
    rows, pages = read_all(storage, split(storage, ("id",), TupleDomain.all()), 10**9)
    assert (rows.num_rows, pages) == (ROWS, 1)


def test_count_star_ignores_the_constraint_and_needs_no_columns(storage: Storage) -> None:
    only_some = TupleDomain.with_domains({"id": Domain.single_value(3)})
    page = SplitReader().page(split(storage, (), only_some), PagePosition(), 10, fixed_width)
    assert (page.row_count, page.rows.num_columns, page.next) == (ROWS, 0, None)


def test_key_filter_returns_exactly_the_key_rows(storage: Storage) -> None:
    keys = KeyFilter(pa.table({"id": pa.array([5, 999, 5000], pa.int64())}))
    rows, _ = read_all(storage, split(storage, ("id", "score"), TupleDomain.all(), keys), 10**6)
    assert rows.column("id").to_pylist() == [5, 999]
    pairs = KeyFilter(pa.table({"id": pa.array([7, 8], pa.int64()), "city": ["c0c0", "nope"]}))
    rows, _ = read_all(storage, split(storage, ("id",), TupleDomain.all(), pairs), 10**6)
    assert rows.column("id").to_pylist() == [7]
    count = SplitReader().page(split(storage, (), TupleDomain.all(), keys), PagePosition(), 10, fixed_width)
    assert count.row_count == 2
