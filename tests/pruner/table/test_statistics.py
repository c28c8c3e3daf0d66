"""Column statistics for optimizers from `column_stats` rows (`pruner.table.statistics`): distinct
values merged over the counted files, data sizes added up, exact decimal ranges; each only when
every counted file has it, so rows written before they existed (read through the index merge,
which fills the fields they lack with nulls) make them unknown, never an error."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa

from pruner.index import sketches
from pruner.index.stats import FILE_STATS_SCHEMA, OPTIMIZER_FIELDS, column_stats_spec, file_stats
from pruner.metadata.files_index import DataFile
from pruner.metadata.merge import merge
from pruner.table.statistics import ColumnStatistics, column_statistics
from pruner.types import TableSchema

SCHEMA = TableSchema.parse("id bigint, name string, price decimal(12,2)")
COLUMNS = ("id", "name", "price")


def _file(index: int, ids: list[int | None]) -> tuple[DataFile, pa.Table]:
    rows = pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": pa.array([None if i is None else f"n{i % 50}" for i in ids], pa.string()),
            "price": pa.array(
                [None if i is None else Decimal(i) / 100 + Decimal("857.71") for i in ids],
                pa.decimal128(12, 2),
            ),
        }
    )
    data_file = DataFile("p=1", f"f{index}.parquet", f"g{index}", "20260101000000000", 1000, len(ids))
    return data_file, file_stats(rows, SCHEMA, COLUMNS, data_file.partition, data_file.file_name)


def _by_column(stats: tuple[ColumnStatistics, ...]) -> dict[str, ColumnStatistics]:
    return {s.column: s for s in stats}


def _three_files() -> tuple[list[DataFile], list[pa.Table]]:
    made = [_file(0, list(range(0, 600))), _file(1, [*range(400, 1000), None]), _file(2, [None, None])]
    return [f for f, _ in made], [rows for _, rows in made]


def test_distinct_values_sizes_and_exact_decimals_cover_every_file() -> None:
    files, rows = _three_files()
    found = _by_column(column_statistics(pa.concat_tables(rows), SCHEMA, COLUMNS, files))
    bound = sketches.relative_error()
    assert found["id"].distinct_values_count is not None
    assert abs(found["id"].distinct_values_count - 1000) <= bound * 1000
    assert found["name"].distinct_values_count is not None
    assert round(found["name"].distinct_values_count) == 50
    names = [f"n{i % 50}" for i in [*range(600), *range(400, 1000)]]
    assert found["name"].data_size == sum(len(n) for n in names)
    assert found["id"].data_size is None  # fixed width
    assert (found["price"].min_decimal, found["price"].max_decimal) == (Decimal("857.71"), Decimal("867.70"))
    assert found["price"].min is not None and found["price"].min < 857.71  # the double stays outward
    assert found["id"].min_decimal is None


def test_an_estimate_never_exceeds_the_non_null_values() -> None:
    files, rows = zip(*[_file(i, [7]) for i in range(3)], strict=True)
    found = _by_column(column_statistics(pa.concat_tables(rows), SCHEMA, COLUMNS, list(files)))
    assert found["id"].distinct_values_count is not None
    assert found["id"].distinct_values_count <= 3
    assert round(found["id"].distinct_values_count) == 1


def _old_format(rows: pa.Table) -> pa.Table:
    """Rows as an index file written before the optimizer fields existed reads them."""
    old = rows.drop_columns([f.name for f in OPTIMIZER_FIELDS])
    return merge(column_stats_spec(1), [old])


def test_rows_written_before_the_optimizer_fields_read_as_unknown() -> None:
    files, rows = _three_files()
    old = _old_format(pa.concat_tables(rows))
    assert old.schema == FILE_STATS_SCHEMA
    found = _by_column(column_statistics(old, SCHEMA, COLUMNS, files))
    assert set(found) == set(COLUMNS)
    for stats in found.values():
        assert stats.distinct_values_count is None and stats.data_size is None
        assert stats.min_decimal is None and stats.max_decimal is None
    assert found["id"].min == 0 and found["id"].max == 999  # what they have stays known


def test_one_old_file_makes_the_optimizer_fields_unknown() -> None:
    files, rows = _three_files()
    mixed = pa.concat_tables([_old_format(rows[0]), *rows[1:]])
    found = _by_column(column_statistics(mixed, SCHEMA, COLUMNS, files))
    assert found["id"].distinct_values_count is None and found["name"].data_size is None
    assert found["price"].min_decimal is None
    alone = _by_column(column_statistics(mixed, SCHEMA, COLUMNS, files[1:]))  # the old one not counted
    assert alone["id"].distinct_values_count is not None and alone["name"].data_size is not None
    assert alone["price"].min_decimal == Decimal("861.71")


def test_a_file_of_only_nulls_has_no_exact_bounds_to_give() -> None:
    files, rows = _three_files()
    only_nulls = _by_column(column_statistics(rows[2], SCHEMA, COLUMNS, files[2:]))
    assert only_nulls["price"].min_decimal is None and only_nulls["price"].max_decimal is None
    assert only_nulls["id"].distinct_values_count == 0.0 and only_nulls["name"].data_size == 0
