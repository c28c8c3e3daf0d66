"""Planning a prune: which files of a snapshot may hold rows matching a TupleDomain.

Steps, cheapest first; each removes only files it has proof for, and the result is what survives
all of them (evidence combines: any one index proving "cannot match" prunes a file):
1. partition values (from each file's own partition path: after partition evolution, paths of
   different layouts carry different columns, and a column a path lacks decides nothing),
2. partition stats,
3. the record index, for EQUAL / IN on the record key,
4. secondary indexes (RFC-77), for EQUAL / IN on an indexed column: values -> record keys ->
   record index -> file groups; ranges (and LIKE 'prefix%') scan the sorted index when footer
   statistics say they are selective, else the step says so and leaves them to column stats,
5. functional indexes (RFC-63): a domain on the index's virtual column (named after the index; the
   SQL translator also maps the indexed expression to it), and a range on the source column
   projected onto the function's values when the function is monotonic (and only then),
6. column stats,
7. bloom filters, for EQUAL / IN.
An index that is still building, missing, unreadable or corrupt is skipped ("keep"), and the
fallback is logged, counted and written into the explain record. Files without index rows (written
before an index existed and not yet built) are always kept."""

from __future__ import annotations

import functools
import itertools
import logging
import operator
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from pruner.errors import LakepruneError
from pruner.format.keys import encode_record_keys, parse_partition_path
from pruner.functions import Order
from pruner.index import bloom
from pruner.index.definitions import IndexDefinition, IndexState, IndexType
from pruner.index.functional import project, virtual_columns
from pruner.metadata.files_index import DataFile
from pruner.planner.stats_eval import might_match
from pruner.predicate.domain import Domain
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import Value
from pruner.table.table import Snapshot
from pruner.types import ColumnType

log = logging.getLogger(__name__)
MAX_KEY_LOOKUPS = 100_000
# A range on a secondary-indexed column uses the index when footers say it reads at most this
# share of the index's row groups; otherwise column stats (which run next) are cheaper.
SELECTIVE_FRACTION = 0.25
# Most (bloom filter, value) probes one prune spends per column (~1.5 s on the 2-core development
# machine); files still undecided then are kept, and the explain records the fallback.
BLOOM_PROBE_BUDGET = 20_000_000


@dataclass(frozen=True)
class Split:
    """A unit of work for an engine: a byte range of one data file."""

    path: str  # full path or URI of the data file
    partition: str
    partition_values: dict[str, str | None]
    file_group: str
    start: int
    length: int
    row_count: int

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "partition": self.partition,
            "partition_values": self.partition_values,
            "file_group": self.file_group,
            "start": self.start,
            "length": self.length,
            "row_count": self.row_count,
        }


@dataclass(frozen=True)
class ExplainStep:
    step: str
    index: str | None
    columns: tuple[str, ...]
    files_in: int
    files_out: int
    millis: float
    skipped: str | None = None  # why the step did not run (nothing to do, index building, ...)
    fallback: str | None = None  # why it ran but had to keep files it could not evaluate

    def to_json(self) -> dict[str, object]:
        return {
            "step": self.step,
            "index": self.index,
            "columns": list(self.columns),
            "files_in": self.files_in,
            "files_out": self.files_out,
            "millis": round(self.millis, 3),
            "skipped": self.skipped,
            "fallback": self.fallback,
        }


@dataclass(frozen=True)
class PruneResult:
    snapshot: str | None
    predicate: str
    files_total: int
    splits: list[Split]
    explain: list[ExplainStep] = field(default_factory=list)

    @property
    def files_selected(self) -> int:
        return len(self.splits)

    @property
    def fallbacks(self) -> int:
        return sum(1 for s in self.explain if s.fallback)

    def to_json(self) -> dict[str, object]:
        return {
            "snapshot": self.snapshot,
            "predicate": self.predicate,
            "files_total": self.files_total,
            "files_selected": self.files_selected,
            "fallbacks": self.fallbacks,
            "splits": [s.to_json() for s in self.splits],
            "explain": [s.to_json() for s in self.explain],
        }


def _ready(snapshot: Snapshot, index_type: IndexType) -> IndexDefinition | str:
    for definition in snapshot.table.definitions:
        if definition.index_type == index_type:
            if definition.state != IndexState.READY:
                return f"index {definition.name} is still building"
            return definition
    return f"no {index_type} index"


