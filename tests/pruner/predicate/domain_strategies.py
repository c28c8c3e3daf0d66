"""Hypothesis strategies and builders for the tests of `pruner.predicate.domain`, shared by its test
modules (`test_domain_range_sets`, `test_domain_domains`) and the tuple-domain tests: `range_sets`
and `domains` over one of `test_ranges.VALUES`, `s` for an int range set in interval notation, and
the empty and full range sets `NONE` and `ALL`."""

from __future__ import annotations

from hypothesis import strategies as st

from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.values import Value
from tests.pruner.predicate.test_ranges import r, ranges

NONE = SortedRangeSet.none()
ALL = SortedRangeSet.all()


@st.composite
def range_sets(draw: st.DrawFn, values: st.SearchStrategy[Value]) -> SortedRangeSet:
    """Empty, full, IN lists, and unions of up to four arbitrary ranges."""
    return draw(
        st.one_of(
            st.just(NONE),
            st.just(ALL),
            st.lists(values, max_size=4).map(lambda vs: SortedRangeSet.of_values(*vs)),
            st.lists(ranges(values), max_size=4).map(lambda rs: SortedRangeSet.of_ranges(*rs)),
        )
    )


@st.composite
def domains(draw: st.DrawFn, values: st.SearchStrategy[Value], nan: bool = False) -> Domain:
    """Domains over `values`; with `nan`, some allow NaN beyond their values (float domains)."""
    return Domain(draw(range_sets(values)), draw(st.booleans()), nan and draw(st.booleans()))


def s(*texts: str) -> SortedRangeSet:
    """An int range set from interval notation: `s("[1,3)", "5")`."""
    return SortedRangeSet.of_ranges(*(r(text) for text in texts))
