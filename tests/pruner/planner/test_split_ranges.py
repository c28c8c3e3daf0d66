"""`Split.ranges`: a file's split cut into byte ranges covers the file's bytes exactly once, each
range within the size asked for, and the row counts add up to the file's; read as engines read
ranges (the row groups whose first page lies in the range), a real multi-row-group Parquet file's
ranges read every row group once."""

from __future__ import annotations

import itertools
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pruner.planner.result import Split


def split(start: int, length: int, rows: int) -> Split:
    return Split("file:///t/p/f.parquet", "p", {}, "fg", start, length, rows, start + length)


@given(
    start=st.integers(0, 1 << 40),
    length=st.integers(1, 1 << 40),
    rows=st.integers(0, 1 << 40),
    pieces=st.integers(1, 200),
    slack=st.integers(0, 1 << 20),
)
def test_ranges_cover_the_split_once_and_share_its_rows(
    start: int, length: int, rows: int, pieces: int, slack: int
) -> None:
    max_bytes = -(-length // pieces) + slack  # at most `pieces` ranges
    whole = split(start, length, rows)
    ranges = whole.ranges(max_bytes)
    assert ranges[0].start == start and ranges[-1].start + ranges[-1].length == start + length
    assert all(a.start + a.length == b.start for a, b in itertools.pairwise(ranges))
    assert all(0 < r.length <= max_bytes for r in ranges)
    assert sum(r.row_count for r in ranges) == rows and all(r.row_count >= 0 for r in ranges)
    assert all((r.path, r.file_size, r.partition_values) == (whole.path, whole.file_size, {}) for r in ranges)
    assert len(ranges) == -(-length // max_bytes)
    if length <= max_bytes:
        assert ranges == [whole]


def test_zero_is_one_split_per_file_and_negative_is_refused() -> None:
    whole = split(0, 10_000, 100)
    assert whole.ranges(0) == [whole]
    with pytest.raises(ValueError, match="max_bytes must be >= 0"):
        whole.ranges(-1)


def row_group_starts(path: Path) -> list[tuple[int, int]]:
    """(offset of the first page, rows) of each row group, as a Parquet reader locates them: the
    first column chunk's dictionary page when it has one, else its first data page."""
    metadata = pq.ParquetFile(path).metadata
    starts = []
    for i in range(metadata.num_row_groups):
        chunk = metadata.row_group(i).column(0)
        offset = chunk.dictionary_page_offset if chunk.has_dictionary_page else chunk.data_page_offset
        starts.append((offset, metadata.row_group(i).num_rows))
    return starts


@pytest.mark.parametrize("max_bytes", [4_096, 20_000, 1 << 30])
def test_the_ranges_of_a_parquet_file_read_each_row_group_once(tmp_path: Path, max_bytes: int) -> None:
    path = tmp_path / "f.parquet"
    rows = 50_000
    pq.write_table(
        pa.table(
            {"id": pa.array(range(rows), pa.int64()), "text": [f"value {i % 977}" for i in range(rows)]}
        ),
        path,
        row_group_size=6_000,
    )
    groups = row_group_starts(path)
    assert len(groups) == 9
    size = path.stat().st_size
    read = [
        offset
        for r in split(0, size, rows).ranges(max_bytes)
        for offset, _ in groups
        if r.start <= offset < r.start + r.length
    ]
    assert sorted(read) == sorted(offset for offset, _ in groups)  # every row group, once
