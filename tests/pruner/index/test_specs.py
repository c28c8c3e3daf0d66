"""Index rows as shipped between Spark tasks (`pruner.index.specs.to_ipc` / `from_ipc`): they come
back equal, and a chunk whose columns repeat travels compressed."""

from __future__ import annotations

import pyarrow as pa

from pruner.index.specs import from_ipc, to_ipc


def _record_index_chunk(rows: int) -> pa.Table:
    return pa.table(
        {
            "key": pa.array([str(10_000_000 + i) for i in range(rows)]),
            "partition": pa.array(["region=r3"] * rows),
            "file_group": pa.array(["0f" * 16] * rows),
            "_op": pa.array([0] * rows, pa.int8()),
        }
    )


def test_index_rows_come_back_equal() -> None:
    chunk = _record_index_chunk(5_000)
    assert from_ipc(to_ipc(chunk)).equals(chunk)
    assert from_ipc(pa.py_buffer(to_ipc(chunk))).equals(chunk)
    empty = chunk.slice(0, 0)
    assert from_ipc(to_ipc(empty)).equals(empty)


def test_a_chunk_travels_compressed() -> None:
    chunk = _record_index_chunk(15_000)
    assert len(to_ipc(chunk)) < chunk.nbytes / 2
