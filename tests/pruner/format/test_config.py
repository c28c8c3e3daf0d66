"""pruner.format.config: table.json round trip, validation, and load errors."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pruner.errors import InvalidInputError, InvalidSchemaError, TableCorruptError, TableNotFoundError
from pruner.format.config import (
    ADOPTED_FORMAT_VERSION,
    EVOLVED_FORMAT_VERSION,
    FORMAT_VERSION,
    EarlierPartitioning,
    TableConfig,
    TableProperties,
    load_config,
    save_config,
)
from pruner.format.layout import TABLE_JSON
from pruner.storage import Storage
from pruner.types import TableSchema

SCHEMA = TableSchema.parse(
    "id bigint not null, region string, city string, amount decimal(10,2), score double, "
    "ts timestamp, day date, ok boolean"
)


def _config(**overrides: Any) -> TableConfig:
    values: dict[str, Any] = {
        "name": "trips",
        "schema": SCHEMA,
        "record_key": ("id",),
        "partition_fields": ("region", "day"),
        "ordering_field": "ts",
        "properties": TableProperties(write_target_file_size_bytes=1000, write_small_file_limit_bytes=500),
    }
    values.update(overrides)
    return TableConfig(**values)


def _valid_json() -> dict[str, Any]:
    return json.loads(json.dumps(_config().to_json()))  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "config",
    [
        _config(),
        _config(record_key=("region", "id"), partition_fields=(), ordering_field=None),
        _config(record_key=("amount",), ordering_field="score", properties=TableProperties()),
    ],
)
def test_json_round_trip(config: TableConfig) -> None:
    data = json.loads(json.dumps(config.to_json()))
    assert data["format_version"] == FORMAT_VERSION
    assert TableConfig.from_json(data) == config


def test_properties_use_dotted_names() -> None:
    data = TableProperties(index_record_index_buckets=32).to_json()
    assert data["index.record_index_buckets"] == 32
    assert data["write.target_file_size_bytes"] == 128 * 1024 * 1024
    assert TableProperties.from_json({"clean.retain_commits": "3"}) == TableProperties(clean_retain_commits=3)


def test_with_overrides() -> None:
    properties = TableProperties(index_files_buckets=8)
    changed = properties.with_overrides({"index.compaction_max_log_files": 2})
    assert changed == TableProperties(index_files_buckets=8, index_compaction_max_log_files=2)
    with pytest.raises(InvalidSchemaError, match="unknown table property"):
        properties.with_overrides({"index.nope": 1})


def test_save_and_load(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    config = _config()
    save_config(storage, config)
    assert load_config(storage) == config
    assert [e.rel for e in storage.list_files(".lakeprune")] == [TABLE_JSON]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"record_key": ("nope",)}, "record key column 'nope' is not in the schema"),
        ({"record_key": ("score",)}, "record key column 'score' has type double"),
        ({"record_key": ("ok",)}, "record key column 'ok' has type boolean"),
        ({"record_key": ()}, "record key column is required"),
        ({"record_key": ("id", "id")}, "record key columns must be distinct"),
        ({"partition_fields": ("score",)}, "partition column 'score' has type double"),
        ({"partition_fields": ("amount",)}, "partition column 'amount' has type decimal"),
        ({"partition_fields": ("ts",)}, "partition column 'ts' has type timestamp"),
        ({"partition_fields": ("nope",)}, "partition column 'nope' is not in the schema"),
        ({"partition_fields": ("region", "region")}, "partition columns must be distinct"),
        ({"ordering_field": "ok"}, "ordering column 'ok' has type boolean"),
        ({"ordering_field": "nope"}, "ordering column 'nope' is not in the schema"),
        ({"name": ""}, "table name must not be empty"),
    ],
)
def test_config_validation(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidSchemaError, match=message):
        _config(**overrides)


def test_float_record_key_is_rejected() -> None:
    schema = TableSchema.parse("f float, id bigint")
    with pytest.raises(InvalidSchemaError, match="record key column 'f' has type float"):
        TableConfig("t", schema, ("f",))


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ({"write.nope": 1}, "unknown table property 'write.nope'"),
        ({"write_target_file_size_bytes": 1}, "unknown table property"),
        ({"index.files_buckets": "many"}, "property index.files_buckets must be an integer, got 'many'"),
        ({"index.files_buckets": None}, "must be an integer"),
        ({"index.files_buckets": [4]}, "must be an integer"),
        ({"index.files_buckets": 0}, "property index.files_buckets must be >= 1"),
        ({"clean.retain_commits": -1}, "property clean.retain_commits must be >= 1"),
        (
            {"write.target_file_size_bytes": 100, "write.small_file_limit_bytes": 101},
            "write.small_file_limit_bytes must not exceed write.target_file_size_bytes",
        ),
    ],
)
def test_property_validation(properties: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidSchemaError, match=message):
        TableProperties.from_json(properties)


def test_small_file_limit_may_equal_target() -> None:
    properties = TableProperties(write_target_file_size_bytes=100, write_small_file_limit_bytes=100)
    assert properties.write_small_file_limit_bytes == 100


def test_unsupported_format_version() -> None:
    data = _valid_json()
    data["format_version"] = ADOPTED_FORMAT_VERSION + 1
    with pytest.raises(InvalidSchemaError, match="unsupported format_version 4"):
        TableConfig.from_json(data)


def test_evolved_partitioning_round_trips_as_format_version_2() -> None:
    evolved = _config().with_partitioning(("region",), "20260101000000000")
    assert evolved.partition_fields == ("region",)
    assert evolved.partition_history == (EarlierPartitioning(("region", "day"), "20260101000000000"),)
    again = evolved.with_partitioning((), None).with_partitioning(("city", "region"), None)
    assert again.all_partition_fields == ("city", "region", "day")
    data = json.loads(json.dumps(again.to_json()))
    assert data["format_version"] == EVOLVED_FORMAT_VERSION
    assert data["partition_history"][0] == {"fields": ["region", "day"], "until": "20260101000000000"}
    assert TableConfig.from_json(data) == again
    assert "partition_history" not in _valid_json()  # unevolved tables stay readable as version 1


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        (("region", "day"), InvalidInputError, "trips is already partitioned by region, day; nothing"),
        (("nope",), InvalidSchemaError, "partition column 'nope' is not in the schema"),
        (("ts",), InvalidSchemaError, "partition column 'ts' has type timestamp"),
        (("city", "city"), InvalidSchemaError, "partition columns must be distinct"),
    ],
)
def test_bad_partitioning_changes(fields: tuple[str, ...], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        _config().with_partitioning(fields, None)
    with pytest.raises(InvalidInputError, match="is already unpartitioned"):
        _config(partition_fields=()).with_partitioning((), None)


@pytest.mark.parametrize(
    ("change", "detail"),
    [
        ({"format_version": EVOLVED_FORMAT_VERSION}, "does not match the partition history (0 entries)"),
        ({"partition_history": [{"fields": ["region"], "until": None}]}, "does not match"),
        (
            {"format_version": 2, "partition_history": [{"fields": ["score"], "until": None}]},
            "partition column 'score' has type double",
        ),
    ],
)
def test_partition_history_is_validated(change: dict[str, Any], detail: str) -> None:
    with pytest.raises(InvalidSchemaError, match=re.escape(detail)):
        TableConfig.from_json({**_valid_json(), **change})


def test_load_missing_table(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path / "nothing"))
    with pytest.raises(TableNotFoundError, match=f"no lakeprune table at {tmp_path}/nothing"):
        load_config(storage)


def _replace(key: str, value: Any) -> bytes:
    data = _valid_json()
    data[key] = value
    return json.dumps(data).encode()


def _without(key: str) -> bytes:
    data = _valid_json()
    del data[key]
    return json.dumps(data).encode()


@pytest.mark.parametrize(
    ("content", "detail"),
    [
        (b"", "Expecting value"),
        (b"\x00\xffgarbage", ""),
        (json.dumps(_config().to_json()).encode()[:40], ""),
        (b"[1, 2, 3]", "not a JSON object"),
        (b'"table"', "not a JSON object"),
        (_without("schema"), "missing field 'schema'"),
        (_without("record_key"), "missing field 'record_key'"),
        (_replace("schema", {"id": "bigint"}), "schema must be a list"),
        (_replace("schema", [{"type": "bigint"}]), "missing field 'name'"),
        (_replace("record_key", 5), "not iterable"),
        (_replace("record_key", ["score"]), "has type double"),
        (_replace("properties", {"write.nope": 1}), "unknown table property"),
        (_replace("properties", ["write.row_group_bytes"]), "properties must be an object"),
        (_replace("format_version", None), "unsupported format_version None"),
    ],
)
def test_load_corrupt_table_json(tmp_path: Path, content: bytes, detail: str) -> None:
    storage = Storage.from_uri(str(tmp_path))
    storage.write_bytes(TABLE_JSON, content)
    with pytest.raises(TableCorruptError) as info:
        load_config(storage)
    message = str(info.value)
    assert message.startswith(f"{tmp_path}/{TABLE_JSON} is corrupt: ")
    assert detail in message
    assert "\n" not in message


def test_adopted_table_is_format_version_3_and_round_trips() -> None:
    config = TableConfig(
        "t", TableSchema.parse("id bigint, city string"), ("id",), ("city",), path_columns_in_files=False
    )
    data = config.to_json()
    assert data["format_version"] == ADOPTED_FORMAT_VERSION and data["path_columns_in_files"] is False
    assert TableConfig.from_json(data) == config
    plain = TableConfig("t", TableSchema.parse("id bigint, city string"), ("id",), ("city",)).to_json()
    assert "path_columns_in_files" not in plain and plain["format_version"] == FORMAT_VERSION


def test_adopted_flag_and_format_version_must_agree_and_partitioning_cannot_evolve() -> None:
    config = TableConfig(
        "t", TableSchema.parse("id bigint, city string"), ("id",), ("city",), path_columns_in_files=False
    )
    with pytest.raises(InvalidSchemaError, match="does not match path_columns_in_files"):
        TableConfig.from_json({**config.to_json(), "format_version": FORMAT_VERSION})
    with pytest.raises(InvalidSchemaError, match="does not match path_columns_in_files"):
        TableConfig.from_json({**config.to_json(), "path_columns_in_files": True})
    with pytest.raises(InvalidInputError, match="was adopted"):
        config.with_partitioning((), "20260101000000000")
