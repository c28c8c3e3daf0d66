"""Step 7: bloom filters. EQUAL / IN (without NULL) on a column with bloom filters: the values are
hashed as one Arrow array (`bloom.hash_values`), every candidate file's filter is probed with the
hashes, a chunk of values at a time, and a file is kept as soon as it may hold one. Before any
filter is read, the cost guard (`PruneLimits.lookup_skipped`) skips a column whose many values the
files in play are expected to hold anyway (e.g. a join's dynamic filter on a one-file table). At
most `PruneLimits.bloom_probe_budget` (filter, value) probes are spent per column; files still
unchecked then are kept, which the outcome reports as a partial fallback. The prune's deadline is
checked between chunks. A missing or malformed filter keeps its file."""

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
        limits = context.limits
        reasons: list[str] = []
        probed: list[str] = []
        for column in columns:
            reason = limits.lookup_skipped(column, len(predicate.domain(column).values.ranges), len(files))
            if reason is not None:
                reasons.append(reason)
            elif context.schema.column(column).type.kind is not TypeKind.FLOAT or all(
                _is_float32(v) for v in predicate.domain(column).values.discrete_values()
            ):  # engines may round a 64-bit literal to 32 bits: a filter cannot decide
                probed.append(column)
        if not probed:
            return Skipped("; ".join(reasons)) if reasons else Kept(files)
        rows = context.rows_for(definition, files)
        survivors = files
        unchecked_notes: list[str] = []
        for column in probed:
            keys = context.keys(column)
            subset = rows.filter(pc.equal(rows["column"], column))
            by_file = dict(
                zip(
                    zip(subset["partition"].to_pylist(), subset["file_name"].to_pylist(), strict=True),
                    subset["filter"].to_pylist(),
                    strict=True,
                )
            )
            filters = [_valid_filter(by_file.get((f.partition, f.file_name))) for f in survivors]
            keep, unchecked = bloom.probe_any(
                filters, bloom.hash_values(keys), limits.bloom_probe_budget, context.check_deadline
            )
            if unchecked:
                unchecked_notes.append(
                    f"{unchecked} of {len(filters)} files kept unchecked on {column}: {len(keys):,} values"
                    f" exceed the probe budget of {limits.bloom_probe_budget:,} (filter, value) pairs"
                )
            survivors = [f for f, k in zip(survivors, keep, strict=True) if k]
        return Kept(survivors, tuple(unchecked_notes), tuple(reasons))


def _is_float32(value: Value) -> bool:
    return isinstance(value, float) and nearest_float32(value) == value


def _valid_filter(data: bytes | None) -> bytes | None:
    """A filter with a malformed size is unusable: treat it as missing (keep the file)."""
    if data is None or len(data) < bloom.BLOCK_BYTES or len(data) % bloom.BLOCK_BYTES:
        if data is not None:
            log.warning("ignoring a malformed bloom filter of %d bytes", len(data))
        return None
    return data
