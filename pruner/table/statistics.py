"""Table statistics for engines' cost-based optimizers: row count, file count and size of a set of
live files (all of a snapshot's, or those a prune kept), and per column the null count and the
range of non-null values — from a ready `column_stats` index, and only for columns whose stats
cover every one of those files (a column with one uncovered file is unknown, never guessed). Ranges
are in the representation optimizers use (`stats_value`): numbers as doubles, dates as days and
timestamps as microseconds since the epoch, booleans as 0 and 1; strings and binaries have none.
Decimal bounds are stored rounded outward already, so a range is never narrower than the data."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, assert_never

import pyarrow as pa
import pyarrow.compute as pc

from pruner.index.definitions import IndexState, IndexType
from pruner.metadata.files_index import DataFile
from pruner.numeric import days_since_epoch, micros_since_epoch
from pruner.table.table import Snapshot
from pruner.types import ColumnType, StatsFamily


@dataclass(frozen=True)
class ColumnStatistics:
    column: str
    null_count: int
    min: float | None  # None: unknown
    max: float | None


@dataclass(frozen=True)
class TableStatistics:
    row_count: int
    file_count: int
    total_bytes: int
    columns: tuple[ColumnStatistics, ...]


def table_statistics(snapshot: Snapshot, files: list[DataFile]) -> TableStatistics:
    """The statistics of `files` (live files of `snapshot`)."""
    columns: tuple[ColumnStatistics, ...] = ()
    definition = next(
        (
            d
            for d in snapshot.table.definitions
            if d.index_type == IndexType.COLUMN_STATS and d.state == IndexState.READY
        ),
        None,
    )
    if definition is not None and files:
        partitions = pa.array(sorted({f.partition for f in files}), pa.string())
        rows = snapshot.index_partition(snapshot.table.spec(definition)).lookup(partitions)
        schema = snapshot.table.config.schema
        columns = tuple(
            stats
            for column in definition.columns
            if (stats := _column(rows, column, schema.column(column).type, files)) is not None
        )
    return TableStatistics(sum(f.rows for f in files), len(files), sum(f.size for f in files), columns)


def _column(
    rows: pa.Table, column: str, column_type: ColumnType, files: list[DataFile]
) -> ColumnStatistics | None:
    """The column's statistics over `files`, or None when some file has no stats row for it."""
    subset = rows.filter(pc.equal(rows["column"], column))
    wanted = {(f.partition, f.file_name) for f in files}
    by_file: dict[tuple[str, str], dict[str, Any]] = defaultdict(dict)
    family = column_type.kind.stats_family
    for row in subset.select(
        ["partition", "file_name", "null_count", "value_count", "nan_count", f"min_{family}", f"max_{family}"]
    ).to_pylist():
        key = (row["partition"], row["file_name"])
        if key in wanted:
            by_file[key] = row
    if len(by_file) != len(wanted):
        return None
    null_count = sum(int(r["null_count"] or 0) for r in by_file.values())
    low = high = None
    known = True
    for row in by_file.values():
        values = int(row["value_count"] or 0) - int(row["null_count"] or 0) - int(row["nan_count"] or 0)
        if values <= 0:
            continue  # only NULLs / NaNs: no bound to contribute
        file_low, file_high = (
            stats_value(row[f"min_{family}"], family),
            stats_value(row[f"max_{family}"], family),
        )
        if file_low is None or file_high is None:
            known = False
            break
        low = file_low if low is None else min(low, file_low)
        high = file_high if high is None else max(high, file_high)
    if not known:
        low = high = None
    return ColumnStatistics(column, null_count, low, high)


def stats_value(value: object, family: StatsFamily) -> float | None:
    """A stored min / max as optimizers represent it; None where there is no such representation."""
    if value is None:
        return None
    match family:
        case StatsFamily.INT | StatsFamily.DOUBLE:
            assert isinstance(value, int | float)
            return float(value)
        case StatsFamily.DATE:
            assert isinstance(value, date)
            return float(days_since_epoch(value))
        case StatsFamily.TS:
            assert isinstance(value, datetime)
            return float(micros_since_epoch(value))
        case StatsFamily.STRING | StatsFamily.BINARY:
            return None
        case _:
            assert_never(family)
