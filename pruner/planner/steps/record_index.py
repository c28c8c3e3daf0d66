"""Step 3: the record index (RFC-08). EQUAL / IN on every record key column: the key combinations
are encoded as the writer encodes them, looked up (one read per bucket), and only the file groups
they live in are kept."""

from __future__ import annotations

import itertools
from typing import ClassVar

import numpy as np
import pyarrow as pa

from pruner.format.keys import encode_record_keys
from pruner.metadata.files_index import DataFile
from pruner.planner.steps.base import Kept, Skipped, StepContext, StepOutcome

MAX_KEY_LOOKUPS = 100_000


class RecordIndex:
    name: ClassVar[str] = "record_index"
    index: ClassVar[str | None] = "record_index"

    def run(self, context: StepContext, files: list[DataFile]) -> StepOutcome:
        key_fields = context.table.config.record_key
        predicate = context.predicate
        domains = [predicate.domain(k) for k in key_fields]
        if not all(
            k in predicate.columns and d.values.is_discrete()
            for k, d in zip(key_fields, domains, strict=True)
        ):
            return Skipped("no EQUAL / IN on every record key column")
        value_lists = [predicate.domain(k).values.discrete_values() for k in key_fields]
        combinations = int(np.prod([len(v) for v in value_lists]))
        if combinations > MAX_KEY_LOOKUPS:
            return Skipped(f"{combinations} key combinations exceed the lookup limit {MAX_KEY_LOOKUPS}")
        tuples = list(itertools.product(*value_lists))
        keys = pa.table(
            {
                k: pa.array([t[i] for t in tuples], context.schema.column(k).type.to_arrow())
                for i, k in enumerate(key_fields)
            }
        )
        found = context.snapshot.record_index().lookup(encode_record_keys(keys, key_fields))
        locations = set(zip(found["partition"].to_pylist(), found["file_group"].to_pylist(), strict=True))
        return Kept([f for f in files if (f.partition, f.file_group) in locations])
