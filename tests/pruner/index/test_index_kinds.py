"""pruner.index.kinds: the registry maps every index type to the kind implementing it, and each
kind names, specifies and fills its partition as the definitions and specs did before the kinds
existed (partition names, requirements, what a removed file leaves behind)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from pruner.errors import InvalidInputError
from pruner.format.config import TableConfig
from pruner.index.defining import define
from pruner.index.definitions import FunctionalKind, IndexDefinition, IndexType
from pruner.index.kinds import Leftover, kind_of, partition_of, required_by
from pruner.index.specs import rows_for_file, spec_for
from pruner.types import TableSchema

CONFIG = TableConfig(
    "t", TableSchema.parse("id bigint, city string, ts timestamp"), ("id",), partition_fields=("city",)
)
# index type -> (name, USING, columns, expression)
DEFINED = {
    IndexType.COLUMN_STATS: ("stats", "column_stats", [], None),
    IndexType.PARTITION_STATS: ("pstats", "partition_stats", [], None),
    IndexType.BLOOM_FILTERS: ("blooms", "bloom_filters", ["city"], None),
    IndexType.SECONDARY_INDEX: ("by_city", "secondary_index", ["city"], None),
    IndexType.FUNCTIONAL: ("hour", None, [], "hour(ts)"),
    IndexType.TEXT: ("city_text", "text", [], "lower(city)"),
}
PARTITIONS = {
    IndexType.COLUMN_STATS: "column_stats",
    IndexType.PARTITION_STATS: "partition_stats",
    IndexType.BLOOM_FILTERS: "bloom_filters",
    IndexType.SECONDARY_INDEX: "secondary_index_by_city",
    IndexType.FUNCTIONAL: "func_index_hour",
    IndexType.TEXT: "text_index_city_text",
}
LEFTOVERS = {
    IndexType.COLUMN_STATS: Leftover.TOMBSTONES,
    IndexType.PARTITION_STATS: Leftover.REAGGREGATE,
    IndexType.BLOOM_FILTERS: Leftover.TOMBSTONES,
    IndexType.SECONDARY_INDEX: Leftover.NOTHING,
    IndexType.FUNCTIONAL: Leftover.TOMBSTONES,
    IndexType.TEXT: Leftover.TOMBSTONES,
}


def _define(index_type: IndexType) -> IndexDefinition:
    name, using, columns, expression = DEFINED[index_type]
    return define(CONFIG, [], name, using, columns, {}, expression)


@pytest.mark.parametrize("index_type", list(IndexType))
def test_every_type_has_its_kind(index_type: IndexType) -> None:
    assert kind_of(index_type).index_type == index_type


@pytest.mark.parametrize("index_type", list(IndexType))
def test_kind_names_the_partition_as_the_definition_does(index_type: IndexType) -> None:
    definition = _define(index_type)
    kind = kind_of(index_type)
    assert kind.partition_name(definition) == PARTITIONS[index_type] == partition_of(definition)
    assert spec_for(definition, CONFIG.properties, CONFIG.schema).name == PARTITIONS[index_type]
    assert kind.leftover(definition) == LEFTOVERS[index_type]


def test_only_partition_stats_requires_another_kind() -> None:
    assert {t: kind_of(t).requires for t in IndexType if kind_of(t).requires} == {
        IndexType.PARTITION_STATS: (IndexType.COLUMN_STATS,)
    }


def test_a_value_list_leaves_its_previous_rows_to_the_bucket_tasks() -> None:
    definition = define(CONFIG, [], "hours", "value_list", [], {}, "hour(ts)")
    assert definition.kind == FunctionalKind.VALUE_LIST
    assert kind_of(IndexType.FUNCTIONAL).leftover(definition) == Leftover.PREVIOUS
    spec = spec_for(definition, CONFIG.properties, CONFIG.schema)
    assert "value" in spec.key_fields


ROWS = pa.table(
    {
        "id": pa.array([1, 2, 3], pa.int64()),
        "city": ["a", "b", None],
        "ts": pa.array([0, 3_600_000_000, None], pa.timestamp("us")),
    }
)


def test_rows_for_file_holds_the_per_file_kinds_only() -> None:
    rows = ROWS
    definitions = [_define(t) for t in IndexType]
    out = rows_for_file(rows, CONFIG.schema, definitions, "city=a", "f.parquet")
    assert set(out) == {"column_stats", "bloom_filters", "func_index_hour", "text_index_city_text"}
    for definition in definitions:
        if partition_of(definition) in out:
            spec = spec_for(definition, CONFIG.properties, CONFIG.schema)
            assert set(spec.key_fields) <= set(out[partition_of(definition)].column_names)


@pytest.mark.parametrize("index_type", list(IndexType))
def test_a_kind_computes_its_rows_from_the_columns_it_reads(index_type: IndexType) -> None:
    definition = _define(index_type)
    kind = kind_of(index_type)
    spec = spec_for(definition, CONFIG.properties, CONFIG.schema)
    read = ROWS.select(list(kind.reads(definition, CONFIG.record_key)))

    def built(rows: pa.Table) -> pa.Table | None:
        per_file = kind.file_rows(rows, CONFIG.schema, definition, "city=a", "f.parquet")
        if per_file is not None:
            return per_file
        return kind.file_group_changes(None, rows, definition, CONFIG.record_key, spec, full=True)

    assert built(read) == built(ROWS)


@pytest.mark.parametrize("index_type", list(IndexType))
def test_only_kinds_that_leave_nothing_ship_pair_changes(index_type: IndexType) -> None:
    definition = _define(index_type)
    kind = kind_of(index_type)
    spec = spec_for(definition, CONFIG.properties, CONFIG.schema)
    changes = kind.file_group_changes(None, ROWS, definition, CONFIG.record_key, spec, full=True)
    if kind.leftover(definition) != Leftover.NOTHING:
        assert changes is None
        return
    assert changes is not None
    assert kind.file_rows(ROWS, CONFIG.schema, definition, "city=a", "f.parquet") is None
    assert changes.num_rows == 2  # a pair per row whose value is not NULL, all upserted
    emptied = kind.file_group_changes(ROWS, ROWS.slice(0, 0), definition, CONFIG.record_key, spec, full=False)
    assert emptied is not None and emptied.num_rows == 2  # the group's pairs, deleted


@pytest.mark.parametrize("index_type", list(IndexType))
def test_a_removed_files_tombstones_name_every_row_it_contributed(index_type: IndexType) -> None:
    definition = _define(index_type)
    kind = kind_of(index_type)
    rows = kind.file_rows(ROWS, CONFIG.schema, definition, "city=a", "f.parquet")
    if kind.leftover(definition) != Leftover.TOMBSTONES:
        return
    assert rows is not None
    assert set(rows.column("column").to_pylist()) == set(kind.column_keys(definition))


def test_required_by_finds_the_index_of_each_required_type() -> None:
    stats = _define(IndexType.COLUMN_STATS)
    pstats = _define(IndexType.PARTITION_STATS)
    assert required_by(pstats, [stats, pstats]) == {IndexType.COLUMN_STATS: stats}
    assert required_by(pstats, [pstats]) == {IndexType.COLUMN_STATS: None}
    assert required_by(stats, [stats, pstats]) == {}


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        (["city", "ts"], None),
        (["city", "ts", "id", "city2", "n"], "covers 1 to 4 columns"),
        (["id", "k2"], "is the record key"),
    ],
)
def test_a_secondary_index_takes_one_to_four_columns_but_not_the_record_key(
    columns: list[str], message: str | None
) -> None:
    config = TableConfig(
        "t",
        TableSchema.parse("id bigint, k2 int, city string, city2 string, n int, ts timestamp"),
        ("id", "k2"),
    )
    if message is None:
        definition = define(config, [], "s", "secondary_index", columns, {}, None)
        assert definition.columns == tuple(columns)
        spec = spec_for(definition, config.properties, config.schema)
        assert spec.schema.field("secondary_key").type == pa.string()
        return
    with pytest.raises(InvalidInputError, match=message):
        define(config, [], "s", "secondary_index", columns, {}, None)
