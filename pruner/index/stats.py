"""Column statistics (RFC-27) for the `column_stats` and `partition_stats` partitions: per file (or
per partition) and column — value count, null count, NaN count and typed min / max.

Min and max are stored in one pair of columns per type family (`int` for booleans and integers,
`double` for floating point and decimals, `string`, `binary`, `date`, `ts`), so that a planner reads
typed arrays. Rules, each of which only widens (safe for pruning):
- NaN never counts towards min / max; it is counted in `nan_count`.
- decimals are stored as doubles rounded outward (min down, max up).
- strings / binaries longer than 256 bytes keep a prefix as min and have no max (unknown).
A null min / max with non-null, non-NaN values present means "unknown".

File stats also carry what optimizers need and pruning does not read (`sketches.py`): a
distinct-value sketch (`ndv_sketch`), the values' data size (`data_size`, variable-width types
only), and a decimal column's exact bounds (`min_decimal` / `max_decimal`, the decimal's text).
Files written before those existed have no such columns: they read as null, which means unknown."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from pruner.index import sketches
from pruner.metadata.spec import IndexPartitionSpec
from pruner.numeric import round_down, round_up
from pruner.types import ColumnType, StatsFamily, TableSchema, TypeKind

MAX_BOUND_BYTES = 256
FAMILY_TYPES: dict[StatsFamily, pa.DataType] = {family: family.arrow_type for family in StatsFamily}
_COUNTS = [
    pa.field("value_count", pa.int64()),
    pa.field("null_count", pa.int64()),
    pa.field("nan_count", pa.int64()),
]
_BOUNDS = [
    pa.field(f"{side}_{family}", arrow) for family, arrow in FAMILY_TYPES.items() for side in ("min", "max")
]
# For optimizers only (module docstring); null: unknown.
OPTIMIZER_FIELDS = [
    pa.field("ndv_sketch", pa.binary()),
    pa.field("data_size", pa.int64()),
    pa.field("min_decimal", pa.string()),
    pa.field("max_decimal", pa.string()),
]
FILE_STATS_SCHEMA = pa.schema(
    [
        pa.field("column", pa.string(), nullable=False),
        pa.field("partition", pa.string(), nullable=False),
        pa.field("file_name", pa.string(), nullable=False),
        *_COUNTS,
        *_BOUNDS,
        *OPTIMIZER_FIELDS,
    ]
)
PARTITION_STATS_SCHEMA = pa.schema(
    [
        pa.field("column", pa.string(), nullable=False),
        pa.field("partition", pa.string(), nullable=False),
        pa.field("files", pa.int64()),
        *_COUNTS,
        *_BOUNDS,
    ]
)


def column_stats_spec(num_buckets: int) -> IndexPartitionSpec:
    return IndexPartitionSpec(
        "column_stats", ("column", "partition", "file_name"), "partition", FILE_STATS_SCHEMA, num_buckets
    )


def partition_stats_spec(num_buckets: int) -> IndexPartitionSpec:
    return IndexPartitionSpec(
        "partition_stats", ("column", "partition"), "partition", PARTITION_STATS_SCHEMA, num_buckets
    )


def family(column_type: ColumnType) -> StatsFamily:
    return column_type.kind.stats_family


def _bounds(values: pa.Array, column_type: ColumnType) -> tuple[object, object, int, object, object]:
    """(min, max, nan_count, exact min, exact max) of the non-null values: min and max as Python
    values of the column's family, the exact ones as they are (decimals: `Decimal`)."""
    nan_count = 0
    if pa.types.is_floating(values.type):
        is_nan = pc.fill_null(pc.is_nan(values), False)
        nan_count = int(pc.sum(is_nan).as_py() or 0)
        values = values.filter(pc.invert(is_nan))
    if pa.types.is_boolean(values.type):
        values = pc.cast(values, pa.int64())
    if pa.types.is_timestamp(values.type):
        values = pc.cast(values, pa.timestamp("us", tz="UTC"))
    result = pc.min_max(values)
    low, high = result["min"].as_py(), result["max"].as_py()
    exact_low, exact_high = low, high
    if column_type.kind is TypeKind.DECIMAL and low is not None:
        low, high = round_down(low), round_up(high)
    if family(column_type) in (StatsFamily.STRING, StatsFamily.BINARY) and low is not None:
        if len(low) > MAX_BOUND_BYTES:
            low = low[:MAX_BOUND_BYTES]
        if len(high) > MAX_BOUND_BYTES:
            high = None
    return low, high, nan_count, exact_low, exact_high


def file_stats(
    rows: pa.Table, schema: TableSchema, columns: tuple[str, ...], partition: str, file_name: str
) -> pa.Table:
    """One stats row per column for a data file's rows."""
    records = []
    for name in columns:
        column_type = schema.column(name).type
        values = rows.column(name).combine_chunks()
        low, high, nan_count, exact_low, exact_high = _bounds(values, column_type)
        fam = family(column_type)
        decimal = column_type.kind is TypeKind.DECIMAL and exact_low is not None
        records.append(
            {
                "column": name,
                "partition": partition,
                "file_name": file_name,
                "value_count": len(values),
                "null_count": values.null_count,
                "nan_count": nan_count,
                f"min_{fam}": low,
                f"max_{fam}": high,
                "ndv_sketch": sketches.sketch(values, column_type),
                "data_size": sketches.data_size(values, column_type),
                "min_decimal": str(exact_low) if decimal else None,
                "max_decimal": str(exact_high) if decimal else None,
            }
        )
    return pa.Table.from_pylist(records, schema=FILE_STATS_SCHEMA)


def aggregate_by_partition(stats: pa.Table, complete: dict[str, int]) -> pa.Table:
    """Partition stats from file stats. `complete[p]` is the number of live files in partition p;
    a (column, partition) whose file stats do not cover every live file gets no row (unknown)."""
    if stats.num_rows == 0:
        return PARTITION_STATS_SCHEMA.empty_table()
    unknown_max = []
    for fam in FAMILY_TYPES:
        has_values = pc.greater(
            pc.subtract(pc.subtract(stats["value_count"], stats["null_count"]), stats["nan_count"]), 0
        )
        unknown = pc.and_(pc.is_null(stats[f"max_{fam}"]), pc.is_valid(stats[f"min_{fam}"]))
        unknown_max.append(pc.and_(has_values, unknown))
    flagged = stats.append_column(
        "_unknown",
        pa.array([any(flags) for flags in zip(*[u.to_pylist() for u in unknown_max], strict=True)]),
    )
    aggregations = [
        ("file_name", "count"),
        ("value_count", "sum"),
        ("null_count", "sum"),
        ("nan_count", "sum"),
        ("_unknown", "any"),
    ]
    for fam in FAMILY_TYPES:
        aggregations += [(f"min_{fam}", "min"), (f"max_{fam}", "max")]
    grouped = flagged.group_by(["column", "partition"]).aggregate(aggregations)
    rows = []
    for row in grouped.to_pylist():
        if complete.get(row["partition"], -1) != row["file_name_count"]:
            continue
        record = {
            "column": row["column"],
            "partition": row["partition"],
            "files": row["file_name_count"],
            "value_count": row["value_count_sum"],
            "null_count": row["null_count_sum"],
            "nan_count": row["nan_count_sum"],
        }
        for fam in FAMILY_TYPES:
            record[f"min_{fam}"] = row[f"min_{fam}_min"]
            record[f"max_{fam}"] = None if row["_unknown_any"] else row[f"max_{fam}_max"]
        rows.append(record)
    return pa.Table.from_pylist(rows, schema=PARTITION_STATS_SCHEMA)
