"""Step 3: the record index (RFC-08). EQUAL / IN on every record key column: the key combinations
are built as Arrow arrays (one `take` per column), encoded as the writer encodes them, looked up
(one read per bucket, all keys of a bucket searched at once), and only the file groups they live
in are kept. Before any index data is read, the cost guard (`PruneLimits.lookup_skipped`) skips a
lookup of many keys that the files in play are expected to hold anyway. What remains in play is
then only the partitions and file groups found."""

from __future__ import annotations

import math
from typing import ClassVar

import pyarrow as pa

from pruner.format.keys import encode_record_keys
from pruner.planner.keys import combinations
from pruner.planner.steps.base import InPlay, Keeping, Skipped, StepContext, StepOutcome, Verdict


class RecordIndex:
    name: ClassVar[str] = "record_index"
    index: ClassVar[str | None] = "record_index"

    def plan(self, context: StepContext, in_play: InPlay) -> StepOutcome:
        key_fields = context.table.config.record_key
        predicate = context.predicate
        if not all(k in predicate.columns and predicate.domain(k).values.is_discrete() for k in key_fields):
            return Skipped("no EQUAL / IN on every record key column")
        limits = context.limits
        total = math.prod(predicate.domain(k).values.range_count() for k in key_fields)
        if total > limits.max_key_lookups:
            return Skipped(f"{total} key combinations exceed the lookup limit {limits.max_key_lookups}")
        reason = limits.lookup_skipped(", ".join(key_fields), total, in_play.count)
        if reason is not None:
            return Skipped(reason)
        keys = pa.table(
            dict(zip(key_fields, combinations([context.keys(k) for k in key_fields]), strict=True))
        )
        context.check_deadline()
        found = context.snapshot.record_index().lookup(encode_record_keys(keys, key_fields))
        return kept_file_groups(in_play, found)


def kept_file_groups(in_play: InPlay, found: pa.Table) -> Verdict:
    """Keep the files whose (partition, file group) is among the record index rows `found` (the
    distinct pairs found with one Arrow group-by, however many rows there are); a snapshot holds
    one file per file group, so at most that many files stay in play."""
    pairs = found.select(["partition", "file_group"]).group_by(["partition", "file_group"]).aggregate([])
    locations = set(zip(pairs["partition"].to_pylist(), pairs["file_group"].to_pylist(), strict=True))
    partitions = {p for p, _ in locations}
    return Verdict(
        Keeping(lambda f: (f.partition, f.file_group) in locations),
        in_play.within(partitions, sum(1 for p, _ in locations if p in in_play.partitions)),
    )
