"""What a planner step is: an object with a name that, given the snapshot, predicate and limits
(`StepContext`) and the files still in play, returns a typed outcome — `Kept` (the files it could
not rule out, with a note for any it had to keep unevaluated and for any part of it that did not
run) or `Skipped` (why it did not run). A step removes a file only with proof from its index; it
never decides anything about files its index has no rows for. A step whose index turns out to be
unusable raises one of `INDEX_UNUSABLE`; the planner then keeps every file and records the
fallback. A step that finds the prune's deadline passed between two batches of its work raises
`DeadlinePassedError` (`StepContext.check_deadline`), with the same effect. Any other exception is a
bug and propagates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Protocol

import pyarrow as pa

from pruner.errors import IndexUnusableError, TableCorruptError
from pruner.index.definitions import IndexDefinition, IndexState, IndexType
from pruner.metadata.files_index import DataFile
from pruner.planner.keys import key_array
from pruner.planner.limits import DEFAULT_LIMITS, PruneLimits
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


@dataclass(frozen=True)
class Kept:
    """The step ran: `files` may hold matching rows. `unchecked` says why some of them were kept
    without being evaluated (a partial fallback, e.g. a probe budget ran out); `skipped` why a
    part of the step did not run (a column whose lookup could not pay, an index still building)."""

    files: list[DataFile]
    unchecked: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()


@dataclass(frozen=True)
class Skipped:
    """The step did not run (nothing to do, no index, index still building); every file is kept."""

    reason: str


StepOutcome = Kept | Skipped


@dataclass(frozen=True)
class StepContext:
    """What every step of one prune reads: the snapshot, the bound predicate and the prune's limits
    (cost guard thresholds and deadline)."""

    snapshot: Snapshot
    predicate: TupleDomain
    limits: PruneLimits = DEFAULT_LIMITS
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
        column's type (`pruner.planner.keys.key_array`)."""
        keys = self._keys.get(column)
        if keys is None:
            values = self.predicate.domain(column).values.discrete_values()
            keys = self._keys[column] = key_array(values, self.schema.column(column).type)
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

    def rows_for(self, definition: IndexDefinition, files: list[DataFile]) -> pa.Table:
        """The index's rows for the partitions of `files` (per-file indexes hash on the partition
        path, so this reads only the buckets those partitions fall in)."""
        partitions = pa.array(sorted({f.partition for f in files}), pa.string())
        return self.snapshot.index_partition(self.table.spec(definition)).lookup(partitions)


class Step(Protocol):
    """One pruning step. `index` names the index it reads in the explain record (None: none)."""

    name: ClassVar[str]
    index: ClassVar[str | None]

    def run(self, context: StepContext, files: list[DataFile]) -> StepOutcome: ...
