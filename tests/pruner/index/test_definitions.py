"""pruner.index.definitions: index names follow the shared naming rule for every index type, and a
definition stored before the rule existed (a name too long for a directory) is refused wherever its
partition would be used, with the way out, instead of failing on storage."""

from __future__ import annotations

import pytest

from pruner.errors import InvalidInputError, InvalidNameError
from pruner.format.config import TableConfig
from pruner.identifiers import MAX_IDENTIFIER_LENGTH
from pruner.index.defining import define
from pruner.index.definitions import IndexDefinition, IndexType
from pruner.index.kinds import partition_of
from pruner.index.specs import spec_for
from pruner.types import TableSchema

CONFIG = TableConfig(
    "t", TableSchema.parse("id bigint, city string, ts timestamp"), ("id",), partition_fields=("city",)
)
# (index type, columns, expression) for each kind of index a name is given to.
KINDS = {
    "column_stats": ("column_stats", [], None),
    "partition_stats": ("partition_stats", [], None),
    "bloom_filters": ("bloom_filters", ["city"], None),
    "secondary_index": ("secondary_index", ["city"], None),
    "secondary_index (RFC-77 syntax)": (None, ["city"], None),
    "functional": (None, [], "hour(ts)"),
    "functional value_list": ("value_list", [], "hour(ts)"),
    "secondary_index over an expression": ("secondary_index", [], "lower(city)"),
}


def _define(kind: str, name: str) -> IndexDefinition:
    index_type, columns, expression = KINDS[kind]
    return define(CONFIG, [], name, index_type, columns, {}, expression)


@pytest.mark.parametrize("kind", KINDS)
def test_every_index_type_accepts_names_up_to_the_limit(kind: str) -> None:
    name = "i" * MAX_IDENTIFIER_LENGTH
    definition = _define(kind, name)
    assert definition.name == name
    spec_for(definition, CONFIG.properties, CONFIG.schema)  # usable
    assert len(partition_of(definition).encode()) < 255


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("i" * (MAX_IDENTIFIER_LENGTH + 1), "too long"),
        ("a" * 100_000, r"…\(100,000 chars\) is too long"),
        ("\uff43ity_idx", "non-ASCII"),  # full-width 'c', accepted by str.isidentifier()
        ("idx_c\u0456ty", "non-ASCII"),  # Cyrillic look-alike of 'i'
        ("Idx", "'I' at position 0"),
        ("9idx", "'9' at position 0"),
        ("_lp_idx", "reserved prefix"),
    ],
)
def test_every_index_type_refuses_bad_names(kind: str, name: str, message: str) -> None:
    with pytest.raises(InvalidNameError, match=message) as raised:
        _define(kind, name)
    assert str(raised.value).startswith("index name")


@pytest.mark.parametrize("name", ["files", "record_index"])
def test_built_in_names_stay_reserved(name: str) -> None:
    with pytest.raises(InvalidInputError, match="already exists"):
        _define("column_stats", name)


@pytest.mark.parametrize(
    ("index_type", "columns"),
    [(IndexType.SECONDARY_INDEX, ("city",)), (IndexType.FUNCTIONAL, ("ts",)), (IndexType.COLUMN_STATS, ())],
)
def test_a_stored_definition_with_a_bad_name_has_no_usable_partition(
    index_type: IndexType, columns: tuple[str, ...]
) -> None:
    """As written to index_defs.json before names were checked: loads, but every reader and writer
    of its partition (they all go through `spec_for`) stops with the way out."""
    stored = IndexDefinition.from_json(
        {
            "name": "a" * 100_000,
            "type": str(index_type),
            "columns": list(columns),
            "expression": "hour(ts)" if index_type == IndexType.FUNCTIONAL else None,
            "state": "ready",
        }
    )
    with pytest.raises(InvalidInputError, match="cannot be used: drop it") as raised:
        spec_for(stored, CONFIG.properties, CONFIG.schema)
    assert len(str(raised.value)) < 300


