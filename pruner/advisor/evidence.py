"""What a sample of a table's data files says about a column, an expression or a text, for the
advisor's estimates: how many files a value is in (which a value-keyed index — secondary index,
value list, bloom filter — would keep for an equality), how many files' [min, max] hold a value
(which column stats would keep), how many files have a NULL, and the sizes an index and its build
would have (for a text, the spread of its words). A sample of `sample_files` files, evenly spread
over the snapshot's file list, is read for the target's columns only. Spread: in the sample, a
value is in `m` files on average (the sum of the files' distinct counts over the sample's distinct
count); a value in a fraction `x` of all files is in `S·x / (1 - (1-x)^S)` of `S` sampled files on
average, given it is in one, which is solved for `x` (1/files when every value sits in one file, 1
when every file has every value)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pruner.errors import TableCorruptError
from pruner.functions import parse_expression
from pruner.index.tokenizers import Tokenizer, TokenizerName
from pruner.metadata.files_index import DataFile
from pruner.table.data_files import read_opened_data_file
from pruner.table.table import LakeTable

DEFAULT_SAMPLE_FILES = 16
_RANGE_POINTS = 512  # values at which the sampled files' [min, max] are tried
# A text's terms for the spread of an infix fragment: its words. The log has no fragments' text, and
# what a user searches a text for is a word of it, not any run of three characters (trigrams of
# common words are in every file, as are short runs of ids).
_WORDS = Tokenizer(TokenizerName.WORDS)


@dataclass(frozen=True)
class Evidence:
    """What the sample says about one target (fractions are of all files)."""

    files_sampled: int
    value_spread: float  # the fraction of files a value is in
    range_overlap: float  # the fraction of files whose [min, max] holds a value
    null_files: float  # the fraction of files with a NULL
    distinct_per_file: float
    value_bytes: float  # bytes of a value (its text, or its fixed width)
    rows_per_file: float
    read_bytes_per_file: float  # compressed bytes of the target's source columns in a data file


def sample(files: Sequence[DataFile], count: int) -> list[DataFile]:
    """Up to `count` of `files`, evenly spread over the list (the files index's order)."""
    if len(files) <= count:
        return list(files)
    step = len(files) / count
    return [files[int(i * step)] for i in range(count)]


def spread(mean_files_per_value: float, sampled: int) -> float:
    """The fraction `x` of all files a value is in, given that it is in `mean_files_per_value` of
    `sampled` files on average where it is in one (the module docstring)."""
    if sampled <= 1 or mean_files_per_value <= 1.0:
        return 0.0
    if mean_files_per_value >= sampled:
        return 1.0
    low, high = 0.0, 1.0
    for _ in range(60):
        x = (low + high) / 2
        if sampled * x / (1 - (1 - x) ** sampled) < mean_files_per_value:
            low = x
        else:
            high = x
    return (low + high) / 2


def gather(
    table: LakeTable, files: Sequence[DataFile], target: str, expression: bool, text: bool
) -> Evidence:
    """The evidence of `files` (a sample) about `target`: a column, or an expression's canonical
    text (`expression`); with `text`, about its text's words (`_WORDS`)."""
    schema = table.config.schema
    types = {c.name: c.type for c in schema.columns}
    compiled = parse_expression(target, types) if expression else None
    columns = sorted(compiled.columns) if compiled is not None else [target]
    uniques: list[pa.Array] = []
    terms: list[np.ndarray] = []
    bounds: list[tuple[object, object]] = []
    nulls = rows = read_bytes = 0
    for data_file in files:
        try:
            parquet = pq.ParquetFile(table.storage.open_input_file(data_file.path))
            rows_of_file = read_opened_data_file(parquet, data_file.path, schema, columns)
        except (OSError, pa.ArrowInvalid) as exc:
            raise TableCorruptError(
                f"cannot read data file {data_file.path} of the advisor's sample: {exc}"
            ) from exc
        values = compiled.arrow(rows_of_file) if compiled is not None else rows_of_file.column(target)
        values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
        rows += len(values)
        nulls += values.null_count > 0
        read_bytes += _column_bytes(parquet.metadata, columns)
        if text:
            terms.append(_WORDS.terms(pc.cast(values, pa.large_string())))
            continue
        distinct = pc.unique(values.drop_null())
        uniques.append(distinct)
        if len(distinct):
            low_high = pc.min_max(distinct)
            bounds.append((low_high["min"].as_py(), low_high["max"].as_py()))
    sampled = len(files)
    if text:
        per_file = [len(t) for t in terms]
        union = np.unique(np.concatenate(terms)) if terms else np.empty(0, np.uint64)
        mean = sum(per_file) / len(union) if len(union) else 1.0
        return Evidence(
            sampled,
            spread(mean, sampled),
            1.0,
            nulls / max(sampled, 1),
            sum(per_file) / max(sampled, 1),
            8.0,
            rows / max(sampled, 1),
            read_bytes / max(sampled, 1),
        )
    everything = pa.concat_arrays([u.cast(uniques[0].type) for u in uniques]) if uniques else pa.array([])
    counts = pc.value_counts(everything) if len(everything) else None
    distinct_total = len(counts) if counts is not None else 0
    mean = len(everything) / distinct_total if distinct_total else 1.0
    return Evidence(
        sampled,
        spread(mean, sampled),
        _range_overlap(counts, bounds),
        nulls / max(sampled, 1),
        len(everything) / max(sampled, 1),
        _value_bytes(everything),
        rows / max(sampled, 1),
        read_bytes / max(sampled, 1),
    )


def _range_overlap(counts: pa.StructArray | None, bounds: list[tuple[object, object]]) -> float:
    """The mean, over up to `_RANGE_POINTS` of the sample's distinct values spread over their
    order, of the fraction of sampled files whose [min, max] holds the value."""
    if counts is None or not bounds:
        return 0.0
    ordered = pc.sort_indices(counts.field("values"))
    values = pc.take(counts.field("values"), ordered)
    step = max(1, len(values) // _RANGE_POINTS)
    points = values.to_pylist()[::step]
    held = [sum(1 for low, high in bounds if low <= v <= high) for v in points]
    return sum(held) / (len(points) * len(bounds))


def _value_bytes(values: pa.Array) -> float:
    if not len(values):
        return 0.0
    if (
        pa.types.is_string(values.type)
        or pa.types.is_large_string(values.type)
        or pa.types.is_binary(values.type)
    ):
        return float(pc.mean(pc.binary_length(values)).as_py() or 0.0)
    width = values.type.bit_width if hasattr(values.type, "bit_width") else 64
    return width / 8


def _column_bytes(metadata: pq.FileMetaData, columns: Sequence[str]) -> int:
    """The compressed bytes of `columns` in a data file (0 for a column only in its path)."""
    wanted = set(columns)
    total = 0
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for index in range(row_group.num_columns):
            chunk = row_group.column(index)
            if chunk.path_in_schema in wanted:
                total += chunk.total_compressed_size
    return total
