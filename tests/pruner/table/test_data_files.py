"""Reading a data file whole and a batch at a time: the same rows, typed per the table schema,
with columns the file lacks taken from its partition path."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pruner.storage import Storage
from pruner.table.data_files import iter_data_file, read_data_file
from pruner.types import TableSchema

SCHEMA = TableSchema.parse("id bigint, city string, amount decimal(10,2)")


@pytest.fixture
def storage(tmp_path: Path) -> Storage:
    (tmp_path / "city=ams").mkdir()
    rows = pa.table({"id": pa.array(range(1000), pa.int32()), "amount": pa.nulls(1000, pa.float64())})
    pq.write_table(rows, tmp_path / "city=ams" / "f.parquet", row_group_size=300)
    return Storage.from_uri(str(tmp_path))


def test_batches_concatenate_to_the_whole_file(storage: Storage) -> None:
    whole = read_data_file(storage, "city=ams/f.parquet", SCHEMA, ["id", "city"])
    batches = list(iter_data_file(storage, "city=ams/f.parquet", SCHEMA, ["id", "city"], 128))
    assert max(b.num_rows for b in batches) == 128 and len(batches) > 1000 // 128
    assert pa.concat_tables(batches).equals(whole)
    assert whole.schema == pa.schema([("id", pa.int64()), ("city", pa.string())])
    assert set(whole.column("city").to_pylist()) == {"ams"}


def test_columns_that_only_the_path_holds_keep_the_row_count(storage: Storage) -> None:
    batches = list(iter_data_file(storage, "city=ams/f.parquet", SCHEMA, ["city"], 128))
    assert sum(b.num_rows for b in batches) == 1000
    assert set(pa.concat_tables(batches).column("city").to_pylist()) == {"ams"}
