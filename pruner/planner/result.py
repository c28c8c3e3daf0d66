"""What a prune returns: the splits (one per kept data file, with its byte range, partition values
and row count; `Split.ranges` cuts a large file's split into consecutive byte ranges for engines
that read row groups by range), the explain record of every planner step (files in and out, time,
why a step was skipped or fell back), the report per index (how many files each index of the table
pruned, or why it pruned none: `pruner.planner.why_not`), the notes on where the predicate was
widened before planning, and the requests the prune made to storage (listings, metadata requests,
ranged reads and bytes read). Values only; the same objects travel through the CLI, the Python
API, gRPC and Thrift."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from datetime import date
from decimal import Decimal

from pruner.predicate.values import Value
from pruner.storage_requests import StorageRequests


@dataclass(frozen=True)
class Split:
    """A unit of work for an engine: a byte range of one data file."""

    path: str  # full path or URI of the data file
    partition: str
    partition_values: dict[str, Value | None]  # the path's table columns, typed (None: NULL)
    file_group: str
    start: int
    length: int
    row_count: int
    file_size: int  # bytes of the whole data file (the split may cover part of it)

    def ranges(self, max_bytes: int) -> list[Split]:
        """This split as consecutive byte ranges of at most `max_bytes` each (itself when it is no
        larger, or `max_bytes` is 0), covering the same bytes. A Parquet reader given a range reads
        the row groups whose first data page lies in it, as Hive's and Iceberg's splits are read,
        so the ranges of a file read each of its rows exactly once. Row counts are the file's rows
        shared out by bytes (an estimate per range; the ranges' counts sum to the split's)."""
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, not {max_bytes}")
        if max_bytes == 0 or self.length <= max_bytes:
            return [self]
        end = self.start + self.length
        starts = range(self.start, end, max_bytes)
        rows_before = [self.row_count * (s - self.start) // self.length for s in (*starts, end)]
        return [
            replace(
                self,
                start=s,
                length=min(max_bytes, end - s),
                row_count=rows_before[i + 1] - rows_before[i],
            )
            for i, s in enumerate(starts)
        ]

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "partition": self.partition,
            "partition_values": {k: _json_value(v) for k, v in self.partition_values.items()},
            "file_group": self.file_group,
            "start": self.start,
            "length": self.length,
            "row_count": self.row_count,
            "file_size": self.file_size,
        }


def _json_value(value: Value | None) -> object:
    """A partition value for JSON: decimals as their digits, binaries as hex, dates and timestamps
    in ISO-8601; the rest as they are."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, date):  # a datetime too
        return value.isoformat()
    return value


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
class IndexReport:
    """One index of the table in a prune: how many files it pruned (a file pruned by several
    indexes counts for the first the planner read), or why it pruned none (`why_not`, set exactly
    when `files_pruned` is 0)."""

    index: str
    kind: str  # the index type (`column_stats`, `functional`, ...), or `record_index`
    files_pruned: int
    why_not: str | None = None

    def to_json(self) -> dict[str, object]:
        return asdict(self)


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
    # Every index of the table: files it pruned, or why none (informational, like `explain`).
    index_report: tuple[IndexReport, ...] = ()

    @property
    def files_selected(self) -> int:
        """The data files the splits read (a file cut into byte ranges counts once)."""
        return len({s.path for s in self.splits})

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
            "index_report": [r.to_json() for r in self.index_report],
            "widened": list(self.widened),
            "storage_requests": self.storage.to_json(),
        }
