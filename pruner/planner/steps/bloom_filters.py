"""Step 7: bloom filters. EQUAL / IN (without NULL) on a column with bloom filters: every candidate
file's filter is probed with the values' hashes, a chunk of values at a time, and a file is kept as
soon as it may hold one. At most `BLOOM_PROBE_BUDGET` (filter, value) probes are spent per column;
files still unchecked then are kept, which the outcome reports as a partial fallback. A missing or
malformed filter keeps its file."""

from __future__ import annotations

import logging
from typing import ClassVar

import pyarrow.compute as pc

from pruner.index import bloom
from pruner.index.definitions import IndexType
from pruner.metadata.files_index import DataFile
from pruner.numeric import nearest_float32
from pruner.planner.steps.base import Kept, Skipped, StepContext, StepOutcome
from pruner.predicate.values import Value
from pruner.types import TypeKind

log = logging.getLogger(__name__)
# Most (bloom filter, value) probes one prune spends per column (~1.5 s on the 2-core development
# machine); files still undecided then are kept, and the explain records the fallback.
BLOOM_PROBE_BUDGET = 20_000_000


class BloomFilters:
    name: ClassVar[str] = "bloom_filters"
    index: ClassVar[str | None] = "bloom_filters"

    def run(self, context: StepContext, files: list[DataFile]) -> StepOutcome:
        definition = context.ready(IndexType.BLOOM_FILTERS)
        if isinstance(definition, Skipped):
            return definition
        predicate = context.predicate
        columns = [
            c
            for c in predicate.columns
            if c in definition.columns
            and predicate.domain(c).values.is_discrete()
            and not predicate.domain(c).is_null_allowed()
        ]
        if not columns:
            return Skipped("no EQUAL / IN (without NULL) on a column with bloom filters")
        rows = context.rows_for(definition, files)
        survivors = files
        unchecked_notes: list[str] = []
        for column in columns:
            subset = rows.filter(pc.equal(rows["column"], column))
            by_file = dict(
                zip(
                    zip(subset["partition"].to_pylist(), subset["file_name"].to_pylist(), strict=True),
                    subset["filter"].to_pylist(),
                    strict=True,
                )
            )
            filters = [_valid_filter(by_file.get((f.partition, f.file_name))) for f in survivors]
            values = list(predicate.domain(column).values.discrete_values())
            column_type = context.schema.column(column).type
            if column_type.kind is TypeKind.FLOAT and not all(_is_float32(v) for v in values):
                continue  # engines may round a 64-bit literal to 32 bits: a filter cannot decide
            hashes = bloom.hash_python_values(values, column_type)
            keep, unchecked = bloom.probe_any(filters, hashes, BLOOM_PROBE_BUDGET)
            if unchecked:
                unchecked_notes.append(
                    f"{unchecked} of {len(filters)} files kept unchecked on {column}: {len(values):,} values"
                    f" exceed the probe budget of {BLOOM_PROBE_BUDGET:,} (filter, value) pairs"
                )
            survivors = [f for f, k in zip(survivors, keep, strict=True) if k]
        return Kept(survivors, tuple(unchecked_notes))


def _is_float32(value: Value) -> bool:
    return isinstance(value, float) and nearest_float32(value) == value


def _valid_filter(data: bytes | None) -> bytes | None:
    """A filter with a malformed size is unusable: treat it as missing (keep the file)."""
    if data is None or len(data) < bloom.BLOCK_BYTES or len(data) % bloom.BLOCK_BYTES:
        if data is not None:
            log.warning("ignoring a malformed bloom filter of %d bytes", len(data))
        return None
    return data
