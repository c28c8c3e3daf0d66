"""The `record_index` partition (RFC-08): encoded record key -> (partition path, file group), hashed
into a fixed number of buckets by the key. Writers tag incoming records with it (is this key new,
and where does it live?); later, point lookups on the key use it to pick files."""

from __future__ import annotations

import pyarrow as pa

from pruner.metadata.spec import IndexPartitionSpec

NAME = "record_index"
SCHEMA = pa.schema(
    [
        pa.field("key", pa.string(), nullable=False),
        pa.field("partition", pa.string(), nullable=False),
        pa.field("file_group", pa.string(), nullable=False),
    ]
)


def spec(num_buckets: int) -> IndexPartitionSpec:
    return IndexPartitionSpec(NAME, ("key",), "key", SCHEMA, num_buckets)
