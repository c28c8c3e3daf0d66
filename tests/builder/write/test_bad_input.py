"""Bad input gets a clear one-line error and changes nothing: no instant, no file, no lock left."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from builder import LakepruneTable
from pruner.errors import (
    InvalidInputError,
    LakepruneError,
    SchemaMismatchError,
    TableCorruptError,
    TableNotFoundError,
)
from pruner.format.layout import LOCK_FILE, TABLE_JSON
from tests.support import SCHEMA, contents, create, make_row, to_df


def _state(location: Path) -> set[str]:
    return {str(p.relative_to(location)) for p in location.rglob("*") if p.is_file()}


BAD_INPUTS: dict[str, tuple[Callable[[SparkSession], DataFrame], str, type[LakepruneError], str]] = {
    "missing column": (
        lambda s: s.createDataFrame([(1, "ams")], "id bigint, city string"),
        "upsert",
        SchemaMismatchError,
        "missing column",
    ),
    "extra column": (
        lambda s: to_df(s, [make_row(1, "ams")]).withColumn("color", F.lit("red")),
        "upsert",
        SchemaMismatchError,
        "color",
    ),
    "wrong type": (
        lambda s: to_df(s, [make_row(1, "ams")]).withColumn("id", F.lit("1")),
        "insert",
        SchemaMismatchError,
        "type string",
    ),
    "null key": (
        lambda s: s.createDataFrame([(None, "ams", None, None, None, None)], SCHEMA),
        "upsert",
        InvalidInputError,
        "record key column 'id' is null in 1",
    ),
    "delete without key": (
        lambda s: s.createDataFrame([("ams",)], "city string"),
        "delete",
        SchemaMismatchError,
        "record key column",
    ),
    "insert existing key": (
        lambda s: to_df(s, [make_row(1, "ams", version=3)]),
        "insert",
        InvalidInputError,
        "already exist .*write them as an upsert",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_refused_and_changes_nothing(spark: SparkSession, tmp_path: Path, case: str) -> None:
    location = tmp_path / "t"
    table = create(str(location), spark)
    table.insert(to_df(spark, [make_row(1, "ams"), make_row(2, "ber")]))
    before_files, before_rows = _state(location), contents(str(location))
    make_df, mode, error, message = BAD_INPUTS[case]
    with pytest.raises(error, match=message) as info:
        table.write(make_df(spark), mode)
    assert "\n" not in str(info.value)
    assert _state(location) == before_files
    assert contents(str(location)) == before_rows
    assert not (location / LOCK_FILE).exists()


def test_unknown_table_and_corrupt_table_json(spark: SparkSession, tmp_path: Path) -> None:
    with pytest.raises(TableNotFoundError, match="no lakeprune table"):
        LakepruneTable(str(tmp_path / "nowhere"), spark)
    location = tmp_path / "t"
    table = create(str(location), spark)
    (location / TABLE_JSON).write_text('{"format_version": 1, "name": "t", "schema": [')
    before = _state(location)
    with pytest.raises(TableCorruptError, match=r"table\.json is corrupt"):
        table.upsert(to_df(spark, [make_row(1, "ams")]))
    assert _state(location) == before
