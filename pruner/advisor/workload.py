"""The workload log: what the sidecar planned, per table, for `lakeprune advise`. Each prune it
answers becomes one `WorkloadEntry` — when, from which engine, the predicate's shapes
(`pruner.advisor.shapes`: columns, expressions, operations; literal values only when the log keeps
them), the files in and kept, the bytes kept, and which indexes pruned files or were consulted —
appended as one JSON line to the table's file in the log's directory. A table's log is bounded:
when its file reaches half of `max_bytes` it becomes the previous file (replacing the one before),
so at most `max_bytes` are kept, the newest entries. Appends and rotations of the processes of one
sidecar (`--workers N`) take a file lock; a log that cannot be written never fails a prune (the
error is logged once per table and process). Reading skips a line torn by a crash, counting it."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pruner.advisor.shapes import Operation, Shape, condition_shapes, domain_shapes, text_shapes
from pruner.index.definitions import IndexDefinition, IndexType
from pruner.planner.result import ExplainStep, PruneResult
from pruner.predicate.text import TEXT_TRUE, TextCondition
from pruner.predicate.tuple_domain import TupleDomain
from pruner.table.table import LakeTable

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 8 * 1024 * 1024
STATE_HOME_VARIABLE = "LAKEPRUNE_STATE_HOME"
_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


def default_directory() -> Path:
    """Where a sidecar keeps its workload log unless told otherwise: `$LAKEPRUNE_STATE_HOME/workload`,
    else `$XDG_STATE_HOME/lakeprune/workload`, else `~/.local/state/lakeprune/workload`."""
    own = os.environ.get(STATE_HOME_VARIABLE)
    if own:
        return Path(own) / "workload"
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "lakeprune" / "workload"


@dataclass(frozen=True)
class WorkloadEntry:
    """One planned prune."""

    at: str  # ISO 8601, UTC
    table: str  # the table's location (URI)
    engine: str  # who asked: trino, python, presto, ... (the client's own name where it sends one)
    snapshot: str | None
    shapes: tuple[Shape, ...]
    files_total: int
    files_kept: int
    bytes_kept: int
    pruned_by: tuple[str, ...] = ()  # indexes whose step removed files
    consulted: tuple[str, ...] = ()  # indexes whose step ran (neither skipped nor fallen back)
    millis: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "table": self.table,
            "engine": self.engine,
            "snapshot": self.snapshot,
            "shapes": [s.to_json() for s in self.shapes],
            "files_total": self.files_total,
            "files_kept": self.files_kept,
            "bytes_kept": self.bytes_kept,
            "pruned_by": list(self.pruned_by),
            "consulted": list(self.consulted),
            "millis": round(self.millis, 3),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WorkloadEntry:
        return cls(
            str(data["at"]),
            str(data["table"]),
            str(data["engine"]),
            None if data.get("snapshot") is None else str(data["snapshot"]),
            tuple(Shape.from_json(s) for s in data["shapes"]),
            int(data["files_total"]),
            int(data["files_kept"]),
            int(data["bytes_kept"]),
            tuple(str(n) for n in data.get("pruned_by", ())),
            tuple(str(n) for n in data.get("consulted", ())),
            float(data.get("millis", 0.0)),
        )


def entry_of(
    table: LakeTable, engine: str, shapes: Sequence[Shape], result: PruneResult, millis: float
) -> WorkloadEntry:
    """The log entry of a finished prune of `table`."""
    kept_sizes = {s.path: s.file_size for s in result.splits}
    pruned_by, consulted = index_use(table.definitions, result.explain, shapes)
    return WorkloadEntry(
        datetime.now(UTC).isoformat(timespec="milliseconds"),
        table.storage.uri,
        engine,
        result.snapshot,
        tuple(sorted(set(shapes))),
        result.files_total,
        len(kept_sizes),
        sum(kept_sizes.values()),
        pruned_by,
        consulted,
        millis,
    )


# The index type each planner step reads (`Step.index`); the record index is built in.
_STEP_TYPES = {
    "column_stats": IndexType.COLUMN_STATS,
    "partition_stats": IndexType.PARTITION_STATS,
    "bloom_filters": IndexType.BLOOM_FILTERS,
    "secondary_index": IndexType.SECONDARY_INDEX,
    "functional_index": IndexType.FUNCTIONAL,
    "text": IndexType.TEXT,
}


def index_use(
    definitions: Iterable[IndexDefinition], explain: Iterable[ExplainStep], shapes: Sequence[Shape]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The indexes that pruned files in a prune, and those its plan ran: per step that ran, the
    definitions of the step's type that the predicate constrains (an index over an expression by
    its virtual column, a text index by a text shape of its subject, any other by its columns);
    the built-in record index by its name."""
    text_targets = {s.target for s in shapes if s.operation is Operation.TEXT}
    pruned: list[str] = []
    ran: list[str] = []
    for step in explain:
        narrowed = step.files_out < step.files_in
        # `skipped` also carries the notes of a step that ran (a part skipped, a LIKE too short)
        if step.index is None or step.fallback is not None or (step.skipped is not None and not narrowed):
            continue
        if step.index == "record_index":
            names = ["record_index"]
        else:
            index_type = _STEP_TYPES.get(step.index)
            names = [
                d.name
                for d in definitions
                if d.index_type is index_type and _constrained(d, step.columns, text_targets)
            ]
        ran.extend(names)
        if narrowed:
            pruned.extend(names)
    return tuple(dict.fromkeys(pruned)), tuple(dict.fromkeys(ran))


