"""builder.create: an explicit table name follows the naming rule; without one the name is derived
from the directory (which may hold characters the rule refuses); a refused name writes nothing;
names stored before the rule existed still load; of two creators at once, one gets TableExistsError."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import builder.create
from builder.create import create_table, default_name
from pruner.errors import InvalidInputError, InvalidNameError, TableExistsError
from pruner.format.config import TableConfig
from pruner.format.layout import TABLE_JSON
from pruner.identifiers import MAX_IDENTIFIER_LENGTH, check_identifier
from pruner.storage import Storage
from pruner.table.table import LakeTable

SCHEMA = "id bigint, city string"


@pytest.mark.parametrize(
    ("directory", "expected"),
    [
        ("trips", "trips"),
        ("trips-2024", "trips_2024"),
        ("Trips 2024 (old)", "trips_2024_old_"),
        ("2024", "t_2024"),
        ("_lp_x", "t__lp_x"),
        ("caf\u00e9", "caf_"),
        ("\uff54rips", "_rips"),  # full-width 't'
        ("", "table"),
        ("x" * 250, "x" * MAX_IDENTIFIER_LENGTH),
    ],
)
def test_default_name_is_derived_from_the_directory(directory: str, expected: str) -> None:
    assert default_name(directory) == expected
    check_identifier(expected, "table")


def test_create_derives_or_checks_the_name(tmp_path: Path) -> None:
    assert create_table(str(tmp_path / "my-trips"), SCHEMA, "id").name == "my_trips"
    assert create_table(str(tmp_path / "b"), SCHEMA, "id", name="a" * MAX_IDENTIFIER_LENGTH).name == "a" * 128
    for name, message in [
        ("a" * (MAX_IDENTIFIER_LENGTH + 1), "too long"),
        ("My-Trips", "not allowed"),
        ("t\u0456ps", "non-ASCII"),
        ("_lp_t", "reserved prefix"),
        ("", "must not be empty"),
    ]:
        location = tmp_path / f"refused_{len(list(tmp_path.iterdir()))}"
        with pytest.raises(InvalidNameError, match=message):
            create_table(str(location), SCHEMA, "id", name=name)
        assert not location.exists(), "nothing written"


def test_a_location_that_cannot_exist(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"cannot create a table at .*File name too long"):
        create_table(str(tmp_path / ("a" * 300)), SCHEMA, "id")


def test_a_name_stored_before_the_rule_still_loads(tmp_path: Path) -> None:
    """The table name is a label, never part of a path: an old `my-trips` must keep working."""
    location = tmp_path / "my-trips"
    create_table(str(location), SCHEMA, "id")
    config = json.loads((location / TABLE_JSON).read_text())
    config["name"] = "my-trips"
    (location / TABLE_JSON).write_text(json.dumps(config))
    assert LakeTable.open(str(location)).config.name == "my-trips"


def test_two_creators_at_once_one_gets_table_exists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both find the location empty; the second one's create of `table.json` finds the first's."""
    location = tmp_path / "trips"
    real = builder.create.create_config

    def rival_first(storage: Storage, config: TableConfig) -> bool:
        assert real(storage, dataclasses.replace(config, name="rival"))
        return real(storage, config)

    monkeypatch.setattr(builder.create, "create_config", rival_first)
    with pytest.raises(TableExistsError, match="a lakeprune table already exists at"):
        create_table(str(location), SCHEMA, record_key="id", name="mine")
    assert json.loads((location / TABLE_JSON).read_text())["name"] == "rival"
