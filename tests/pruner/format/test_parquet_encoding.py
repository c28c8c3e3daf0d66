"""Which columns get a dictionary: repeating values do; unique ones, booleans and dictionaries past
pyarrow's page limit do not. And what that does to a written file: no dictionary pages left behind
by a fallback, a smaller file than pyarrow's defaults write."""

from __future__ import annotations

import io
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pruner.format.parquet_encoding import SAMPLE_ROWS, dictionary_columns


def _rows(n: int) -> pa.Table:
    ids = np.arange(n, dtype=np.int64)
    return pa.table(
        {
            "id": ids,
            "city": pa.array(["ams", "ber", "par"] * (n // 3) + ["ams"] * (n % 3)),
            "note": pa.array([f"note-{i}" for i in ids]),
            "amount": ids * 0.25,
            "flag": pa.array(ids % 2 == 0),
            "nothing": pa.nulls(n, pa.string()),
            "price": pa.array([Decimal(int(i) % 10) for i in ids], pa.decimal128(10, 2)),
        }
    )


def _written(rows: pa.Table, **options: object) -> bytes:
    sink = io.BytesIO()
    pq.write_table(rows, sink, compression="zstd", **options)  # type: ignore[arg-type]
    return sink.getvalue()


def test_repeating_columns_get_a_dictionary_unique_ones_and_booleans_do_not() -> None:
    assert dictionary_columns(_rows(1000)) == ["city", "nothing", "price"]


def test_a_large_table_is_judged_by_a_sample_with_the_same_answer() -> None:
    assert dictionary_columns(_rows(SAMPLE_ROWS * 4 + 7)) == ["city", "nothing", "price"]


def test_repeating_values_whose_dictionary_would_pass_the_page_limit_stay_plain() -> None:
    values = [f"{i:05d}-" + "x" * 200 for i in range(8000)]  # 8000 distinct x ~210 bytes: 1.6 MiB
    rows = pa.table({"long": values * 3, "short": [v[:5] for v in values] * 3})
    assert dictionary_columns(rows) == ["short"]


def test_no_rows_no_dictionary() -> None:
    assert dictionary_columns(_rows(0)) == []


def test_a_written_file_has_dictionary_pages_only_where_chosen_and_is_smaller() -> None:
    rows = _rows(300_000)
    chosen = dictionary_columns(rows)
    data = _written(rows, use_dictionary=chosen, row_group_size=100_000)
    metadata = pq.ParquetFile(io.BytesIO(data)).metadata
    for group in range(metadata.num_row_groups):
        for index in range(metadata.num_columns):
            column = metadata.row_group(group).column(index)
            assert column.has_dictionary_page == (column.path_in_schema in chosen), column.path_in_schema
    assert pq.read_table(io.BytesIO(data)).equals(rows)
    assert len(data) < 0.9 * len(_written(rows, row_group_size=100_000)), "pyarrow's default: all dictionary"
