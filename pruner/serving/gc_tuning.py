"""The garbage collector's settings for a process that serves prunes. A prune of a join's dynamic
filter decodes its IN list (tens of thousands of keys) into as many Python objects; with CPython's
default thresholds those allocations set off collections of the oldest generation, and each of
them walks the whole heap: the catalog, every table's file list and cached index state. On the
TPC-H sf1 lake a 30,000-key prune of `orders` then took 83 ms in three runs of five instead of
28 ms (`bench/notes/tpc.md`). A serving process therefore, once its catalog is loaded, moves what
it holds to the permanent generation (`gc.freeze`: never scanned again, and never collected,
which is right for state that lives as long as the process), and collects its youngest
generation after `YOUNG_THRESHOLD` allocations instead of 700, so that one large request sets
off few collections. Only `lakeprune serve` and each of its workers call `tune_for_serving`
(through `Sidecar(tune_gc=True)`): a library user's process keeps its own settings."""

from __future__ import annotations

import gc
import logging

log = logging.getLogger(__name__)

# Net allocations between two collections of the youngest generation (CPython's default: 700). A
# decoded 100,000-key IN list is about that many objects; most of them die with the request.
YOUNG_THRESHOLD = 100_000
# Collections of one generation between two of the next (CPython's defaults).
OLDER_THRESHOLDS = (10, 10)


def tune_for_serving() -> None:
    """Collect once, freeze what survives, and raise the youngest generation's threshold."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *OLDER_THRESHOLDS)
    log.info("garbage collector: %d objects frozen, thresholds %s", gc.get_freeze_count(), gc.get_threshold())
