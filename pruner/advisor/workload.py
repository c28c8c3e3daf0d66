"""The workload log: what the sidecar planned, per table, for `lakeprune advise`. Each prune it
answers becomes one `WorkloadEntry` — when, from which engine, the predicate's shapes
(`pruner.advisor.shapes`: columns, expressions, operations; literal values only when the log keeps
them), the files in and kept, the bytes kept, which indexes pruned files and why each other one
did not (the prune's report per index, `pruner.planner.why_not`) —
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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pruner.advisor.shapes import Shape, condition_shapes, domain_shapes, text_shapes
from pruner.bounded import shorten
from pruner.planner.result import PruneResult
from pruner.predicate.text import TEXT_TRUE, TextCondition
from pruner.predicate.tuple_domain import TupleDomain
from pruner.table.table import LakeTable

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 8 * 1024 * 1024
MAX_REASON = 160  # characters of an index's reason for pruning nothing kept per entry
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
    # Every other index of the table, and why it pruned nothing (its reason, shortened).
    not_pruned: tuple[tuple[str, str], ...] = ()
    millis: float = 0.0
    fallbacks: int = 0  # steps that had to keep files they could not evaluate (a deadline, bad index data)

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
            "not_pruned": [list(pair) for pair in self.not_pruned],
            "millis": round(self.millis, 3),
            "fallbacks": self.fallbacks,
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
            tuple((str(name), str(why)) for name, why in data.get("not_pruned", ())),
            float(data.get("millis", 0.0)),
            int(data.get("fallbacks", 0)),
        )


def entry_of(
    table: LakeTable, engine: str, shapes: Sequence[Shape], result: PruneResult, millis: float
) -> WorkloadEntry:
    """The log entry of a finished prune of `table`."""
    kept_sizes = {s.path: s.file_size for s in result.splits}
    return WorkloadEntry(
        datetime.now(UTC).isoformat(timespec="milliseconds"),
        table.storage.uri,
        engine,
        result.snapshot,
        tuple(sorted(set(shapes))),
        result.files_total,
        len(kept_sizes),
        sum(kept_sizes.values()),
        tuple(r.index for r in result.index_report if r.files_pruned),
        tuple(
            (r.index, shorten(r.why_not or "", MAX_REASON)) for r in result.index_report if not r.files_pruned
        ),
        millis,
    )


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
