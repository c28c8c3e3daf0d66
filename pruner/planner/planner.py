"""Planning a prune: which files of a snapshot may hold rows matching a bound TupleDomain. The
planner is a loop over the steps of `pruner.planner.steps`, cheapest first; each removes only
files it has proof for, and the result is what survives all of them (evidence combines: any one
index proving "cannot match" prunes a file). A step whose index is still building or absent is
skipped; one whose index data turns out missing, corrupt or unreadable falls back (every file it
was given is kept), as does the step running when the prune's deadline passes and every step
left after it — each fallback is logged, counted and written into the explain record. Steps whose
EQUAL / IN lookups cannot pay are skipped by the cost guard of `limits.PruneLimits`, keeping their
files, with the reason in the explain record. Files without index rows (written
before an index existed and not yet built) are always kept. Callers reach this through
`pruner.planner.prune.prune`, which binds the predicate first."""

from __future__ import annotations

import logging
import time
from typing import assert_never

from pruner.format.path_columns import file_path_values
from pruner.metadata.files_index import DataFile
from pruner.planner.limits import DEFAULT_LIMITS, PruneLimits
from pruner.planner.result import ExplainStep, PruneResult, Split
from pruner.planner.steps import STEPS
from pruner.planner.steps.base import INDEX_UNUSABLE, DeadlinePassedError, Kept, Skipped, StepContext
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import Value
from pruner.table.table import Snapshot

log = logging.getLogger(__name__)


class Planner:
    """Plans prunes for one snapshot."""

    def __init__(self, snapshot: Snapshot, limits: PruneLimits = DEFAULT_LIMITS) -> None:
        self.snapshot = snapshot
        self.limits = limits

    def prune(self, predicate: TupleDomain, widened: tuple[str, ...] = ()) -> PruneResult:
        files = self.snapshot.files()
        if predicate.is_none():
            explain = [ExplainStep("predicate", None, (), len(files), 0, 0.0)]
            return PruneResult(self.snapshot.instant, str(predicate), len(files), [], explain, widened)
        context = StepContext(self.snapshot, predicate, self.limits)
        columns = tuple(predicate.columns)
        candidates, explain = files, []
        for step in STEPS:
            start = time.perf_counter()
            skipped = fallback = None
            if self.limits.deadline_passed():
                fallback, kept = "the planning deadline passed before this step; files kept", candidates
            else:
                try:
                    outcome = step.run(context, candidates)
                except DeadlinePassedError as exc:
                    fallback, kept = str(exc), candidates
                except INDEX_UNUSABLE as exc:
                    fallback, kept = f"{type(exc).__name__}: {exc}", candidates
                else:
                    match outcome:
                        case Skipped(reason):
                            skipped, kept = reason, candidates
                        case Kept(survivors, unchecked, parts_skipped):
                            kept, fallback = survivors, "; ".join(unchecked) or None
                            skipped = "; ".join(parts_skipped) or None
                        case _:
                            assert_never(outcome)
            if fallback and kept is candidates:
                log.warning(
                    "prune %s: step %s kept all %d files: %s", self._where, step.name, len(kept), fallback
                )
            elif fallback:
                log.warning("prune %s: step %s: %s", self._where, step.name, fallback)
            millis = (time.perf_counter() - start) * 1000
            explain.append(
                ExplainStep(
                    step.name, step.index, columns, len(candidates), len(kept), millis, skipped, fallback
                )
            )
            candidates = kept
        typed: dict[str, dict[str, Value | None]] = {}
        splits = [self._split(f, typed) for f in candidates]
        return PruneResult(self.snapshot.instant, str(predicate), len(files), splits, explain, widened)

    @property
    def _where(self) -> str:
        return self.snapshot.table.storage.uri

    def _split(self, f: DataFile, typed: dict[str, dict[str, Value | None]]) -> Split:
        """The split of a kept file; `typed` caches each partition path's typed values."""
        if f.partition not in typed:
            schema = self.snapshot.table.config.schema
            typed[f.partition] = file_path_values(f.partition, schema, self._where)
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
