"""Table statistics for engines' cost-based optimizers: row count, file count and size of a set of
live files (all of a snapshot's, or those a prune kept), and per column the null count and the
range of non-null values — from a ready `column_stats` index, and only for columns whose stats
cover every one of those files (a column with one uncovered file is unknown, never guessed). Ranges
are in the representation optimizers use (`stats_value`): numbers as doubles, dates as days and
timestamps as microseconds since the epoch, booleans as 0 and 1; strings and binaries have none.
Decimal bounds are stored rounded outward already, so a range is never narrower than the data."""

from __future__ import annotations

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

# Families without a representation in optimizers' ranges (see `stats_value`).
_NO_RANGE = {StatsFamily.STRING, StatsFamily.BINARY}


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
        rows = _rows_of(snapshot.index_partition(snapshot.table.spec(definition)).lookup(partitions), files)
        schema = snapshot.table.config.schema
        families = {schema.column(c).type.kind.stats_family for c in definition.columns} - _NO_RANGE
        summary = _summary(rows, families)
        columns = tuple(
            stats
            for column in definition.columns
            if (stats := _column(summary.get(column), column, schema.column(column).type, len(files)))
            is not None
        )
    return TableStatistics(sum(f.rows for f in files), len(files), sum(f.size for f in files), columns)


def _rows_of(rows: pa.Table, files: list[DataFile]) -> pa.Table:
    """The stats rows of `files` (the partitions' rows hold every live file of them), with a
    `file` key column: partition and file name."""
    keys = pc.binary_join_element_wise(rows["partition"], rows["file_name"], "\x00")
    wanted = pa.array(sorted({f"{f.partition}\x00{f.file_name}" for f in files}), pa.string())
    return rows.append_column("file", keys).filter(pc.is_in(keys, value_set=wanted))


def _summary(rows: pa.Table, families: set[StatsFamily]) -> dict[str, dict[str, Any]]:
    """Per column: the files with a stats row, the null count, and over the files with a bound to
    contribute (a file with only NULLs / NaNs has none) the lowest minimum, the highest maximum
    and how many of those files have no minimum or maximum, for each stats family in `families`."""
    counted = rows.group_by("column").aggregate([("file", "count_distinct"), ("null_count", "sum")])
    values = pc.subtract(
        pc.subtract(pc.fill_null(rows["value_count"], 0), pc.fill_null(rows["null_count"], 0)),
        pc.fill_null(rows["nan_count"], 0),
    )
    only_null = pc.CountOptions(mode="only_null")
    bounds = (
        rows.filter(pc.greater(values, 0))
        .group_by("column")
        .aggregate(
            [
                aggregate
                for family in families
                for aggregate in (
                    (f"min_{family}", "min"),
                    (f"max_{family}", "max"),
                    (f"min_{family}", "count", only_null),
                    (f"max_{family}", "count", only_null),
                )
            ]
        )
    )
    summary = {row.pop("column"): row for row in counted.to_pylist()}
    for row in bounds.to_pylist():
        summary[row.pop("column")] |= row
    return summary


def _column(
    summary: dict[str, Any] | None, column: str, column_type: ColumnType, file_count: int
) -> ColumnStatistics | None:
    """The column's statistics from its `_summary`, or None when one of the `file_count` files
    has no stats row for it."""
    if summary is None or summary["file_count_distinct"] != file_count:
        return None
    null_count = int(summary["null_count_sum"] or 0)
    family = column_type.kind.stats_family
    low, high = summary.get(f"min_{family}_min"), summary.get(f"max_{family}_max")
    if low is None or high is None or summary[f"min_{family}_count"] or summary[f"max_{family}_count"]:
        return ColumnStatistics(column, null_count, None, None)  # no bound, or some file's unknown
    return ColumnStatistics(column, null_count, stats_value(low, family), stats_value(high, family))


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
