"""The pure parts of the write tasks: which record index rows a rewrite task ships for a file
group's planned rows, and which columns a file's index rows are computed from. (How it walks its
partition group by group: `tests/builder/test_task_batches.py`.)"""

from __future__ import annotations

import pyarrow as pa

from builder.write.tasks import FILE_GROUP, KEY, PARTITION, RECORD_OP, FileIndexRows, record_index_rows
from pruner.format.config import TableConfig
from pruner.index.defining import define
from pruner.index.definitions import IndexType
from pruner.metadata import record_index
from pruner.metadata.spec import OP_DELETE, OP_FIELD, OP_UPSERT
from pruner.types import TableSchema


def test_record_index_rows_are_the_planned_rows_with_an_op() -> None:
    group = pa.table(
        {
            KEY: ["new", "kept", "moved-away", "gone"],
            PARTITION: ["city=ams", "city=ams", "city=ams", "city=ams"],
            FILE_GROUP: ["fg1"] * 4,
            RECORD_OP: pa.array([OP_UPSERT, None, None, OP_DELETE], pa.int8()),
        }
    )
    rows = record_index_rows(group)
    assert rows.to_pylist() == [
        {"key": "new", "partition": "city=ams", "file_group": "fg1", OP_FIELD: OP_UPSERT},
        {"key": "gone", "partition": "city=ams", "file_group": "fg1", OP_FIELD: OP_DELETE},
    ]


def test_a_files_index_rows_need_the_key_and_the_indexed_columns_only() -> None:
    schema = TableSchema.parse("id bigint, city string, amount double, score double, ts timestamp, day date")
    config = TableConfig("t", schema, ("id",), ("city",))
    definitions = (
        define(config, [], "stats", IndexType.COLUMN_STATS, ["score", "id"], {}),
        define(config, [], "bf", IndexType.BLOOM_FILTERS, ["city"], {}),
        define(config, [], "by_day", IndexType.SECONDARY_INDEX, ["day"], {}),
        define(config, [], "ts_hour", None, [], {}, expression="hour(ts)"),
    )
    indexer = FileIndexRows(config, definitions, record_index.spec(4))
    assert indexer.columns == ("id", "score", "city", "day", "ts")  # not amount
