"""pruner.predicate.tuple_domain: canonical form (NONE absorbs, all-domains dropped), intersect laws,
the widening column-wise union, and `matches` consistency with both."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import Value
from tests.pruner.predicate.domain_strategies import domains, s
from tests.pruner.predicate.test_ranges import VALUES

LAWS = settings(max_examples=60, deadline=None)
COLUMNS = ("a", "b", "c")
Row = Mapping[str, Value | None]

tuple_domains: st.SearchStrategy[TupleDomain] = st.one_of(
    st.just(TupleDomain.none()),
    st.dictionaries(st.sampled_from(COLUMNS), domains(VALUES["int"]), max_size=3).map(
        TupleDomain.with_domains
    ),
)
# Rows may leave a column out (read as NULL) or hold NULL explicitly.
rows: st.SearchStrategy[dict[str, Value | None]] = st.dictionaries(
    st.sampled_from(COLUMNS), st.none() | VALUES["int"], max_size=3
)


def td(**domains_: Domain) -> TupleDomain:
    return TupleDomain.with_domains(domains_)


def eq(value: Value) -> Domain:
    return Domain.single_value(value)


# Canonical form ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("built", "canonical"),
    [
        (td(a=Domain.all()), TupleDomain.all()),
        (td(), TupleDomain.all()),
        (td(a=Domain.none(), b=eq(1)), TupleDomain.none()),
        (td(a=eq(1), b=Domain.all()), td(a=eq(1))),
        (
            TupleDomain.with_domains({"b": eq(2), "a": eq(1)}),
            TupleDomain.with_domains({"a": eq(1), "b": eq(2)}),
        ),
        (td(a=Domain.of(s("[1,2)", "[2,3]"), False)), td(a=Domain.of(s("[1,3]"), False))),
    ],
)
def test_different_constructions_are_equal(built: TupleDomain, canonical: TupleDomain) -> None:
    assert built == canonical
    assert hash(built) == hash(canonical)


@pytest.mark.parametrize(
    "entries",
    [
        (("b", eq(1)), ("a", eq(2))),
        (("a", eq(1)), ("a", eq(2))),
        (("a", Domain.all()),),
        (("a", Domain.none()),),
    ],
)
def test_constructor_rejects_non_canonical_entries(entries: tuple[tuple[str, Domain], ...]) -> None:
    with pytest.raises(ValueError):
        TupleDomain(entries)


def test_accessors() -> None:
    both = td(b=eq(2), a=Domain.not_null())
    assert both.columns == ("a", "b")
    assert both.domain("b") == eq(2)
    assert both.domain("zzz") == Domain.all()
    assert both.domains == {"a": Domain.not_null(), "b": eq(2)}
    assert TupleDomain.none().domain("a") == Domain.none()
    assert TupleDomain.none().domains is None
    assert TupleDomain.none().columns == ()
    assert TupleDomain.all().columns == ()
    assert TupleDomain.all().is_all() and not TupleDomain.all().is_none()
    assert TupleDomain.none().is_none() and not TupleDomain.none().is_all()


def test_is_immutable() -> None:
    source = {"a": eq(1)}
    built = TupleDomain.with_domains(source)
    source["a"] = eq(2)
    source["b"] = eq(3)
    assert built == td(a=eq(1))
    view = built.domains
    assert view is not None
    with pytest.raises(TypeError):
        view["a"] = eq(5)  # type: ignore[index]


# Laws --------------------------------------------------------------------------------------------


@LAWS
@given(tuple_domains, tuple_domains)
def test_intersect_is_commutative(x: TupleDomain, y: TupleDomain) -> None:
    assert x.intersect(y) == y.intersect(x)


@LAWS
@given(tuple_domains, tuple_domains, tuple_domains)
def test_intersect_is_associative(x: TupleDomain, y: TupleDomain, z: TupleDomain) -> None:
    assert x.intersect(y).intersect(z) == x.intersect(y.intersect(z))


@LAWS
@given(tuple_domains)
def test_intersect_is_idempotent(x: TupleDomain) -> None:
    assert x.intersect(x) == x


@LAWS
@given(tuple_domains)
def test_intersect_identities(x: TupleDomain) -> None:
    assert x.intersect(TupleDomain.all()) == x
    assert x.intersect(TupleDomain.none()).is_none()


@LAWS
@given(tuple_domains, tuple_domains)
def test_column_wise_union_is_commutative(x: TupleDomain, y: TupleDomain) -> None:
    assert x.column_wise_union(y) == y.column_wise_union(x)


@LAWS
@given(tuple_domains)
def test_column_wise_union_is_idempotent(x: TupleDomain) -> None:
    assert x.column_wise_union(x) == x


@LAWS
@given(tuple_domains)
def test_column_wise_union_identities(x: TupleDomain) -> None:
    assert x.column_wise_union(TupleDomain.none()) == x
    assert x.column_wise_union(TupleDomain.all()).is_all()


@LAWS
@given(tuple_domains, tuple_domains)
def test_column_wise_union_absorbs_intersect(x: TupleDomain, y: TupleDomain) -> None:
    assert x.column_wise_union(x.intersect(y)) == x


# Membership consistency -------------------------------------------------------------------------


@LAWS
@given(tuple_domains, tuple_domains, rows)
def test_matches_of_intersect_is_the_and(x: TupleDomain, y: TupleDomain, row: Row) -> None:
    assert x.intersect(y).matches(row) == (x.matches(row) and y.matches(row))


@LAWS
@given(tuple_domains, tuple_domains, rows)
def test_matches_of_column_wise_union_is_a_superset(x: TupleDomain, y: TupleDomain, row: Row) -> None:
    if x.matches(row) or y.matches(row):
        assert x.column_wise_union(y).matches(row)


@LAWS
@given(domains(VALUES["int"]), domains(VALUES["int"]), rows)
def test_column_wise_union_on_one_column_is_exact(a: Domain, b: Domain, row: Row) -> None:
    x, y = td(a=a), td(a=b)
    assert x.column_wise_union(y).matches(row) == (x.matches(row) or y.matches(row))


@LAWS
@given(tuple_domains, rows)
def test_matches_is_the_and_of_the_column_domains(x: TupleDomain, row: Row) -> None:
    expected = not x.is_none() and all(x.domain(c).contains_value(row.get(c)) for c in COLUMNS)
    assert x.matches(row) == expected


def test_column_wise_union_widens() -> None:
    x, y = td(a=eq(1), b=eq(1)), td(a=eq(2), b=eq(2))
    union = x.column_wise_union(y)
    assert union == td(a=Domain.multiple_values([1, 2]), b=Domain.multiple_values([1, 2]))
    assert union.matches({"a": 1, "b": 2})
    assert not x.matches({"a": 1, "b": 2}) and not y.matches({"a": 1, "b": 2})
    assert td(a=eq(1)).column_wise_union(td(b=eq(2))).is_all()


@pytest.mark.parametrize(
    ("built", "row", "expected"),
    [
        (TupleDomain.all(), {}, True),
        (TupleDomain.none(), {"a": 1}, False),
        (td(a=eq(1)), {"a": 1, "b": 7}, True),
        (td(a=eq(1)), {"a": 2}, False),
        (td(a=eq(1)), {}, False),
        (td(a=Domain.only_null()), {}, True),
        (td(a=Domain.only_null()), {"a": None}, True),
        (td(a=eq(1), b=Domain.not_null()), {"a": 1}, False),
    ],
)
def test_matches_table(built: TupleDomain, row: Row, expected: bool) -> None:
    assert built.matches(row) is expected


@pytest.mark.parametrize(
    ("built", "expected"),
    [
        (TupleDomain.all(), "TRUE"),
        (TupleDomain.none(), "FALSE"),
        (
            td(
                ts=Domain.of(
                    SortedRangeSet.of_ranges(Range.greater_than_or_equal(datetime(2026, 1, 1, tzinfo=UTC))),
                    True,
                ),
                city=Domain.multiple_values(["b", "a"]),
            ),
            "city IN ('a', 'b') AND (ts >= 2026-01-01T00:00:00Z OR ts IS NULL)",
        ),
        (td(n=Domain.of(s("(0,10]"), False)), "(n > 0 AND n <= 10)"),
    ],
)
def test_str_for_explain(built: TupleDomain, expected: str) -> None:
    assert str(built) == expected
