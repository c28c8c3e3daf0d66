"""What a planner step is: an object with a name that, given the snapshot, predicate and limits
(`StepContext`) and what is known of the files still in play before any file is evaluated
(`InPlay`: their partitions and how many they are at most), does its index lookups once and
returns a typed outcome — a `Verdict` (a `FileFilter` that keeps, of any batch of files, those it
cannot rule out, with notes for any part of the step that did not run) or `Skipped` (why it did not
run). The planner then streams the snapshot's files through the verdicts a batch at a time, so a
verdict decides each file by itself, from data its step looked up once. A step removes a file only
with proof from its index; it never decides anything about files its index has no rows for. A step
whose index turns out to be unusable raises one of `INDEX_UNUSABLE`; the planner then keeps every
file and records the fallback. A step that finds the prune's deadline passed between two batches of
its work raises `DeadlinePassedError` (`StepContext.check_deadline`), with the same effect (a filter
that raises it keeps the files of its batch and of every later one). Any other exception is a bug
and propagates."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

import pyarrow as pa

from pruner.errors import IndexUnusableError, TableCorruptError
from pruner.index.definitions import IndexDefinition, IndexState, IndexType
from pruner.metadata.files_index import DataFile
from pruner.planner.keys import discrete_keys
from pruner.planner.limits import DEFAULT_LIMITS, PruneLimits
from pruner.predicate.text import NO_TEXT, TextPredicate
from pruner.predicate.tuple_domain import TupleDomain
from pruner.table.table import LakeTable, Snapshot
from pruner.types import TableSchema

# What "this index cannot be used now" looks like: its data is missing, truncated, garbled or
# unreadable (TableCorruptError, raised by the index partition reader for every such case), or
# its definition cannot be used (IndexUnusableError).
INDEX_UNUSABLE: tuple[type[Exception], ...] = (TableCorruptError, IndexUnusableError)


class DeadlinePassedError(Exception):
    """The prune's deadline passed while a step was running: the step keeps every file it was
    given (raised by `StepContext.check_deadline`, handled by the planner)."""


class FileFilter(Protocol):
    """A step's verdict on files: `keep` returns, of a batch of files in plan order, those that may
    hold matching rows (in their order); once every batch was given, `unchecked` says why some were
    kept without being evaluated (a partial fallback, e.g. a probe budget ran out) and `notes` what
    else the explain should say of what the batches found (e.g. terms every file holds). In a step
    that reads several indexes, `removed` counts the files each of them ruled out so far, by index
    name (a file ruled out by several counts for the first, in the filter's order); it is empty for
    a filter of the step's one index. The counts are for the explain only."""

    def keep(self, files: list[DataFile]) -> list[DataFile]: ...

    def unchecked(self) -> tuple[str, ...]: ...

    def notes(self) -> tuple[str, ...]: ...

    def removed(self) -> Mapping[str, int]: ...


@dataclass(frozen=True)
class Keeping:
    """A `FileFilter` that decides each file by `test` alone."""

    test: Callable[[DataFile], bool]

    def keep(self, files: list[DataFile]) -> list[DataFile]:
        return [f for f in files if self.test(f)]

    def unchecked(self) -> tuple[str, ...]:
        return ()

    def notes(self) -> tuple[str, ...]:
        return ()

    def removed(self) -> Mapping[str, int]:
        return {}


@dataclass(frozen=True)
class AllOf:
    """A `FileFilter` that keeps what each of `filters` keeps, applied in order."""

    filters: tuple[FileFilter, ...]

    def keep(self, files: list[DataFile]) -> list[DataFile]:
        for each in self.filters:
            files = each.keep(files)
        return files

    def unchecked(self) -> tuple[str, ...]:
        return tuple(note for each in self.filters for note in each.unchecked())

    def notes(self) -> tuple[str, ...]:
        return tuple(note for each in self.filters for note in each.notes())

    def removed(self) -> Mapping[str, int]:
        counts: dict[str, int] = {}
        for each in self.filters:
            for index, count in each.removed().items():
                counts[index] = counts.get(index, 0) + count
        return counts


@dataclass
class OfIndex:
    """A `FileFilter` that is `filter`, the part of a step's verdict that one of its several
    indexes (`index`, by name) gives, counting the files it rules out."""

    index: str
    filter: FileFilter
    ruled_out: int = 0

    def keep(self, files: list[DataFile]) -> list[DataFile]:
        kept = self.filter.keep(files)
        self.ruled_out += len(files) - len(kept)
        return kept

    def unchecked(self) -> tuple[str, ...]:
        return self.filter.unchecked()

    def notes(self) -> tuple[str, ...]:
        return self.filter.notes()

    def removed(self) -> Mapping[str, int]:
        return {self.index: self.ruled_out}


@dataclass(frozen=True)
class InPlay:
    """What the lookups know of the files still in play before any file is evaluated: the
    partitions they lie in and how many they are at most (`per_partition` counts the snapshot's
    files in each partition). Steps that decide per partition or per file group narrow it; a
    step that decides per file leaves it as it is, so `count` bounds the files in play from above."""

    partitions: frozenset[str]
    count: int
    per_partition: Mapping[str, int] = field(compare=False, repr=False)

    @classmethod
    def of(cls, files: Iterable[DataFile]) -> InPlay:
        per_partition: dict[str, int] = {}
        for f in files:
            per_partition[f.partition] = per_partition.get(f.partition, 0) + 1
        return cls(frozenset(per_partition), sum(per_partition.values()), per_partition)

    def within(self, partitions: Collection[str], count: int | None = None) -> InPlay:
        """Only the files in `partitions` (and at most `count` of them)."""
        kept = self.partitions.intersection(partitions)
        total = sum(self.per_partition[p] for p in kept)
        return InPlay(kept, total if count is None else min(total, count), self.per_partition)


@dataclass(frozen=True)
class Verdict:
    """The step ran its lookups: `filter` decides the files. `in_play`: what is still in play
    after it as far as the lookups know (None: as before). `skipped` says why a part of the step
    did not run (a column whose lookup could not pay, an index still building)."""

    filter: FileFilter
    in_play: InPlay | None = None
    skipped: tuple[str, ...] = ()
    # In a step that reads several indexes: what `skipped` says of each of them, by index name.
    by_index: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Skipped:
    """The step did not run (nothing to do, no index, index still building); every file is kept.
    `by_index`: in a step that reads several indexes, what `reason` says of each, by index name."""

    reason: str
    by_index: Mapping[str, str] = field(default_factory=dict)


StepOutcome = Verdict | Skipped


@dataclass(frozen=True)
class StepContext:
    """What every step of one prune reads: the snapshot, the bound predicate (its TupleDomain and
    its text condition) and the prune's limits (cost guard thresholds and deadline)."""

    snapshot: Snapshot
    predicate: TupleDomain
    limits: PruneLimits = DEFAULT_LIMITS
    text: TextPredicate = NO_TEXT
    # Each IN list's key array, made on first use (`keys`) and shared by the steps of the prune.
    _keys: dict[str, pa.Array] = field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def table(self) -> LakeTable:
        return self.snapshot.table

    @property
    def schema(self) -> TableSchema:
        return self.snapshot.table.config.schema

    def keys(self, column: str) -> pa.Array:
        """The values of the predicate's discrete domain on `column` as one Arrow array of the
        column's type (`pruner.planner.keys.discrete_keys`)."""
        keys = self._keys.get(column)
        if keys is None:
            values = self.predicate.domain(column).values
            keys = self._keys[column] = discrete_keys(values, self.schema.column(column).type)
        return keys

    def check_deadline(self) -> None:
        """Raise `DeadlinePassedError` if the prune's deadline has passed (called between batches)."""
        if self.limits.deadline_passed():
            raise DeadlinePassedError("the planning deadline passed during this step; files kept")

    def ready(self, index_type: IndexType) -> IndexDefinition | Skipped:
        """The table's ready index of a type that exists at most once, or why there is none."""
        for definition in self.table.definitions:
            if definition.index_type == index_type:
                if definition.state != IndexState.READY:
                    return Skipped(f"index {definition.name} is still building")
                return definition
        return Skipped(f"no {index_type} index")

    def rows_for(self, definition: IndexDefinition, in_play: InPlay) -> pa.Table:
        """The index's rows for the partitions in play (per-file indexes hash on the partition
        path, so this reads only the buckets those partitions fall in)."""
        partitions = pa.array(sorted(in_play.partitions), pa.string())
        return self.snapshot.index_partition(self.table.spec(definition)).lookup(partitions)


class Step(Protocol):
    """One pruning step. `index` names the index it reads in the explain record (None: none)."""

    name: ClassVar[str]
    index: ClassVar[str | None]

    def plan(self, context: StepContext, in_play: InPlay) -> StepOutcome: ...
