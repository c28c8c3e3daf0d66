"""Table statistics for engines' cost-based optimizers: row count, file count and size of a set of
live files (all of a snapshot's, or those a prune kept), and per column the null count and the
range of non-null values — from a ready `column_stats` index, and only for columns whose stats
cover every one of those files (a column with one uncovered file is unknown, never guessed). Ranges
are in the representation optimizers use (`stats_value`): numbers as doubles, dates as days and
timestamps as microseconds since the epoch, booleans as 0 and 1; strings and binaries have none.
Decimal bounds are stored rounded outward already, so a range is never narrower than the data;
beside them a decimal column has its exact bounds (`Decimal`), when every file with values has
them. The distinct-value estimate merges the files' sketches (`pruner.index.sketches`), and the
data size adds up the files' sizes; each only when every counted file has one (files indexed
before they existed have none: `lakeprune table analyze` recomputes them)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime
from decimal import Decimal
from typing import Any, assert_never

import pyarrow as pa
import pyarrow.compute as pc

from pruner.index import sketches
from pruner.index.definitions import IndexState, IndexType
from pruner.metadata.files_index import DataFile
from pruner.numeric import days_since_epoch, micros_since_epoch
from pruner.table.table import Snapshot
from pruner.types import ColumnType, StatsFamily, TableSchema, TypeKind

# Families without a representation in optimizers' ranges (see `stats_value`).
_NO_RANGE = {StatsFamily.STRING, StatsFamily.BINARY}


@dataclass(frozen=True)
class ColumnStatistics:
    column: str
    null_count: int
    min: float | None  # None: unknown
    max: float | None
    distinct_values_count: float | None = None  # of the non-null values; None: unknown
    data_size: int | None = None  # bytes of the non-null values (variable width only); None: unknown
    min_decimal: Decimal | None = None  # a decimal column's exact bounds; None: unknown
    max_decimal: Decimal | None = None


@dataclass(frozen=True)
class TableStatistics:
    row_count: int
    file_count: int
    total_bytes: int
    columns: tuple[ColumnStatistics, ...]


def file_statistics(files: list[DataFile]) -> TableStatistics:
    """The row count, file count and size of `files`, with every column's statistics unknown: what
    the files index alone tells, without reading the column-stats index."""
    return TableStatistics(sum(f.rows for f in files), len(files), sum(f.size for f in files), ())


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
        columns = column_statistics(rows, snapshot.table.config.schema, definition.columns, files)
    return replace(file_statistics(files), columns=columns)


def column_statistics(
    stats_rows: pa.Table, schema: TableSchema, columns: tuple[str, ...], files: list[DataFile]
) -> tuple[ColumnStatistics, ...]:
    """The statistics of `columns` over `files` from `column_stats` rows (those of other files are
    ignored); a column missing a row of one of the files is left out (unknown)."""
    rows = _rows_of(stats_rows, files)
    families = {schema.column(c).type.kind.stats_family for c in columns} - _NO_RANGE
    summary = _summary(rows, families)
    return tuple(
        _with_optimizer_fields(stats, rows, schema.column(column).type)
        for column in columns
        if (stats := _column(summary.get(column), column, schema.column(column).type, len(files))) is not None
    )


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
    values = _bound_values(rows)
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


def _bound_values(rows: pa.Table) -> pa.Array:
    """Per stats row, the values that count towards min / max: neither NULL nor NaN."""
    return pc.subtract(
        pc.subtract(pc.fill_null(rows["value_count"], 0), pc.fill_null(rows["null_count"], 0)),
        pc.fill_null(rows["nan_count"], 0),
    )


def _with_optimizer_fields(
    stats: ColumnStatistics, rows: pa.Table, column_type: ColumnType
) -> ColumnStatistics:
    """`stats` with the distinct-value estimate, data size and exact decimal bounds that the
    column's stats rows (one per counted file, as `_column` checked) all have."""
    rows = rows.filter(pc.equal(rows["column"], stats.column))
    values = _bound_values(rows)
    distinct = None
    if rows["ndv_sketch"].null_count == 0:  # an estimate never above the non-null (NaN too) values
        non_null = pc.sum(pc.subtract(rows["value_count"], rows["null_count"])).as_py() or 0
        distinct = min(sketches.estimate(rows["ndv_sketch"].to_pylist()), float(non_null))
    data_size = int(pc.sum(rows["data_size"]).as_py() or 0) if rows["data_size"].null_count == 0 else None
    low = high = None
    with_values = rows.filter(pc.greater(values, 0))
    exact = (with_values["min_decimal"], with_values["max_decimal"])
    if column_type.kind is TypeKind.DECIMAL and len(with_values) and not any(c.null_count for c in exact):
        low = min(Decimal(v) for v in exact[0].to_pylist())
        high = max(Decimal(v) for v in exact[1].to_pylist())
    return replace(
        stats, distinct_values_count=distinct, data_size=data_size, min_decimal=low, max_decimal=high
    )


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
