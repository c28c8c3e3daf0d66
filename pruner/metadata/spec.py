"""`IndexPartitionSpec`: what one index partition stores — its name, the key fields rows are merged and
sorted by, the field hashed (as its canonical text) to choose a bucket, the payload fields, and the
bucket count."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from pruner.format.keys import value_hashes
from pruner.format.layout import metadata_partition_dir

OP_FIELD = "_op"
OP_UPSERT = 0
OP_DELETE = 1
# Small row groups: a reader looking up a few keys skips most of a bucket by footer min/max alone.
ROW_GROUP_ROWS = 4096


@dataclass(frozen=True)
class IndexPartitionSpec:
    name: str
    key_fields: tuple[str, ...]
    hash_field: str
    schema: pa.Schema  # key fields then payload fields, without the op column
    num_buckets: int

    def __post_init__(self) -> None:
        assert self.hash_field in self.key_fields
        assert list(self.schema.names[: len(self.key_fields)]) == list(self.key_fields)

    @cached_property
    def hash_type(self) -> pa.DataType:
        return self.schema.field(self.hash_field).type

    @property
    def directory(self) -> str:
        return metadata_partition_dir(self.name)

    @property
    def log_schema(self) -> pa.Schema:
        return self.schema.append(pa.field(OP_FIELD, pa.int8(), nullable=False))

    @property
    def payload_fields(self) -> list[str]:
        return list(self.schema.names[len(self.key_fields) :])

    def buckets(self, rows: pa.Table) -> npt.NDArray[np.int32]:
        return self.buckets_of_hashes(value_hashes(rows.column(self.hash_field)))

    def buckets_of_hashes(self, hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.int32]:
        """The bucket of each hash field value, from its `pruner.format.keys.value_hashes`
        (non-string hash fields, such as secondary keys, hash their canonical text as record keys
        do)."""
        return (hashes % np.uint64(self.num_buckets)).astype(np.int32)

    def sort_keys(self) -> list[tuple[str, str]]:
        return [(name, "ascending") for name in self.key_fields]
