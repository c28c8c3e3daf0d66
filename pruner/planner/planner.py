"""Planning a prune: which files of a snapshot may hold rows matching a bound TupleDomain. The
planner is a loop over the steps of `pruner.planner.steps`, cheapest first, in two phases. First
each step does its index lookups once, over what is known to be in play before any file is
evaluated (`InPlay`: the partitions and file groups the steps before it left; a lookup's cost
guard weighs its keys against those files), and returns a verdict on files (`Verdict`); then
`PlannedPrune.batches` streams the snapshot's files, `FILES_PER_BATCH` at a time in the order of
the files index, through every verdict in step order, and yields each batch's splits as soon as it
is decided. The result is what survives all of them (evidence combines: any one index proving
"cannot match" prunes a file); it is one plan whether it is collected at once (`PlannedPrune.collect`) or
read batch by batch, and the summary (files in and out of each step, time, fallbacks) is complete
after the last batch. Each step removes only files it has proof for. A step whose index is still
building or absent is skipped; one whose index data turns out missing, corrupt or unreadable falls
back (every file it is given is kept), as does the step running when the prune's deadline passes
and every step left after it — a verdict that finds the deadline passed keeps the files of that
batch and of every later one — each fallback is logged, counted and written into the explain
record. Steps whose EQUAL / IN lookups cannot pay are skipped by the cost guard of
`limits.PruneLimits`, keeping their files, with the reason in the explain record. Files without
index rows (written before an index existed and not yet built) are always kept. With the result
comes a report per index of the table, derived from the steps' records (`why_not`): files pruned,
or why none. Callers reach this through `pruner.planner.prune.prune` and `prune_stream`, which bind
the predicate first."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import assert_never

from pruner.format.path_columns import file_path_values
from pruner.metadata.files_index import DataFile
from pruner.planner import why_not
from pruner.planner.limits import DEFAULT_LIMITS, PruneLimits
from pruner.planner.result import ExplainStep, PruneResult, Split
from pruner.planner.steps import STEPS
from pruner.planner.steps.base import (
    INDEX_UNUSABLE,
    DeadlinePassedError,
    FileFilter,
    InPlay,
    Skipped,
    Step,
    StepContext,
    Verdict,
)
from pruner.predicate.text import NO_TEXT, TextPredicate
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import Value
from pruner.storage_requests import StorageRequests
from pruner.table.table import Snapshot

log = logging.getLogger(__name__)

# Files decided per batch. A constant of the planner, not of its callers: a verdict that spends a
# budget over the batches (bloom filter probes) then decides the same files whoever reads the plan.
FILES_PER_BATCH = 1_000


class Planner:
    """Plans prunes for one snapshot."""

    def __init__(self, snapshot: Snapshot, limits: PruneLimits = DEFAULT_LIMITS) -> None:
        self.snapshot = snapshot
        self.limits = limits

    def plan(
        self, predicate: TupleDomain, widened: tuple[str, ...] = (), text: TextPredicate = NO_TEXT
    ) -> PlannedPrune:
        """Every step's lookups done, no file evaluated yet. `text`: what the predicate requires of
        string columns' text beside `predicate` (`pruner.predicate.text`; the text index step)."""
        files = self.snapshot.files()
        asked = why_not.Asked(predicate, text, widened)
        if predicate.is_none():
            explain = ExplainStep("predicate", None, (), len(files), 0, 0.0)
            return PlannedPrune(self, asked, len(files), [], [], explain)
        context = StepContext(self.snapshot, predicate, self.limits, text)
        in_play = InPlay.of(files)
        stages = []
        for step in STEPS:
            stage = self._plan_step(step, context, in_play)
            stages.append(stage)
            in_play = stage.in_play or in_play
        return PlannedPrune(self, asked, len(files), files, stages)

    def _plan_step(self, step: Step, context: StepContext, in_play: InPlay) -> _Stage:
        start = time.perf_counter()
        stage = _Stage(step, tuple(context.predicate.columns))
        if self.limits.deadline_passed():
            stage.fallback = "the planning deadline passed before this step; files kept"
        else:
            try:
                outcome = step.plan(context, in_play)
            except DeadlinePassedError as exc:
                stage.fallback = str(exc)
            except INDEX_UNUSABLE as exc:
                stage.fallback = f"{type(exc).__name__}: {exc}"
            else:
                match outcome:
                    case Skipped(reason, by_index):
                        stage.skipped, stage.by_index = reason, by_index
                    case Verdict(verdict, narrowed, parts_skipped, by_index):
                        stage.filter, stage.in_play, stage.ran = verdict, narrowed, True
                        stage.skipped = "; ".join(parts_skipped) or None
                        stage.by_index = by_index
                    case _:
                        assert_never(outcome)
        stage.millis = (time.perf_counter() - start) * 1000
        return stage

    @property
    def where(self) -> str:
        return self.snapshot.table.storage.uri

    def _split(self, f: DataFile, typed: dict[str, dict[str, Value | None]]) -> Split:
        """The split of a kept file; `typed` caches each partition path's typed values."""
        if f.partition not in typed:
            schema = self.snapshot.table.config.schema
            typed[f.partition] = file_path_values(f.partition, schema, self.where)
        return Split(
            self.snapshot.table.storage.full_uri(f.path),
            f.partition,
            typed[f.partition],
            f.file_group,
            0,
            f.size,
            f.rows,
            f.size,
        )


