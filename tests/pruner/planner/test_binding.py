"""pruner.planner.prune's binding: the one place size limits apply. A domain of more values or
ranges than `limits.max_discrete_values` is widened to its span (never refused), every widening
is noted, and nothing within the limit changes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pruner.errors import InvalidInputError
from pruner.planner.limits import PruneLimits
from pruner.planner.prune import bind_predicate, translate_predicate
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.types import TableSchema

SCHEMA = TableSchema.parse("a bigint, b bigint")


@st.composite
def _domains(draw: st.DrawFn) -> Domain:
    points = sorted(draw(st.sets(st.integers(-1000, 1000), min_size=1, max_size=12)))
    if draw(st.booleans()):
        values = SortedRangeSet.of_values(*points)
    else:  # disjoint ranges between consecutive points
        values = SortedRangeSet.of_ranges(
            *(
                Range(p, True, p, True) if i % 2 else Range(p, False, p + 1, False)
                for i, p in enumerate(points[::2])
            )
        )
    return Domain.of(values, draw(st.booleans()))


@given(st.dictionaries(st.sampled_from(["a", "b"]), _domains(), min_size=1), st.integers(1, 8))
def test_binding_widens_what_exceeds_the_limit_and_notes_it(domains: dict[str, Domain], limit: int) -> None:
    bound = bind_predicate(
        TupleDomain.with_domains(domains), SCHEMA, {}, PruneLimits(max_discrete_values=limit)
    )
    assert bound.domain.domains is not None
    capped = {column for column, domain in domains.items() if len(domain.values.ranges) > limit}
    assert {note.split(":")[0] for note in bound.widened} == capped
    for column, domain in domains.items():
        widened = bound.domain.domains[column]
        assert len(widened.values.ranges) <= limit
        assert widened.union(domain) == widened  # a widening: every value still matches
        if column not in capped:
            assert widened == domain


def test_a_range_set_is_capped_as_an_in_list_is() -> None:
    ranges = SortedRangeSet.of_ranges(
        Range(0, True, 1, False), Range(5, True, 6, False), Range(9, True, 10, True)
    )
    domain = TupleDomain.with_domains({"a": Domain.of(ranges, False)})
    bound = bind_predicate(domain, SCHEMA, {}, PruneLimits(max_discrete_values=2))
    assert bound.domain == TupleDomain.with_domains(
        {"a": Domain.of(SortedRangeSet.of_ranges(Range(0, True, 10, True)), False)}
    )
    assert bound.widened == (
        "a: 3 ranges exceed limits.max_discrete_values (2); pruned by their span [0, 10] instead",
    )


def test_translation_leaves_the_limits_to_the_sidecar() -> None:
    sql = "a IN (1, 2, 3)"
    assert translate_predicate(sql, SCHEMA, {}).domain.domain("a") == Domain.multiple_values([1, 2, 3])
    assert bind_predicate(sql, SCHEMA, {}, PruneLimits(max_discrete_values=2)).domain.domain(
        "a"
    ) == Domain.of(SortedRangeSet.of_ranges(Range(1, True, 3, True)), False)
    with pytest.raises(InvalidInputError, match="unknown column 'c'"):
        translate_predicate(TupleDomain.with_domains({"c": Domain.single_value(1)}), SCHEMA, {})


def test_text_notes_travel_with_the_text_predicate_not_the_widenings() -> None:
    schema = TableSchema.parse("a bigint, msg string")
    bound = bind_predicate("a = 1 AND msg NOT LIKE '%timeout%'", schema, {})
    assert len(bound.text.notes) == 1 and "NOT LIKE" in bound.text.notes[0]
    # the text index step reports them, where a text index exists
    assert not set(bound.text.notes) & set(bound.widened)