def _typed_partition_value(text: str | None, column_type: ColumnType) -> Value | None:
    if text is None:
        return None
    if column_type.is_integer:
        return int(text)
    if column_type.name == "date":
        return date.fromisoformat(text)
    if column_type.name == "boolean":
        return text.lower() == "true"
    return text


class Planner:
    """Plans prunes for one snapshot; construct per request."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.table = snapshot.table
        self.schema = snapshot.table.config.schema
        # Steps that ran but kept some files unevaluated say why here (keyed by step name).
        self._partial_fallbacks: dict[str, list[str]] = {}

    def prune(self, predicate: TupleDomain) -> PruneResult:
        files = self.snapshot.files()
        explain: list[ExplainStep] = []
        if predicate.is_none():
            explain.append(ExplainStep("predicate", None, (), len(files), 0, 0.0))
            return PruneResult(self.snapshot.instant, str(predicate), len(files), [], explain)
        steps: list[tuple[str, Callable[[list[DataFile], TupleDomain], list[DataFile] | str]]] = [
            ("partition_values", self._partition_values),
            ("partition_stats", self._partition_stats),
            ("record_index", self._record_index),
            ("secondary_index", self._secondary_index),
            ("functional_index", self._functional_index),
            ("column_stats", self._column_stats),
            ("bloom_filters", self._bloom_filters),
        ]
        candidates = files
        for name, step in steps:
            start = time.perf_counter()
            skipped = fallback = None
            try:
                outcome = step(candidates, predicate)
            except (LakepruneError, OSError, pa.ArrowException, ValueError) as exc:
                fallback, outcome = f"{type(exc).__name__}: {exc}", candidates
                log.warning(
                    "prune %s: step %s kept all %d files: %s",
                    self.table.storage.uri,
                    name,
                    len(candidates),
                    fallback,
                )
            if isinstance(outcome, str):
                skipped, outcome = outcome, candidates
            partial = self._partial_fallbacks.pop(name, [])
            if partial and not fallback:
                fallback = "; ".join(partial)
                log.warning("prune %s: step %s: %s", self.table.storage.uri, name, fallback)
            columns = tuple(c for c in predicate.columns)
            explain.append(
                ExplainStep(
                    name,
                    name if name != "partition_values" else None,
                    columns,
                    len(candidates),
                    len(outcome),
                    (time.perf_counter() - start) * 1000,
                    skipped,
                    fallback,
                )
            )
            candidates = outcome
        return PruneResult(
            self.snapshot.instant, str(predicate), len(files), [self._split(f) for f in candidates], explain
        )

    def _split(self, f: DataFile) -> Split:
        return Split(
            self.table.storage.full_uri(f.path),
            f.partition,
            parse_partition_path(f.partition),
            f.file_group,
            0,
            f.size,
            f.rows,
        )

    # Steps. Each returns the surviving files, or a string saying why it did not run. ---------------
    def _partition_values(self, files: list[DataFile], predicate: TupleDomain) -> list[DataFile] | str:
        """Files whose partition path holds a value outside the predicate. A path is judged only on
        the columns it carries: after partition evolution a file's path may lack a partition
        column (its value is unknown there, so the file is kept) or carry an earlier one."""
        columns = [c for c in self.table.config.all_partition_fields if c in predicate.columns]
        if not columns:
            return "no predicate on a partition column"
        verdicts: dict[str, bool] = {}
        for partition in {f.partition for f in files}:
            raw = parse_partition_path(partition)
            verdicts[partition] = all(
                predicate.domain(c).contains_value(_typed_partition_value(raw[c], self.schema.column(c).type))
                for c in columns
                if c in raw
            )
        return [f for f in files if verdicts[f.partition]]

    def _partition_stats(self, files: list[DataFile], predicate: TupleDomain) -> list[DataFile] | str:
        return self._stats_step(files, predicate, IndexType.PARTITION_STATS, ("partition",))

    def _column_stats(self, files: list[DataFile], predicate: TupleDomain) -> list[DataFile] | str:
        return self._stats_step(files, predicate, IndexType.COLUMN_STATS, ("partition", "file_name"))

    def _stats_step(
        self, files: list[DataFile], predicate: TupleDomain, index_type: IndexType, key: tuple[str, ...]
    ) -> list[DataFile] | str:
        """Prune with a min / max index whose rows are identified by `key` (partition, or file)."""
        definition = _ready(self.snapshot, index_type)
        if isinstance(definition, str):
            return definition
        columns = [c for c in predicate.columns if c in definition.columns]
        if not columns:
            return f"no predicate on a column with {index_type}"
        rows = self._rows_for(definition, files)
        excluded = self._excluded(rows, columns, predicate, key)
        return [f for f in files if tuple(getattr(f, k) for k in key) not in excluded]

    def _rows_for(self, definition: IndexDefinition, files: list[DataFile]) -> pa.Table:
        """The index's rows for the partitions of the candidate files (indexes hash on partition)."""
        partitions = pa.array(sorted({f.partition for f in files}), pa.string())
        return self.snapshot.index_partition(self.table.spec(definition)).lookup(partitions)

    def _excluded(
        self, rows: pa.Table, columns: list[str], predicate: TupleDomain, key: tuple[str, ...]
    ) -> set[tuple[str, ...]]:
        """Keys (partition or partition + file) that some column's stats prove cannot match."""
        excluded: set[tuple[str, ...]] = set()
        for column in columns:
            subset = rows.filter(pc.equal(rows["column"], column))
            if subset.num_rows == 0:
                continue
            keep = might_match(predicate.domain(column), self.schema.column(column).type, subset)
            pruned = subset.filter(pa.array(~keep)).select(list(key)).to_pylist()
            excluded.update(tuple(r[k] for k in key) for r in pruned)
        return excluded

    def _functional_index(self, files: list[DataFile], predicate: TupleDomain) -> list[DataFile] | str:
        virtual = virtual_columns(self.schema, self.table.definitions)
        if not virtual:
            return "no functional index"
        survivors, used, reasons = files, 0, []
        for column in virtual:
            domain = predicate.domain(column.name) if column.name in predicate.columns else None
            source = column.function.column
            if source in predicate.columns and column.function.order == Order.MONOTONIC:
                projected = project(column.function, predicate.domain(source))
                domain = projected if domain is None else domain.intersect(projected)
            if domain is None:
                continue
            if column.definition.state != IndexState.READY:
                reasons.append(f"index {column.name} is still building")
                continue
            used += 1
            rows = self._rows_for(column.definition, survivors)
            rows = rows.filter(pc.equal(rows["column"], column.name))
            keep = might_match(domain, column.type, rows)
            key = list(zip(rows["partition"].to_pylist(), rows["file_name"].to_pylist(), strict=True))
            indexed = set(key)
            kept = {k for k, ok in zip(key, keep, strict=True) if ok}
            survivors = [
                f
                for f in survivors
                if (f.partition, f.file_name) not in indexed or (f.partition, f.file_name) in kept
            ]
        if not used:
            return (
                "; ".join(reasons)
                or "no predicate on a functional index, its expression or a monotonic source"
            )
        return survivors

    def _record_index(self, files: list[DataFile], predicate: TupleDomain) -> list[DataFile] | str:
        key_fields = self.table.config.record_key
        domains = [predicate.domain(k) for k in key_fields]
        if not all(
            k in predicate.columns and d.values.is_discrete()
            for k, d in zip(key_fields, domains, strict=True)
        ):
            return "no EQUAL / IN on every record key column"
        value_lists = [d.values.discrete_values() for d in domains]
        combinations = int(np.prod([len(v) for v in value_lists]))
        if combinations > MAX_KEY_LOOKUPS:
            return f"{combinations} key combinations exceed the lookup limit {MAX_KEY_LOOKUPS}"
        tuples = list(itertools.product(*value_lists))
        arrow = pa.table(
            {
                k: pa.array([t[i] for t in tuples], self.schema.column(k).type.to_arrow())
                for i, k in enumerate(key_fields)
            }
        )
        found = self.snapshot.record_index().lookup(encode_record_keys(arrow, key_fields))
        locations = set(zip(found["partition"].to_pylist(), found["file_group"].to_pylist(), strict=True))
        return [f for f in files if (f.partition, f.file_group) in locations]

    def _secondary_index(self, files: list[DataFile], predicate: TupleDomain) -> list[DataFile] | str:
        """Each EQUAL / IN (without NULL: NULLs are not indexed) on a column with a ready secondary
        index keeps only the file groups holding one of the record keys the index lists for it."""
        definitions = [d for d in self.table.definitions if d.index_type == IndexType.SECONDARY_INDEX]
        if not definitions:
            return "no secondary index"
        usable = [d for d in definitions if d.columns[0] in predicate.columns]
        if not usable:
            return "no predicate on a column with a secondary index"
        reasons: list[str] = []
        used = False
        survivors = files
        for definition in usable:
            column = definition.columns[0]
            domain = predicate.domain(column)
            if definition.state != IndexState.READY:
                reasons.append(f"index {definition.name} is still building")
            elif domain.is_null_allowed():
                reasons.append(f"{column}: NULLs are not indexed by {definition.name}")
            elif domain.values.is_all():
                reasons.append(f"{column}: only IS NOT NULL")
            elif len(domain.values.ranges) > MAX_KEY_LOOKUPS:
                reasons.append(f"{column}: more than {MAX_KEY_LOOKUPS} values or ranges")
            else:
                view = self.snapshot.index_partition(self.table.spec(definition))
                arrow_type = self.schema.column(column).type.to_arrow()
                if domain.values.is_discrete():
                    values = pa.array(list(domain.values.discrete_values()), arrow_type)
                    pairs = view.lookup(values)  # one read per bucket for all its values
                else:  # ranges, LIKE 'prefix%': a scan of the sorted buckets, if selective
                    expression = _ranges_expression(domain, arrow_type)
                    fraction = view.estimate_fraction(expression)
                    if fraction > SELECTIVE_FRACTION:
                        reasons.append(
                            f"{column}: the range admits {fraction:.0%} of {definition.name}'s row groups "
                            f"(> {SELECTIVE_FRACTION:.0%}), not selective; left to column stats"
                        )
                        continue
                    pairs = view.scan(expression)
                found = self.snapshot.record_index().lookup(pairs["key"])
                locations = set(
                    zip(found["partition"].to_pylist(), found["file_group"].to_pylist(), strict=True)
                )
                survivors = [f for f in survivors if (f.partition, f.file_group) in locations]
                used = True
        return survivors if used else "; ".join(reasons)

    def _bloom_filters(self, files: list[DataFile], predicate: TupleDomain) -> list[DataFile] | str:
        definition = _ready(self.snapshot, IndexType.BLOOM_FILTERS)
        if isinstance(definition, str):
            return definition
        columns = [
            c
            for c in predicate.columns
            if c in definition.columns
            and predicate.domain(c).values.is_discrete()
            and not predicate.domain(c).is_null_allowed()
        ]
        if not columns:
            return "no EQUAL / IN (without NULL) on a column with bloom filters"
        rows = self._rows_for(definition, files)
        survivors = files
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
            domain: Domain = predicate.domain(column)
            values = list(domain.values.discrete_values())
            column_type = self.schema.column(column).type
            if column_type.name == "float" and not all(_is_float32(v) for v in values):
                continue  # engines may round a 64-bit literal to 32 bits: a filter cannot decide
            hashes = bloom.hash_python_values(values, column_type)
            keep, unchecked = bloom.probe_any(filters, hashes, BLOOM_PROBE_BUDGET)
            if unchecked:
                self._partial_fallbacks.setdefault("bloom_filters", []).append(
                    f"{unchecked} of {len(filters)} files kept unchecked on {column}: {len(values):,} values"
                    f" exceed the probe budget of {BLOOM_PROBE_BUDGET:,} (filter, value) pairs"
                )
            survivors = [f for f, k in zip(survivors, keep, strict=True) if k]
        return survivors


def _ranges_expression(domain: Domain, arrow_type: pa.DataType) -> ds.Expression:
    """The domain's ranges as a dataset filter on `secondary_key` (NULL not included)."""
    key = ds.field("secondary_key")
    alternatives = []
    for item in domain.values.ranges:
        parts = []
        if item.low is not None:
            low = pa.scalar(item.low, arrow_type)
            parts.append(key >= low if item.low_inclusive else key > low)
        if item.high is not None:
            high = pa.scalar(item.high, arrow_type)
            parts.append(key <= high if item.high_inclusive else key < high)
        alternatives.append(functools.reduce(operator.and_, parts) if parts else key.is_valid())
    return functools.reduce(operator.or_, alternatives)


def _is_float32(value: Value) -> bool:
    return isinstance(value, float) and float(np.float32(value)) == value


def _valid_filter(data: bytes | None) -> bytes | None:
    """A filter with a malformed size is unusable: treat it as missing (keep the file)."""
    if data is None or len(data) < bloom.BLOCK_BYTES or len(data) % bloom.BLOCK_BYTES:
        if data is not None:
            log.warning("ignoring a malformed bloom filter of %d bytes", len(data))
        return None
    return data
