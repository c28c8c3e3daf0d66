"""Reading the Parquet files `pruner.storage.Storage` hands out without leaving Python objects to
Arrow's thread pools. Storage's files are Python objects (`pa.PythonFile` around the request counter
of `pruner.storage_requests`) and the bytes it reads whole are Python `bytes`; an Arrow pool thread
that reads such a file, or drops the last reference to it or to a buffer over such bytes, takes the
GIL, and if the interpreter is finalizing by then, Python 3.11 ends that thread with `pthread_exit`
inside the C++ destructor that asked: `std::terminate`, SIGABRT after a command has done its work
(issue 35). pyarrow's `ParquetFile` pre-buffers on Arrow's I/O pool and decodes on its CPU pool, and
a dataset scan reads row groups on the pools whatever `use_threads` says. Here `read_row_groups` and
`iter_row_groups` read the wanted row groups' column chunks in ranges coalesced as Arrow's
pre-buffering would (one request per row group, or per run of adjacent ones) and decode them, all on
the calling thread, while `read_in_memory` copies a whole file's bytes into memory Arrow owns and
lets Arrow's threads decode that copy, which any thread can release."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

HOLE_BYTES = 8 * 1024
"""Ranges closer than this are read as one (Arrow's `CacheOptions.hole_size_limit`)."""

RANGE_BYTES = 32 * 1024 * 1024
"""... unless the one read would be longer than this (Arrow's `CacheOptions.range_size_limit`)."""


def read_in_memory(data: bytes, *, verify_checksums: bool = False) -> pa.Table:
    """Every row of the Parquet file whose bytes are `data`. The bytes are copied into a buffer
    Arrow allocates first, so that Arrow's threads can decode them in parallel and drop their
    references to them whenever they finish, at exit included."""
    owned = pa.allocate_buffer(len(data))
    if data:
        memoryview(owned).cast("B")[:] = data
    return pq.ParquetFile(pa.BufferReader(owned), page_checksum_verification=verify_checksums).read()


def read_row_groups(
    source: pa.NativeFile,
    metadata: pq.FileMetaData,
    groups: Sequence[int],
    *,
    verify_checksums: bool = False,
) -> pa.Table:
    """Row groups `groups` of the Parquet file `source` (whose footer is `metadata`), every column,
    read and decoded on the calling thread; an empty table when `groups` is."""
    if not groups:
        return metadata.schema.to_arrow_schema().empty_table()
    return _serial(source, metadata, groups, verify_checksums).read_row_groups(
        list(groups), use_threads=False
    )


def iter_row_groups(
    source: pa.NativeFile, metadata: pq.FileMetaData, *, verify_checksums: bool = False
) -> Iterator[pa.Table]:
    """Every row group of the Parquet file `source` (whose footer is `metadata`), one table each and
    in order, read and decoded on the calling thread: no more reads than `read_row_groups` of all of
    them makes, each made when the first row group it holds is decoded."""
    groups = range(metadata.num_row_groups)
    parquet = _serial(source, metadata, groups, verify_checksums)
    for group in groups:
        yield parquet.read_row_group(group, use_threads=False)


def _serial(
    source: pa.NativeFile, metadata: pq.FileMetaData, groups: Sequence[int], verify_checksums: bool
) -> pq.ParquetFile:
    """`source` as a `ParquetFile` that reads the column chunks of `groups` through `_Prefetched`,
    without Arrow's pre-buffering (which reads on Arrow's I/O threads)."""
    ranges = coalesce(sorted(chunk for group in groups for chunk in column_chunk_ranges(metadata, group)))
    prefetched = pa.PythonFile(_Prefetched(source, ranges), mode="r")
    return pq.ParquetFile(
        prefetched, metadata=metadata, pre_buffer=False, page_checksum_verification=verify_checksums
    )


def column_chunk_ranges(metadata: pq.FileMetaData, group: int) -> list[tuple[int, int]]:
    """The [start, end) byte range of each column chunk of row group `group` (its dictionary page,
    if any, then its data pages), as Arrow computes them to read the chunk."""
    row_group = metadata.row_group(group)
    ranges = []
    for column in range(row_group.num_columns):
        chunk = row_group.column(column)
        start = chunk.data_page_offset
        if chunk.has_dictionary_page and 0 < chunk.dictionary_page_offset < start:
            start = chunk.dictionary_page_offset
        ranges.append((start, start + chunk.total_compressed_size))
    return ranges


def coalesce(ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted [start, end) ranges merged where the hole between them is at most `HOLE_BYTES` and
    the merged range stays within `RANGE_BYTES`."""
    merged: list[tuple[int, int]] = []
    for start, end in ranges:
        if merged and start - merged[-1][1] <= HOLE_BYTES and end - merged[-1][0] <= RANGE_BYTES:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


class _Prefetched:
    """A readable file (for `pa.PythonFile`) over `source` that reads each of the byte `ranges`
    whole, once, when a read first falls inside it, and answers reads inside it from memory; any
    other read goes to `source`."""

    def __init__(self, source: pa.NativeFile, ranges: Sequence[tuple[int, int]]) -> None:
        self._source = source
        self._size = int(source.size())
        self._position = 0
        self._ranges = list(ranges)
        self._read: dict[int, memoryview] = {}  # by range start
        self.closed = False

    def read(self, nbytes: int | None = None) -> bytes | memoryview:
        end = self._size if nbytes is None or nbytes < 0 else min(self._position + nbytes, self._size)
        start = self._position
        if end <= start:
            return b""
        out: bytes | memoryview
        for first, last in self._ranges:
            if first <= start and end <= last:
                if first not in self._read:
                    self._read[first] = memoryview(self._source.read_at(last - first, first))
                out = self._read[first][start - first : end - first]
                break
        else:
            out = self._source.read_at(end - start, start)
        self._position += len(out)
        return out

    def seek(self, position: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._position, os.SEEK_END: self._size}[whence]
        self._position = max(base + position, 0)
        return self._position

    def tell(self) -> int:
        return self._position

    def size(self) -> int:
        return self._size

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True  # `source` is its opener's to close
