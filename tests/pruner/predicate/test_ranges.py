"""pruner.predicate.ranges: construction invariants, factories, and membership consistency of
intersect / overlaps / span. The value strategies and `ranges` here are shared with the other
predicate tests."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.predicate.ranges import Range
from pruner.predicate.values import Value

NAN = math.nan
INF = math.inf
LAWS = settings(max_examples=50, deadline=None)

# Value kinds the properties run over: small pools so that bounds and probes collide often.
VALUES: dict[str, st.SearchStrategy[Value]] = {
    "int": st.integers(-6, 6),
    "str": st.text(alphabet="ab\x00é", max_size=3),
    "float": st.sampled_from([-INF, -2.5, -1.0, -0.0, 0.0, 1.0, 2.5, INF])
    | st.floats(-3, 3, allow_nan=False),
}
KINDS = sorted(VALUES)
# Probes additionally include NaN for floats: no range may contain it.
PROBES: dict[str, st.SearchStrategy[Value]] = {**VALUES, "float": VALUES["float"] | st.just(NAN)}


@st.composite
def ranges(draw: st.DrawFn, values: st.SearchStrategy[Value]) -> Range:
    """Any range over `values`: bounded, half-bounded, unbounded or a single value."""
    low = draw(st.none() | values)
    high = draw(st.none() | values)
    if low is not None and high is not None and high < low:  # type: ignore[operator]
        low, high = high, low
    made = Range.between(low, draw(st.booleans()), high, draw(st.booleans()))
    if made is None:  # low == high with an exclusive end
        assert low is not None
        return Range.equal(low)
    return made


_RANGE_RE = re.compile(r"^([\[(])\s*(\S+)\s*,\s*(\S+)\s*([\])])$")


def r(text: str) -> Range:
    """A range over ints from interval notation: `"[1,3)"`, `"(-inf,2]"`, `"(0,+inf)"`, or `"5"`."""
    match = _RANGE_RE.match(text)
    if match is None:
        return Range.equal(int(text))
    opening, low, high, closing = match.groups()
    return Range(
        None if low == "-inf" else int(low),
        opening == "[",
        None if high == "+inf" else int(high),
        closing == "]",
    )


# Factories and invariants ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("made", "expected"),
    [
        (Range.all(), Range(None, False, None, False)),
        (Range.equal(3), Range(3, True, 3, True)),
        (Range.greater_than(3), Range(3, False, None, False)),
        (Range.greater_than_or_equal(3), Range(3, True, None, False)),
        (Range.less_than(3), Range(None, False, 3, False)),
        (Range.less_than_or_equal(3), Range(None, False, 3, True)),
        (Range.between(1, True, 3, False), Range(1, True, 3, False)),
        (Range.between(None, True, 3, True), Range(None, False, 3, True)),
        (Range.between(1, False, None, True), Range(1, False, None, False)),
        (Range.between("a", True, "b", True), Range("a", True, "b", True)),
        (Range.between(2, True, 2, True), Range.equal(2)),
    ],
)
def test_factories(made: Range | None, expected: Range) -> None:
    assert made == expected


@pytest.mark.parametrize(
    ("low", "low_inclusive", "high", "high_inclusive"),
    [
        (3, True, 1, True),
        (2, True, 2, False),
        (2, False, 2, True),
        (2, False, 2, False),
        (1.5, True, -INF, True),
    ],
)
def test_between_returns_none_for_an_empty_range(
    low: Value, low_inclusive: bool, high: Value, high_inclusive: bool
) -> None:
    assert Range.between(low, low_inclusive, high, high_inclusive) is None


@pytest.mark.parametrize(
    ("low", "low_inclusive", "high", "high_inclusive"),
    [
        (NAN, True, 1.0, True),
        (0.0, True, NAN, False),
        (NAN, True, NAN, True),
        (None, True, 1, True),
        (1, True, None, True),
        (3, True, 1, True),
        (2, True, 2, False),
        (2, False, 2, True),
        (1, True, "a", True),
    ],
)
def test_invalid_ranges_are_rejected(
    low: Value | None, low_inclusive: bool, high: Value | None, high_inclusive: bool
) -> None:
    with pytest.raises(ValueError):
        Range(low, low_inclusive, high, high_inclusive)


def test_nan_is_never_a_bound() -> None:
    for factory in (
        Range.equal,
        Range.greater_than,
        Range.greater_than_or_equal,
        Range.less_than,
        Range.less_than_or_equal,
    ):
        with pytest.raises(ValueError):
            factory(NAN)
    with pytest.raises(ValueError):
        Range.between(NAN, True, None, False)


def test_factories_reject_none_as_a_value() -> None:
    with pytest.raises(ValueError):
        Range.greater_than(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "is_all", "is_single"),
    [("(-inf,+inf)", True, False), ("5", False, True), ("[5,5]", False, True), ("[5,6]", False, False)],
)
def test_shape_predicates(text: str, is_all: bool, is_single: bool) -> None:
    assert r(text).is_all() is is_all
    assert r(text).is_single_value() is is_single


def test_single_value() -> None:
    assert Range.equal("x").single_value() == "x"
    for text in ("[1,2]", "(-inf,1]", "(-inf,+inf)"):
        with pytest.raises(ValueError):
            r(text).single_value()


@pytest.mark.parametrize(
    ("text", "inside", "outside"),
    [
        ("[1,3)", [1, 2, 2.999], [0, 3, 4]),
        ("(1,3]", [1.001, 3], [1, 3.5]),
        ("(-inf,0]", [-(10**30), 0], [1]),
        ("(0,+inf)", [10**30], [0, -1]),
        ("(-inf,+inf)", [-(10**30), 0, 10**30], []),
        ("7", [7], [6, 8]),
    ],
)
def test_contains_value(text: str, inside: list[Value], outside: list[Value]) -> None:
    for value in inside:
        assert r(text).contains_value(value), value
    for value in outside:
        assert not r(text).contains_value(value), value


def test_ranges_sort_by_low_bound() -> None:
    expected = [r("(-inf,0]"), r("(-inf,5)"), r("[0,1]"), r("[0,2]"), r("(0,1)"), r("1"), r("(1,+inf)")]
    shuffled = [expected[i] for i in (4, 6, 0, 3, 5, 2, 1)]
    assert sorted(shuffled) == expected


@pytest.mark.parametrize(
    ("a", "b", "intersection", "span"),
    [
        ("[1,3]", "[2,4]", "[2,3]", "[1,4]"),
        ("[1,3)", "[3,4]", None, "[1,4]"),
        ("[1,3]", "[3,4]", "3", "[1,4]"),
        ("(1,3]", "[1,3)", "(1,3)", "[1,3]"),
        ("(-inf,2)", "(0,+inf)", "(0,2)", "(-inf,+inf)"),
        ("1", "5", None, "[1,5]"),
        ("(-inf,+inf)", "7", "7", "(-inf,+inf)"),
    ],
)
def test_intersect_and_span_table(a: str, b: str, intersection: str | None, span: str) -> None:
    expected = None if intersection is None else r(intersection)
    assert r(a).intersect(r(b)) == expected
    assert r(b).intersect(r(a)) == expected
    assert r(a).overlaps(r(b)) is (expected is not None)
    assert r(a).span(r(b)) == r(span)
    assert r(b).span(r(a)) == r(span)


def test_str() -> None:
    assert str(r("[1,3)")) == "[1, 3)"
    assert str(r("(-inf,2]")) == "(-inf, 2]"
    assert str(Range.greater_than("a")) == "('a', +inf)"
    assert str(Range.equal(4)) == "[4]"


# Membership consistency ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_intersect_contains_exactly_the_common_values(kind: str, data: st.DataObject) -> None:
    a, b = data.draw(ranges(VALUES[kind])), data.draw(ranges(VALUES[kind]))
    value = data.draw(PROBES[kind])
    both = a.intersect(b)
    in_both = a.contains_value(value) and b.contains_value(value)
    assert (both is not None and both.contains_value(value)) == in_both
    if in_both:
        assert a.overlaps(b)


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_overlaps_is_symmetric_and_agrees_with_intersect(kind: str, data: st.DataObject) -> None:
    a, b = data.draw(ranges(VALUES[kind])), data.draw(ranges(VALUES[kind]))
    assert a.overlaps(b) == b.overlaps(a) == (a.intersect(b) is not None)
    assert a.intersect(b) == b.intersect(a)


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_span_covers_both_ranges_and_nothing_below_or_above(kind: str, data: st.DataObject) -> None:
    a, b = data.draw(ranges(VALUES[kind])), data.draw(ranges(VALUES[kind]))
    value = data.draw(PROBES[kind])
    span = a.span(b)
    if a.contains_value(value) or b.contains_value(value):
        assert span.contains_value(value)
    assert span == b.span(a)
    assert span.intersect(a) == a
    assert span.intersect(b) == b
    # The span's bounds are the inputs' bounds: it is the smallest covering range.
    assert (span.low, span.low_inclusive) in {(a.low, a.low_inclusive), (b.low, b.low_inclusive)}
    assert (span.high, span.high_inclusive) in {(a.high, a.high_inclusive), (b.high, b.high_inclusive)}


@LAWS
@given(ranges(VALUES["float"]))
def test_no_range_contains_nan(a: Range) -> None:
    assert not a.contains_value(NAN)
    assert not Range.all().contains_value(NAN)


def below(a: Range, value: Value) -> bool:
    """Whether `value` lies below the range's low bound."""
    under = Range.between(None, False, a.low, not a.low_inclusive) if a.low is not None else None
    return under is not None and under.contains_value(value)


@pytest.mark.parametrize("kind", KINDS)
@LAWS
@given(data=st.data())
def test_sorting_agrees_with_low_bounds(kind: str, data: st.DataObject) -> None:
    first, second = sorted([data.draw(ranges(VALUES[kind])), data.draw(ranges(VALUES[kind]))])
    value = data.draw(VALUES[kind])
    assert first <= second
    if below(first, value):
        assert below(second, value)
