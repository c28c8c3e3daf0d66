"""pruner.predicate.domain, `SortedRangeSet`: its canonical form, the Boolean-algebra laws of sets
(one test per law), and membership consistency of every operation over ints, strings and floats
(with NaN and infinities), with its shape predicates and discrete values."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pruner.predicate.domain import SortedRangeSet
from pruner.predicate.ranges import Range
from tests.pruner.predicate.domain_strategies import ALL, NONE, range_sets, s
from tests.pruner.predicate.test_ranges import KINDS, LAWS, NAN, PROBES, VALUES, r, ranges


def sets_of(kind: str, data: st.DataObject, count: int) -> list[SortedRangeSet]:
    return [data.draw(range_sets(VALUES[kind])) for _ in range(count)]


# Canonical form ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("built", "canonical"),
    [
        (s("[1,2)", "[2,3]"), s("[1,3]")),
        (s("[1,2]", "(2,3]"), s("[1,3]")),
        (s("[1,3]", "[2,5]"), s("[1,5]")),
        (s("[2,5]", "[1,3]", "7"), s("[1,5]", "7")),
        (s("(-inf,1]", "(0,+inf)"), s("(-inf,+inf)")),
        (s("[1,4]", "2", "3"), s("[1,4]")),
        (s("(1,2)", "2", "(2,3)"), s("(1,3)")),
        (SortedRangeSet.of_values(3, 1, 2, 1), s("1", "2", "3")),
        (SortedRangeSet.of_values(), NONE),
        (SortedRangeSet.of_ranges(), NONE),
        (s("(-inf,+inf)"), ALL),
    ],
)
def test_different_constructions_of_one_set_are_equal(
    built: SortedRangeSet, canonical: SortedRangeSet
) -> None:
    assert built == canonical
    assert hash(built) == hash(canonical)


@pytest.mark.parametrize(
    ("texts", "count"),
    [(("[1,2)", "(2,3]"), 2), (("(1,2)", "(2,3)"), 2), (("1", "2"), 2), (("[1,2)", "[2,3)"), 1)],
)
def test_touching_ranges_merge_only_through_an_inclusive_end(texts: tuple[str, ...], count: int) -> None:
    assert len(s(*texts).ranges) == count


@pytest.mark.parametrize(
    "ranges_",
    [(r("[2,3]"), r("[0,1]")), (r("[0,2]"), r("[1,3]")), (r("[0,1)"), r("[1,3]")), (r("1"), r("1"))],
)
def test_constructor_rejects_non_canonical_ranges(ranges_: tuple[Range, ...]) -> None:
    with pytest.raises(ValueError):
        SortedRangeSet(ranges_)


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_canonical_form_does_not_depend_on_construction_order(kind: str, data: st.DataObject) -> None:
    pieces = data.draw(st.lists(ranges(VALUES[kind]), max_size=5))
    shuffled = data.draw(st.permutations(pieces))
    built = SortedRangeSet.of_ranges(*pieces)
    assert SortedRangeSet.of_ranges(*shuffled) == built
    assert SortedRangeSet(built.ranges) == built
    assert SortedRangeSet.of_ranges(*built.ranges, *pieces) == built


# Set laws ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_set_intersect_is_commutative(kind: str, data: st.DataObject) -> None:
    a, b = sets_of(kind, data, 2)
    assert a.intersect(b) == b.intersect(a)


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_set_union_is_commutative(kind: str, data: st.DataObject) -> None:
    a, b = sets_of(kind, data, 2)
    assert a.union(b) == b.union(a)


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_set_intersect_is_associative(kind: str, data: st.DataObject) -> None:
    a, b, c = sets_of(kind, data, 3)
    assert a.intersect(b).intersect(c) == a.intersect(b.intersect(c))


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_set_union_is_associative(kind: str, data: st.DataObject) -> None:
    a, b, c = sets_of(kind, data, 3)
    assert a.union(b).union(c) == a.union(b.union(c))


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_set_operations_are_idempotent(kind: str, data: st.DataObject) -> None:
    (a,) = sets_of(kind, data, 1)
    assert a.intersect(a) == a
    assert a.union(a) == a


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_set_complement_is_an_involution(kind: str, data: st.DataObject) -> None:
    (a,) = sets_of(kind, data, 1)
    assert a.complement().complement() == a


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_set_de_morgan(kind: str, data: st.DataObject) -> None:
    a, b = sets_of(kind, data, 2)
    assert a.union(b).complement() == a.complement().intersect(b.complement())
    assert a.intersect(b).complement() == a.complement().union(b.complement())


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_set_absorption(kind: str, data: st.DataObject) -> None:
    a, b = sets_of(kind, data, 2)
    assert a.union(a.intersect(b)) == a
    assert a.intersect(a.union(b)) == a


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_set_distributivity(kind: str, data: st.DataObject) -> None:
    a, b, c = sets_of(kind, data, 3)
    assert a.intersect(b.union(c)) == a.intersect(b).union(a.intersect(c))
    assert a.union(b.intersect(c)) == a.union(b).intersect(a.union(c))


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_set_none_and_all_identities(kind: str, data: st.DataObject) -> None:
    (a,) = sets_of(kind, data, 1)
    assert a.intersect(ALL) == a
    assert a.union(NONE) == a
    assert a.intersect(NONE) == NONE
    assert a.union(ALL) == ALL
    assert a.union(a.complement()) == ALL
    assert a.intersect(a.complement()) == NONE


def test_set_complement_table() -> None:
    assert NONE.complement() == ALL
    assert ALL.complement() == NONE
    assert s("[1,3)").complement() == s("(-inf,1)", "[3,+inf)")
    assert s("1", "2").complement() == s("(-inf,1)", "(1,2)", "(2,+inf)")
    assert s("(-inf,0]", "(5,+inf)").complement() == s("(0,5]")


# Membership consistency -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_set_membership_of_intersect_union_and_complement(kind: str, data: st.DataObject) -> None:
    a, b = sets_of(kind, data, 2)
    value = data.draw(PROBES[kind])
    in_a, in_b = a.contains_value(value), b.contains_value(value)
    assert a.intersect(b).contains_value(value) == (in_a and in_b)
    assert a.union(b).contains_value(value) == (in_a or in_b)
    if in_a and in_b:
        assert a.overlaps(b)
    if not (isinstance(value, float) and math.isnan(value)):
        assert a.complement().contains_value(value) == (not in_a)


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_set_membership_agrees_with_the_ranges(kind: str, data: st.DataObject) -> None:
    (a,) = sets_of(kind, data, 1)
    value = data.draw(PROBES[kind])
    assert a.contains_value(value) == any(piece.contains_value(value) for piece in a.ranges)


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_set_overlaps_agrees_with_intersect(kind: str, data: st.DataObject) -> None:
    a, b = sets_of(kind, data, 2)
    assert a.overlaps(b) == b.overlaps(a) == (not a.intersect(b).is_none())


@LAWS
@given(range_sets(VALUES["float"]))
def test_nan_is_in_no_range_set(a: SortedRangeSet) -> None:
    assert not a.contains_value(NAN)
    assert not a.complement().contains_value(NAN)


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_span_contains_every_member(kind: str, data: st.DataObject) -> None:
    (a,) = sets_of(kind, data, 1)
    value = data.draw(PROBES[kind])
    span = a.span()
    assert (span is None) == a.is_none()
    if a.contains_value(value):
        assert span is not None
        assert span.contains_value(value)
    if span is not None:
        assert SortedRangeSet.of_ranges(span).intersect(a) == a


@pytest.mark.parametrize(
    ("built", "is_none", "is_all", "is_single"),
    [
        (NONE, True, False, False),
        (ALL, False, True, False),
        (s("4"), False, False, True),
        (s("4", "5"), False, False, False),
        (s("[4,5]"), False, False, False),
    ],
)
def test_set_shape_predicates(built: SortedRangeSet, is_none: bool, is_all: bool, is_single: bool) -> None:
    assert built.is_none() is is_none
    assert built.is_all() is is_all
    assert built.is_single_value() is is_single


@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=50))
def test_of_integers_is_of_values_in_bulk(integers: list[int]) -> None:
    built = SortedRangeSet.of_integers(np.array(integers, dtype=np.int64))
    assert built == SortedRangeSet.of_values(*integers)
    assert built.discrete_values() == tuple(sorted(set(integers)))
    assert all(type(v) is int for v in built.discrete_values())
    packed = built.discrete_integers()
    assert packed is not None and packed.tolist() == list(built.discrete_values())
    assert not packed.flags.writeable  # the set stays immutable


def test_only_a_set_made_of_packed_integers_has_them_packed() -> None:
    assert SortedRangeSet.of_values(1, 2).discrete_integers() is None
    assert s("[1,3]").discrete_integers() is None
    assert SortedRangeSet.of_integers(np.array([2, 1, 2])).intersect(s("[2,3]")).discrete_integers() is None


def test_discrete_values() -> None:
    assert SortedRangeSet.of_values("b", "a").discrete_values() == ("a", "b")
    assert s("4").single_value() == 4
    for not_discrete in (NONE, ALL, s("1", "[2,3]")):
        assert not not_discrete.is_discrete()
        with pytest.raises(ValueError):
            not_discrete.discrete_values()
    with pytest.raises(ValueError):
        s("1", "2").single_value()


def test_of_values_rejects_nan() -> None:
    with pytest.raises(ValueError):
        SortedRangeSet.of_values(1.0, NAN)


@given(
    st.one_of(
        st.lists(st.integers(-(2**63), 2**63 - 1), max_size=30),
        st.lists(st.text(max_size=3), max_size=30),
        st.lists(st.floats(allow_nan=False), max_size=30),
        st.lists(st.one_of(st.integers(-3, 3), st.booleans()), max_size=8),
    )
)
def test_of_values_builds_the_set_the_checked_ranges_make(values: list[object]) -> None:
    """IN lists take a way without per-range checks; it yields the canonical set of `of_ranges`."""
    fast = SortedRangeSet.of_values(*values)  # type: ignore[arg-type]
    checked = SortedRangeSet.of_ranges(*(Range.equal(v) for v in values))  # type: ignore[arg-type]
    assert fast == checked
    assert SortedRangeSet(fast.ranges) == fast  # the constructor's canonical-form check holds


@pytest.mark.parametrize("values", [(1.0, math.nan), (math.nan,), (None,), (1, None)])
def test_of_values_refuses_nan_and_none(values: tuple[object, ...]) -> None:
    with pytest.raises(ValueError):
        SortedRangeSet.of_values(*values)  # type: ignore[arg-type]


@given(
    st.lists(st.integers(-50, 50), min_size=1, max_size=30),
    st.lists(st.tuples(st.integers(-60, 60), st.integers(0, 20), st.booleans(), st.booleans()), max_size=5),
)
def test_a_list_of_values_answers_as_its_ranges_would(
    values: list[int], spans: list[tuple[int, int, bool, bool]]
) -> None:
    """A set made of values keeps them as values and makes its ranges only when asked for; every
    question it answers from the values has the answer its ranges give."""
    listed = SortedRangeSet.of_values(*values)
    as_ranges = SortedRangeSet(SortedRangeSet.of_values(*values).ranges)
    other = SortedRangeSet.of_ranges(
        *(r for low, width, li, hi in spans if (r := Range.between(low, li, low + width, hi)) is not None)
    )
    assert listed.range_count() == len(as_ranges.ranges)
    assert listed.span() == as_ranges.span()
    assert listed.is_single_value() == as_ranges.is_single_value()
    assert not listed.is_all() and not listed.is_none()
    for probe in range(-52, 53):
        assert listed.contains_value(probe) == as_ranges.contains_value(probe)
    assert listed.intersect(other) == as_ranges.intersect(other) == other.intersect(listed)
    assert hash(listed) == hash(as_ranges) and listed == as_ranges
    assert pickle.loads(pickle.dumps(listed)) == listed


def test_a_range_set_is_immutable() -> None:
    values = SortedRangeSet.of_values(1, 2)
    with pytest.raises(AttributeError):
        values.ranges = ()  # type: ignore[misc]
    assert values.ranges == (Range.equal(1), Range.equal(2))
