"""What one prune may spend, declared once: `PruneLimits` holds every threshold the planner and its
steps apply (each a named default, overridden by the sidecar's `limits:` config), its deadline and
the clock that tells when it has passed. The lookup cost guard lives here too: an EQUAL / IN lookup
(record index, secondary index, bloom filters) of many keys is skipped, before any index data is
read, when it cannot pay — when the files still in play are expected to hold its keys anyway. The
files in play are counted as the lookups know them before any file is decided (`steps.base.InPlay`:
the files of the partitions and file groups the earlier steps left), which is at least the number
of files the step is then given. The estimate assumes each key is present and its row lies in any
of the `files` files in play with equal chance: a file escapes all `keys` keys with probability
`(1 - 1/files) ** keys`, which is the share of the files the lookup is expected to prune. Keys
are rarely present as often as that (more pruning than expected) and rows of one key may be spread
(less), but the estimate needs only the two counts. A skipped step keeps every file it would have
examined."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class PruneLimits:
    """What one prune may spend.

    - `max_discrete_values`: a column's IN list longer than this is widened to the span of its
      values before planning (noted).
    - `deadline`: a `clock()` instant after which the remaining steps fall back instead of running
      (None: no deadline); steps also check it between the batches of a long lookup.
    - `lookup_free_keys`: an EQUAL / IN lookup of at most this many keys always runs (it is cheap
      whatever it prunes); above it, the cost guard applies.
    - `lookup_min_pruned_share`: the share of the files in play a larger lookup must be expected to
      prune to run (0: never skip).
    - `range_max_index_share`: a range on a secondary index is scanned only when footer
      statistics say it reads at most this share of the index's row groups.
    - `max_key_lookups`: most key combinations (record index) or values (secondary index) looked up.
    - `bloom_probe_budget`: most (bloom filter, value) probes per column; files still undecided then
      are kept (a partial fallback).
    """

    max_discrete_values: int = 100_000
    deadline: float | None = None
    lookup_free_keys: int = 1_000
    lookup_min_pruned_share: float = 0.05
    range_max_index_share: float = 0.25
    max_key_lookups: int = 100_000
    bloom_probe_budget: int = 20_000_000  # ~1.5 s of probing on the 2-core development machine
    clock: Callable[[], float] = field(default=time.monotonic, compare=False, repr=False)

    def within(self, seconds: float | None) -> PruneLimits:
        """These limits with a deadline `seconds` from now on their clock (None: no deadline)."""
        return replace(self, deadline=None if seconds is None else self.clock() + seconds)

    def deadline_passed(self) -> bool:
        return self.deadline is not None and self.clock() > self.deadline

    def lookup_skipped(self, what: str, keys: int, files: int) -> str | None:
        """Why a lookup of `keys` distinct keys cannot pay among `files` files in play, or None
        when it runs. `what` names the lookup in the reason (e.g. the column)."""
        if keys <= self.lookup_free_keys or files == 0:
            return None
        share = expected_pruned_share(keys, files)
        if share >= self.lookup_min_pruned_share:
            return None
        return (
            f"{what}: {keys:,} keys over {files:,} files are expected to prune {share:.1%} of them, "
            f"below the {self.lookup_min_pruned_share:.0%} a lookup of more than "
            f"{self.lookup_free_keys:,} keys must promise; files kept"
        )


def expected_pruned_share(keys: int, files: int) -> float:
    """The share of `files` files expected to hold none of `keys` keys when every key is present
    in one file chosen at random (see the module docstring)."""
    if files <= 0:
        return 0.0
    return float((1.0 - 1.0 / files) ** keys)


DEFAULT_LIMITS = PruneLimits()