def _constrained(definition: IndexDefinition, columns: Sequence[str], text_targets: set[str]) -> bool:
    if definition.index_type is IndexType.TEXT:
        subject = definition.expression or (definition.columns[0] if definition.columns else "")
        return subject in text_targets
    if definition.expression is not None:
        return definition.name in columns
    return bool(set(definition.columns) & set(columns))


@dataclass
class WorkloadLog:
    """The per-table logs in `directory`, each at most `max_bytes`."""

    directory: Path
    max_bytes: int = DEFAULT_MAX_BYTES
    keep_literals: bool = False
    _failed: set[str] = field(default_factory=set, repr=False)

    def files(self, table: str) -> tuple[Path, Path]:
        """The table's current and previous log files."""
        slug = _SLUG.sub("_", table.rstrip("/").rsplit("/", 1)[-1])[:40] or "table"
        name = f"{slug}-{hashlib.sha256(table.encode()).hexdigest()[:16]}"
        return self.directory / f"{name}.jsonl", self.directory / f"{name}.previous.jsonl"

    def record(self, entry: WorkloadEntry) -> None:
        """Append `entry` to its table's log; a failure is logged (once per table), never raised."""
        line = (json.dumps(entry.to_json(), separators=(",", ":")) + "\n").encode()
        current, previous = self.files(entry.table)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with self._locked(current):
                with contextlib.suppress(FileNotFoundError):
                    if current.stat().st_size + len(line) > self.max_bytes // 2:
                        os.replace(current, previous)
                with open(current, "ab") as out:
                    out.write(line)
        except OSError as exc:
            if entry.table not in self._failed:
                self._failed.add(entry.table)
                log.warning("workload log for %s not written to %s: %s", entry.table, self.directory, exc)

    def record_prune(
        self,
        table: LakeTable,
        engine: str,
        domain: TupleDomain,
        result: PruneResult,
        text: TextCondition = TEXT_TRUE,
        unindexed: Sequence[str] = (),
    ) -> None:
        """Log a finished prune of `table` for `domain` (and the text condition, and the
        conditions over computed values no index holds, `shapes.unindexed_conditions`). Whatever
        goes wrong here is logged (once per table), never raised: the log never fails a prune."""
        keep = self.keep_literals
        try:
            expressions = {v.name: v.expression.key() for v in table.virtual_columns}
            types = {c.name: c.type for c in table.config.schema.columns}
            shapes = [
                *domain_shapes(domain, expressions, keep),
                *text_shapes(text, keep),
                *condition_shapes(unindexed, types, keep),
            ]
            millis = sum(step.millis for step in result.explain)
            entry = entry_of(table, engine, shapes, result, millis)
        except Exception:
            if table.storage.uri not in self._failed:
                self._failed.add(table.storage.uri)
                log.exception("workload log for %s: the prune's entry could not be made", table.storage.uri)
            return
        self.record(entry)

    def entries(self, table: str) -> tuple[list[WorkloadEntry], int]:
        """The table's logged prunes, oldest first, and how many lines could not be read."""
        entries: list[WorkloadEntry] = []
        unreadable = 0
        current, previous = self.files(table)
        for path in (previous, current):
            try:
                lines = path.read_bytes().splitlines()
            except FileNotFoundError:
                continue
            for line in lines:
                try:
                    entries.append(WorkloadEntry.from_json(json.loads(line)))
                except (ValueError, KeyError, TypeError):
                    unreadable += 1
        return [e for e in entries if e.table == table], unreadable

    @contextlib.contextmanager
    def _locked(self, current: Path) -> Iterator[None]:
        with open(current.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
