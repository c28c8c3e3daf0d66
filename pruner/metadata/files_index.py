"""The `files` index partition: the live data files of every snapshot, keyed by (partition path,
file name), with file group, writing instant, size and row count. A commit upserts the files it
adds and tombstones the files it replaces, so a snapshot's live set is one merged read — storage is
never listed to find data files."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa

from pruner.format.layout import DataFileName, data_file_path
from pruner.metadata.merge import with_op
from pruner.metadata.spec import OP_DELETE, OP_UPSERT, IndexPartitionSpec

NAME = "files"
SCHEMA = pa.schema(
    [
        pa.field("partition", pa.string(), nullable=False),
        pa.field("file_name", pa.string(), nullable=False),
        pa.field("file_group", pa.string(), nullable=False),
        pa.field("instant", pa.string(), nullable=False),
        pa.field("size", pa.int64(), nullable=False),
        pa.field("rows", pa.int64(), nullable=False),
    ]
)


def spec(num_buckets: int) -> IndexPartitionSpec:
    return IndexPartitionSpec(NAME, ("partition", "file_name"), "partition", SCHEMA, num_buckets)


@dataclass(frozen=True)
class DataFile:
    """One live data file (a file slice of a file group)."""

    partition: str
    file_name: str
    file_group: str
    instant: str
    size: int
    rows: int

    @property
    def path(self) -> str:
        """Path relative to the table root."""
        name = DataFileName.parse(self.file_name)
        return data_file_path(self.partition, name) if name else self.file_name

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "partition": self.partition,
            "file_group": self.file_group,
            "instant": self.instant,
            "size": self.size,
            "rows": self.rows,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> DataFile:
        path = str(data["path"])
        name = path.rpartition("/")[2]
        return cls(
            str(data["partition"]),
            name if DataFileName.parse(name) else path,  # an adopted file keeps its path (`path`)
            str(data["file_group"]),
            str(data["instant"]),
            int(str(data["size"])),
            int(str(data["rows"])),
        )


def to_rows(files: Iterable[DataFile]) -> pa.Table:
    items = list(files)
    return pa.table({name: [getattr(f, name) for f in items] for name in SCHEMA.names}, schema=SCHEMA)


def from_rows(rows: pa.Table) -> list[DataFile]:
    return [DataFile(**row) for row in rows.select(SCHEMA.names).to_pylist()]


def changes(added: Iterable[DataFile], removed: Iterable[DataFile]) -> pa.Table:
    """Log rows for a commit: upserts for added files, tombstones for removed ones."""
    return pa.concat_tables([with_op(to_rows(added), OP_UPSERT), with_op(to_rows(removed), OP_DELETE)])