@dataclass
class _Stage:
    """One step in a plan: its verdict (None: it keeps every file) and its counts so far."""

    step: Step
    columns: tuple[str, ...]
    filter: FileFilter | None = None
    in_play: InPlay | None = None
    skipped: str | None = None
    fallback: str | None = None
    ran: bool = False  # the step returned a verdict
    files_in: int = 0
    files_out: int = 0
    millis: float = 0.0
    fell_back_whole: bool = True  # the fallback (if any) kept every file the step was given
    by_index: Mapping[str, str] = field(default_factory=dict)  # what the step said of each index
    removed_before_fallback: Mapping[str, int] = field(default_factory=dict)

    def keep(self, files: list[DataFile]) -> list[DataFile]:
        start = time.perf_counter()
        kept = files
        if self.filter is not None:
            try:
                kept = self.filter.keep(files)
            except DeadlinePassedError as exc:
                self._fall_back(str(exc))
            except INDEX_UNUSABLE as exc:
                self._fall_back(f"{type(exc).__name__}: {exc}")
        self.files_in += len(files)
        self.files_out += len(kept)
        self.millis += (time.perf_counter() - start) * 1000
        return kept

    def _fall_back(self, reason: str) -> None:
        """Keep every file from this batch on."""
        if self.filter is not None:
            self.removed_before_fallback = dict(self.filter.removed())
        self.filter, self.fallback = None, reason
        self.fell_back_whole = self.files_in == self.files_out

    def explain(self) -> ExplainStep:
        fallback, skipped = self.fallback, self.skipped
        if self.filter is not None:
            fallback = "; ".join(self.filter.unchecked()) or fallback
            skipped = "; ".join(filter(None, (skipped, *self.filter.notes()))) or None
        return ExplainStep(
            self.step.name,
            self.step.index,
            self.columns,
            self.files_in,
            self.files_out,
            self.millis,
            skipped,
            fallback,
        )

    def outcome(self) -> why_not.StageOutcome:
        """What the explain report per index reads of this step (`why_not`)."""
        removed = self.removed_before_fallback if self.filter is None else self.filter.removed()
        return why_not.StageOutcome(self.explain(), self.fallback, self.ran, self.by_index, dict(removed))


class PlannedPrune:
    """A plan whose lookups are done: `batches` decides the files and yields their splits, a batch
    at a time; `result` is the whole prune once every batch has been read (`collect` reads them).
    `cancel` (from any thread) stops `batches` before its next batch. `storage`: what planning
    asked of storage (set by the caller that counted it; deciding files reads nothing more)."""

    def __init__(
        self,
        planner: Planner,
        asked: why_not.Asked,
        files_total: int,
        files: list[DataFile],
        stages: list[_Stage],
        fixed: ExplainStep | None = None,
    ) -> None:
        self.planner = planner
        self.asked = asked
        self.predicate = str(asked.domain)
        self.widened = asked.widened
        self.files_total = files_total
        self._files = files
        self._stages = stages
        self._fixed = fixed
        self._splits: list[Split] = []
        self._typed: dict[str, dict[str, Value | None]] = {}  # each partition path's typed values
        self._started = False
        self._done = False
        self._cancelled = threading.Event()
        self.storage = StorageRequests()

    @property
    def snapshot(self) -> str | None:
        return self.planner.snapshot.instant

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def decided(self) -> bool:
        """Whether every file has been decided: `batches` has no batch left to yield."""
        return self._done

    @property
    def cancelled(self) -> bool:
        """Whether `cancel` stopped the batches before the last one."""
        return self._cancelled.is_set() and not self._done

    def batches(self) -> Iterator[list[Split]]:
        """The splits of each batch of files, in plan order (batches may be empty)."""
        if self._started:
            raise RuntimeError("a plan's batches are read once")
        self._started = True
        for start in range(0, len(self._files), FILES_PER_BATCH):
            if self._cancelled.is_set():
                return
            batch = self._files[start : start + FILES_PER_BATCH]
            for stage in self._stages:
                batch = stage.keep(batch)
            splits = [self.planner._split(f, self._typed) for f in batch]
            self._splits.extend(splits)
            # the last batch is decided before it is handed out: a caller learns that nothing is
            # left (`decided`) without asking for a batch more
            self._done = start + FILES_PER_BATCH >= len(self._files)
            yield splits
        self._done = True

    def result(self) -> PruneResult:
        """The whole prune: every split, the explain record of every step and the report per
        index (`why_not`)."""
        if not self._done:
            raise RuntimeError("the plan's batches have not all been read")
        outcomes: list[why_not.StageOutcome] | None = None
        if self._fixed is not None:
            explain = [self._fixed]
        else:
            outcomes = [stage.outcome() for stage in self._stages]
            explain = [outcome.explain for outcome in outcomes]
            self._log_fallbacks()
        return PruneResult(
            self.snapshot,
            self.predicate,
            self.files_total,
            self._splits,
            explain,
            self.widened,
            self.storage,
            index_report=why_not.report(self.planner.snapshot.table, self.asked, outcomes),
        )

    def collect(self) -> PruneResult:
        for _ in self.batches():
            pass
        return self.result()

    def _log_fallbacks(self) -> None:
        where = self.planner.where
        for stage in self._stages:
            step = stage.explain()
            if not step.fallback:
                continue
            if stage.fallback and stage.fell_back_whole:
                log.warning(
                    "prune %s: step %s kept all %d files: %s", where, step.step, step.files_out, step.fallback
                )
            else:
                log.warning("prune %s: step %s: %s", where, step.step, step.fallback)
