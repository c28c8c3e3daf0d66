"""Step 7: bloom filters. EQUAL / IN (without NULL) on a column with bloom filters: the values are
hashed as one Arrow array (`bloom.hash_values`) and the filters of the partitions in play are read
once; then each batch of files is probed with the hashes, a chunk of values at a time, and a file
is kept as soon as it may hold one. Before any filter is read, the cost guard
(`PruneLimits.lookup_skipped`) skips a column whose many values the files in play are expected to
hold anyway (e.g. a join's dynamic filter on a one-file table). At most
`PruneLimits.bloom_probe_budget` (filter, value) probes are spent per column, over the batches in
plan order; files still unchecked then are kept, which the step reports as a partial fallback. The
prune's deadline is checked between chunks. A missing or malformed filter keeps its file."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from pruner.index import bloom
from pruner.index.definitions import IndexType
from pruner.metadata.files_index import DataFile
from pruner.numeric import nearest_float32
from pruner.planner.steps.base import InPlay, Skipped, StepContext, StepOutcome, Verdict
from pruner.predicate.domain import Domain
from pruner.predicate.values import Value
from pruner.types import ColumnType, TypeKind

log = logging.getLogger(__name__)


class BloomFilters:
    name: ClassVar[str] = "bloom_filters"
    index: ClassVar[str | None] = "bloom_filters"

    def plan(self, context: StepContext, in_play: InPlay) -> StepOutcome:
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
            and not predicate.domain(c).is_nan_allowed()
        ]
        if not columns:
            return Skipped("no EQUAL / IN (without NULL or NaN) on a column with bloom filters")
        limits = context.limits
        reasons: list[str] = []
        probed: list[str] = []
        for column in columns:
            count = predicate.domain(column).values.range_count()
            reason = limits.lookup_skipped(column, count, in_play.count)
            if reason is not None:
                reasons.append(reason)
            elif not float_keys_unsafe(context.schema.column(column).type, predicate.domain(column)):
                probed.append(column)
        if not probed:
            return Skipped("; ".join(reasons)) if reasons else Verdict(Probing(context, ()))
        rows = context.rows_for(definition, in_play)
        probes = tuple(column_probe(column, context.keys(column), rows) for column in probed)
        return Verdict(Probing(context, probes), skipped=tuple(reasons))


def column_probe(column: str, keys: pa.Array, rows: pa.Table) -> ColumnProbe:
    """The probe of `keys` against the filters of `column` among an index's `rows` (schema
    `bloom.FILTER_ROWS_SCHEMA`)."""
    subset = rows.filter(pc.equal(rows["column"], column))
    by_file = dict(
        zip(
            zip(subset["partition"].to_pylist(), subset["file_name"].to_pylist(), strict=True),
            subset["filter"].to_pylist(),
            strict=True,
        )
    )
    return ColumnProbe(column, len(keys), bloom.hash_values(keys), by_file)


def float_keys_unsafe(column_type: ColumnType, domain: Domain) -> bool:
    """Whether a filter cannot decide a float column's values: engines may round a 64-bit literal
    to 32 bits."""
    return column_type.kind is TypeKind.FLOAT and not all(
        _is_float32(v) for v in domain.values.discrete_values()
    )


@dataclass
class ColumnProbe:
    """One column's probe: its hashes, the filters read for it and what the probes have cost."""

    column: str
    values: int
    hashes: bloom.U64Array
    by_file: dict[tuple[str, str], bytes | None]
    spent: int = 0
    probed: int = 0  # files given to the probe
    unchecked: int = 0  # of them, kept unchecked when the budget ran out


@dataclass(frozen=True)
class Probing:
    """The `FileFilter` of the step: each batch's files are probed column by column."""

    context: StepContext
    probes: tuple[ColumnProbe, ...]

    def keep(self, files: list[DataFile]) -> list[DataFile]:
        budget = self.context.limits.bloom_probe_budget
        for probe in self.probes:
            if not files:
                break
            filters = [_valid_filter(probe.by_file.get((f.partition, f.file_name))) for f in files]
            found = bloom.probe_any(filters, probe.hashes, budget - probe.spent, self.context.check_deadline)
            probe.spent += found.spent
            probe.probed += len(filters)
            probe.unchecked += found.unchecked
            files = [f for f, k in zip(files, found.answers, strict=True) if k]
        return files

    def unchecked(self) -> tuple[str, ...]:
        budget = self.context.limits.bloom_probe_budget
        return tuple(
            f"{p.unchecked} of {p.probed} files kept unchecked on {p.column}: {p.values:,} values"
            f" exceed the probe budget of {budget:,} (filter, value) pairs"
            for p in self.probes
            if p.unchecked
        )

    def notes(self) -> tuple[str, ...]:
        return ()

    def removed(self) -> Mapping[str, int]:
        return {}


def _is_float32(value: Value) -> bool:
    return isinstance(value, float) and nearest_float32(value) == value


def _valid_filter(data: bytes | None) -> bytes | None:
    """A filter with a malformed size is unusable: treat it as missing (keep the file)."""
    if data is None or len(data) < bloom.BLOCK_BYTES or len(data) % bloom.BLOCK_BYTES:
        if data is not None:
            log.warning("ignoring a malformed bloom filter of %d bytes", len(data))
        return None
    return data
