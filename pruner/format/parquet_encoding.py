"""Which columns of rows about to be written to Parquet by pyarrow get a dictionary.

pyarrow starts every column with dictionary encoding and, once a column's dictionary outgrows its
page limit (1 MiB), falls back to plain encoding — keeping the dictionary-encoded pages it has
already written, again in every row group. On columns whose values rarely repeat (keys, amounts,
free text) that costs space and buys nothing: data files written that way were 1.7x the size
parquet-mr (Spark) writes for the same rows (`bench/notes/driver_bottleneck.md`). This module
decides per column, before the write, from an evenly spaced sample of the rows: a dictionary where
the sampled values repeat (at most half of them distinct) and the dictionary they need stays under
the page limit, plain encoding (which zstd still compresses) everywhere else. A column is then
encoded one way throughout the file. The choice only changes encodings: every reader reads both.
Used for the data files the rewrite writes and for index files (logs and bases), whose 4096-row row
groups never fall back but dictionary-encode their unique keys, which costs more than the keys
themselves."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

SAMPLE_ROWS = 32_768
"""Rows looked at per column: evenly spaced over the rows, all of them when there are fewer."""

MAX_DISTINCT_FRACTION = 0.5
"""A column gets a dictionary only if at most this fraction of its sampled non-null values differ."""

DICTIONARY_PAGE_LIMIT = 1 << 20
"""pyarrow's default dictionary page size limit, beyond which it falls back to plain encoding."""


def dictionary_columns(rows: pa.Table) -> list[str]:
    """The names of the columns of `rows` worth dictionary encoding (see the module docstring);
    pass them as `pyarrow.parquet.write_table(..., use_dictionary=...)`."""
    if rows.num_rows == 0:
        return []
    sample = _sample(rows)
    return [
        field.name
        for field in rows.schema
        if not pa.types.is_boolean(field.type)  # Parquet has no dictionary for booleans
        and _repeats(sample.column(field.name))
    ]


def _sample(rows: pa.Table) -> pa.Table:
    if rows.num_rows <= SAMPLE_ROWS:
        return rows
    positions = np.linspace(0, rows.num_rows - 1, SAMPLE_ROWS, dtype=np.int64)
    return rows.take(pa.array(positions))


def _repeats(values: pa.ChunkedArray) -> bool:
    present = len(values) - values.null_count
    if present == 0:
        return True  # all null: a dictionary of nothing, and the pages are runs of nulls anyway
    distinct: int = pc.count_distinct(values).as_py()
    if distinct > MAX_DISTINCT_FRACTION * present:
        return False
    return distinct * _value_bytes(values, present) <= DICTIONARY_PAGE_LIMIT


def _value_bytes(values: pa.ChunkedArray, present: int) -> float:
    """The mean encoded size of a non-null value in a dictionary page (plain encoding)."""
    kind = values.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind):
        total: int = pc.sum(pc.binary_length(values)).as_py() or 0
        return 4 + total / present  # plain BYTE_ARRAY: a 4-byte length, then the bytes
    if pa.types.is_decimal(kind) or pa.types.is_fixed_size_binary(kind):
        return float(kind.byte_width)
    width: int = kind.bit_width
    return max(1, width // 8)
