"""pruner.format.parquet_reads: row groups read from a `Storage` file give what pyarrow gives, in one
counted read per run of adjacent row groups, and whole files read from their bytes likewise."""

from __future__ import annotations

import secrets
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pruner.format.parquet_reads import (
    HOLE_BYTES,
    RANGE_BYTES,
    coalesce,
    iter_row_groups,
    read_in_memory,
    read_row_groups,
)
from pruner.storage import Storage
from pruner.storage_requests import counting

ROWS_PER_GROUP = 1000
GROUPS = 6


@pytest.fixture
def written(tmp_path: Path) -> tuple[Storage, str]:
    """A file of six row groups, each well over `HOLE_BYTES` (incompressible keys), with a
    dictionary-encoded column (a dictionary page before its data pages) and a nullable one."""
    n = ROWS_PER_GROUP * GROUPS
    rows = pa.table(
        {
            "key": [f"k{i:06d}{secrets.token_hex(8)}" for i in range(n)],
            "city": [("ams", "ber", "cdg")[i % 3] for i in range(n)],
            "score": [float(i) if i % 7 else None for i in range(n)],
        }
    )
    storage = Storage.from_uri(str(tmp_path))
    with storage.open_output_stream("f.parquet") as sink:
        pq.write_table(
            rows,
            sink,
            row_group_size=ROWS_PER_GROUP,
            compression="zstd",
            use_dictionary=["city"],
            write_page_checksum=True,
        )
    return storage, "f.parquet"


def test_row_groups_are_read_as_pyarrow_reads_them(written: tuple[Storage, str]) -> None:
    storage, rel = written
    reference = pq.ParquetFile(storage.path(rel))
    with storage.open_input_file(rel) as source:
        metadata = reference.metadata
        picked = read_row_groups(source, metadata, [1, 4], verify_checksums=True)
        assert picked.equals(reference.read_row_groups([1, 4]))
        assert read_row_groups(source, metadata, []).equals(reference.schema_arrow.empty_table())
        each = list(iter_row_groups(source, metadata, verify_checksums=True))
    assert [t.num_rows for t in each] == [ROWS_PER_GROUP] * GROUPS
    assert pa.concat_tables(each).equals(reference.read())
    assert read_in_memory(storage.read_bytes(rel), verify_checksums=True).equals(reference.read())


def test_one_read_per_run_of_adjacent_row_groups(written: tuple[Storage, str]) -> None:
    storage, rel = written
    metadata = pq.ParquetFile(storage.path(rel)).metadata
    for groups, reads in [([2], 1), ([1, 2, 3], 1), ([0, 2, 5], 3), (list(range(GROUPS)), 1)]:
        with counting() as requests, storage.open_input_file(rel) as source:
            read_row_groups(source, metadata, groups)
        assert requests.value().gets == reads, groups
    with counting() as requests, storage.open_input_file(rel) as source:
        for _ in iter_row_groups(source, metadata):
            pass
    assert requests.value().gets == 1


def test_a_damaged_page_fails_the_read(written: tuple[Storage, str]) -> None:
    """Checksums are verified: a flipped byte in a page body is an error, not wrong values."""
    storage, rel = written
    metadata = pq.ParquetFile(storage.path(rel)).metadata
    chunk = metadata.row_group(3).column(0)
    data = bytearray(storage.read_bytes(rel))
    data[chunk.data_page_offset + chunk.total_compressed_size - 1] ^= 0x5A
    storage.write_bytes(rel, bytes(data))
    with storage.open_input_file(rel) as source:
        assert read_row_groups(source, metadata, [2], verify_checksums=True).num_rows == ROWS_PER_GROUP
        with pytest.raises(OSError, match="CRC"):
            read_row_groups(source, metadata, [3], verify_checksums=True)
    with pytest.raises(OSError, match="CRC"):
        read_in_memory(bytes(data), verify_checksums=True)


def test_ranges_coalesce_across_small_holes_up_to_the_range_limit() -> None:
    assert coalesce([]) == []
    assert coalesce([(0, 10), (10, 20), (20 + HOLE_BYTES, 30 + HOLE_BYTES)]) == [(0, 30 + HOLE_BYTES)]
    assert coalesce([(0, 10), (11 + HOLE_BYTES, 20 + HOLE_BYTES)]) == [
        (0, 10),
        (11 + HOLE_BYTES, 20 + HOLE_BYTES),
    ]
    assert coalesce([(0, RANGE_BYTES - 5), (RANGE_BYTES - 5, RANGE_BYTES + 5)]) == [
        (0, RANGE_BYTES - 5),
        (RANGE_BYTES - 5, RANGE_BYTES + 5),
    ]
