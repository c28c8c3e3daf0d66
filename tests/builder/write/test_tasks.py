"""The pure parts of the write tasks: which record index rows a rewrite task ships for a file
group's planned rows. (How it walks its partition group by group: `tests/builder/test_task_batches.py`.)"""

from __future__ import annotations

import pyarrow as pa

from builder.write.tasks import FILE_GROUP, KEY, PARTITION, RECORD_OP, record_index_rows
from pruner.metadata.spec import OP_DELETE, OP_FIELD, OP_UPSERT


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
