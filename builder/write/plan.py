"""Pure planning for inserts: how many new records go to which file group. Per partition, small
existing file groups (below the small-file limit) are topped up to the target size first, then new
file groups of the target size are opened. Sizes in records come from the table's average bytes
per record (or an estimate before the first write)."""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from pruner.format.config import TableProperties
from pruner.metadata.files_index import DataFile

DEFAULT_RECORD_BYTES = 64


@dataclass(frozen=True)
class InsertBin:
    """Records ranked [start, end) (0-based, by key) of a partition's inserts go to file group."""

    partition: str
    file_group: str
    start: int
    end: int


def average_record_bytes(files: list[DataFile]) -> float:
    rows = sum(f.rows for f in files)
    return sum(f.size for f in files) / rows if rows else DEFAULT_RECORD_BYTES


def plan_insert_bins(
    insert_counts: dict[str, int],
    live_files: list[DataFile],
    properties: TableProperties,
    new_file_group: Callable[[], str] = lambda: uuid.uuid4().hex,
) -> list[InsertBin]:
    record_bytes = max(average_record_bytes(live_files), 1.0)
    per_file = max(1, int(properties.write_target_file_size_bytes // record_bytes))
    small_by_partition: dict[str, list[DataFile]] = {}
    for f in live_files:
        if f.size < properties.write_small_file_limit_bytes:
            small_by_partition.setdefault(f.partition, []).append(f)
    bins: list[InsertBin] = []
    for partition in sorted(insert_counts):
        remaining, start = insert_counts[partition], 0
        for small in sorted(small_by_partition.get(partition, []), key=lambda f: (f.size, f.file_group)):
            if remaining == 0:
                break
            room = int((properties.write_target_file_size_bytes - small.size) // record_bytes)
            take = min(remaining, room)
            if take > 0:
                bins.append(InsertBin(partition, small.file_group, start, start + take))
                start, remaining = start + take, remaining - take
        if remaining:
            # Spread the rest evenly over as few new file groups as the target size allows.
            groups = math.ceil(remaining / per_file)
            size = math.ceil(remaining / groups)
            for _ in range(groups):
                take = min(size, remaining)
                bins.append(InsertBin(partition, new_file_group(), start, start + take))
                start, remaining = start + take, remaining - take
    return bins
