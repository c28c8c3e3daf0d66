"""Predicate shapes: from a TupleDomain (a virtual column is its expression), a text condition,
and the conditions over computed values no index holds; literal values only when asked."""

from __future__ import annotations

from pruner.advisor.shapes import (
    MAX_LITERALS,
    Operation,
    Shape,
    condition_shapes,
    domain_shapes,
    text_shapes,
    unindexed_conditions,
)
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.sql import text_condition
from pruner.predicate.tuple_domain import TupleDomain
from pruner.types import TableSchema

SCHEMA = TableSchema.parse("id bigint, customer bigint, ts timestamp, note string")
TYPES = {c.name: c.type for c in SCHEMA.columns}


def test_a_tuple_domain_has_one_shape_per_constrained_column() -> None:
    domain = TupleDomain.with_domains(
        {
            "id": Domain.single_value(7),
            "customer": Domain.multiple_values([1, 2, 3]),
            "ts_hour": Domain.single_value(3),
            "note": Domain.only_null(),
            "x": Domain.of(SortedRangeSet.of_ranges(Range.greater_than_or_equal(5)), False),
            "y": Domain.not_null(),
        }
    )
    shapes = domain_shapes(domain, {"ts_hour": "hour(ts)"}, keep_literals=False)
    assert sorted(shapes) == sorted(
        [
            Shape("id", Operation.EQUAL, values=1),
            Shape("customer", Operation.EQUAL, values=3),
            Shape("hour(ts)", Operation.EQUAL, expression=True, values=1),
            Shape("note", Operation.NULL),
            Shape("x", Operation.RANGE),
        ]
    )
    assert domain_shapes(TupleDomain.none(), {}, keep_literals=True) == []


def test_literals_are_kept_only_when_asked_and_bounded() -> None:
    domain = TupleDomain.with_domains({"customer": Domain.multiple_values(list(range(100)))})
    assert domain_shapes(domain, {}, keep_literals=False)[0].literals == ()
    kept = domain_shapes(domain, {}, keep_literals=True)[0]
    assert kept.values == 100 and kept.literals == tuple(str(v) for v in range(MAX_LITERALS))


def test_text_shapes_are_infix_fragments_and_words_not_prefixes() -> None:
    condition = text_condition(
        "note LIKE '%zeta-42%' AND note LIKE 'order%' AND lower(note) LIKE '%ok%' "
        "AND text_match(note, 'ref')",
        SCHEMA,
    ).condition
    shapes = text_shapes(condition, keep_literals=True)
    assert Shape("note", Operation.TEXT, False, 0, 7, ("zeta-42",)) in shapes
    assert Shape("lower(note)", Operation.TEXT, True, 0, 2, ("ok",)) in shapes
    assert Shape("note", Operation.TEXT, False, 0, 0, ("ref",)) in shapes
    assert not any(s.literals == ("order",) for s in shapes)  # a prefix: a range, not text


def test_unindexed_conditions_are_the_comparisons_of_computed_values_no_index_holds() -> None:
    where = (
        "hour(ts) = 3 AND customer = 1 AND year(ts) IN (2025, 2026) AND day_of_week(ts) > 5 AND id + 1 < 9"
    )
    found = unindexed_conditions(where, TYPES, {"year(ts)": "ts_year"})
    # year(ts) is indexed, customer a column, day_of_week no function an index could hold
    assert set(found) == {"HOUR(ts) = 3", "id + 1 < 9"}
    assert sorted(condition_shapes(found, TYPES, keep_literals=True)) == [
        Shape("1 + id", Operation.RANGE, True, 0, 0, ("id + 1 < 9",)),
        Shape("hour(ts)", Operation.EQUAL, True, 1, 0, ("3",)),
    ]
    assert unindexed_conditions("not sql at all (", TYPES, {}) == ()
    assert condition_shapes(["not sql ("], TYPES, keep_literals=False) == []


def test_shapes_round_trip_through_json() -> None:
    shape = Shape("hour(ts)", Operation.EQUAL, True, 2, 0, ("1", "2"))
    assert Shape.from_json(shape.to_json()) == shape
    assert Shape.from_json(Shape("a", Operation.RANGE).to_json()) == Shape("a", Operation.RANGE)
