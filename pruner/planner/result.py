"""What a prune returns: the splits (one per kept data file, with its byte range, partition values
and row count), the explain record of every planner step (files in and out, time, why a step was
skipped or fell back), the notes on where the predicate was widened before planning, and the
requests the prune made to storage (listings, metadata requests, ranged reads and bytes read).
Values only; the same objects travel through the CLI, the Python API, gRPC and Thrift."""

from __future__ import annotations

from dataclasses import dataclass, field

from pruner.storage_requests import StorageRequests


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
    file_size: int  # bytes of the whole data file (the split may cover part of it)

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "partition": self.partition,
            "partition_values": self.partition_values,
            "file_group": self.file_group,
            "start": self.start,
            "length": self.length,
            "row_count": self.row_count,
            "file_size": self.file_size,
        }


@dataclass(frozen=True)
class ExplainStep:
    step: str
    index: str | None
    columns: tuple[str, ...]
    files_in: int
    files_out: int
    millis: float
    # Why the step, or a part of it (one index, one column), did not run: nothing to do, an index
    # still building, a lookup the cost guard found could not pay, ...
    skipped: str | None = None
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
    # Where the predicate was widened before planning (SQL translation, the Thrift constraint's
    # dropped domains, an IN list over the discrete-values limit): the result is still a superset.
    widened: tuple[str, ...] = ()
    # What the prune asked of storage (loading the snapshot and reading index files); all zero
    # GETs when every index bucket it needed was cached. Not part of the answer: results with the
    # same splits compare equal however they were read.
    storage: StorageRequests = field(default_factory=StorageRequests, compare=False)

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
            "widened": list(self.widened),
            "storage_requests": self.storage.to_json(),
        }