def test_an_unusable_functional_index_has_no_virtual_column() -> None:
    """Reading the table's metadata or a predicate must not fail on it (pruning keeps working)."""
    from pruner.index.functional import sql_context, virtual_columns

    good = _define("functional", "hour_of_day")
    stored = IndexDefinition.from_json({**good.to_json(), "name": "h" * 300})
    assert good.usable and not stored.usable
    assert [v.name for v in virtual_columns(CONFIG.schema, [good, stored])] == ["hour_of_day"]
    schema, calls = sql_context(CONFIG.schema, [good, stored])
    assert schema.names == ["id", "city", "ts", "hour_of_day"] and list(calls.values()) == ["hour_of_day"]


def test_the_rfc_spellings_are_synonyms() -> None:
    """RFC-63's `col_stats` and `CREATE FUNCTION INDEX` define what `column_stats` and
    `CREATE INDEX ... (expression)` do."""
    from pruner.index.sql import CreateIndex, parse_statement

    assert define(CONFIG, [], "s", "COL_STATS", [], {}) == define(CONFIG, [], "s", "column_stats", [], {})
    statement = parse_statement("CREATE FUNCTION INDEX hour_of_day ON t USING col_stats (hour(ts))")
    assert isinstance(statement, CreateIndex) and statement.expression == "hour(ts)"
    functional = define(CONFIG, [], statement.name, statement.index_type, [], {}, statement.expression)
    assert functional == define(CONFIG, [], "hour_of_day", None, [], {}, "hour(ts)")
    with pytest.raises(InvalidInputError, match="CREATE FUNCTION INDEX is over an expression"):
        parse_statement("CREATE FUNCTION INDEX h ON t (ts)")


def test_expression_formats() -> None:
    """A definition saved before formats were recorded reads as format 1 (one call over one
    column, which format 2 reads too); one of a newer format than this lakeprune reads has no
    virtual column and stops whatever would use its partition with the way out."""
    from pruner.functions import EXPRESSION_FORMAT
    from pruner.index.functional import virtual_columns

    good = _define("functional", "hour_of_day")
    assert good.to_json()["expression_format"] == EXPRESSION_FORMAT
    legacy = IndexDefinition.from_json({k: v for k, v in good.to_json().items() if k != "expression_format"})
    assert legacy.expression_format == 1 and legacy.usable
    assert [v.expression.sql() for v in virtual_columns(CONFIG.schema, [legacy])] == ["hour(ts)"]
    newer = IndexDefinition.from_json({**good.to_json(), "expression_format": EXPRESSION_FORMAT + 1})
    assert not newer.usable
    assert virtual_columns(CONFIG.schema, [newer]) == []
    with pytest.raises(InvalidInputError, match="newer lakeprune wrote"):
        newer.check_usable()


def test_an_expression_over_two_columns_is_on_both() -> None:
    tree = define(CONFIG, [], "h", None, [], {}, "hour(ts) * 100 + length(city)")
    assert tree.columns == ("city", "ts")
    assert tree.expression == "(100 * hour(ts)) + length(city)"


def test_a_secondary_index_over_an_expression() -> None:
    definition = define(CONFIG, [], "by_key", "secondary_index", [], {}, "LOWER(city)")
    assert (definition.index_type, definition.columns, definition.expression) == (
        IndexType.SECONDARY_INDEX,
        ("city",),
        "lower(city)",
    )
    # over the record key too: the record index does not index lower(id)
    assert define(CONFIG, [], "id_text", "secondary_index", [], {}, "id * 2").columns == ("id",)
    with pytest.raises(InvalidInputError, match="cannot cover double values"):
        define(CONFIG, [], "half", "secondary_index", [], {}, "CAST(id AS double)")
    with pytest.raises(InvalidInputError, match="would hide column 'city'"):
        define(CONFIG, [], "city", "secondary_index", [], {}, "lower(city)")
