"""pruner.predicate.sql.translator: simple predicates translate exactly; LIKE; AND, OR and NOT with
the notes of column-wise widening; what cannot be expressed becomes every row with a note."""

from __future__ import annotations

import math

import pytest

from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.sql import Translation
from pruner.predicate.tuple_domain import TupleDomain
from tests.pruner.predicate.sql.support import NOT_NULL, dom, rs, td, tr, values

# Tightness: simple predicates translate exactly ------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("id = 5", td(id=Domain.single_value(5))),
        ("5 = id", td(id=Domain.single_value(5))),
        ("id > 1 AND id < 3", td(id=rs(Range(1, False, 3, False)))),
        ("s IN ('x', 'y')", td(s=values("x", "y"))),
        ("id < 3", td(id=rs(Range.less_than(3)))),
        ("id <= 3", td(id=rs(Range.less_than_or_equal(3)))),
        ("id > 3", td(id=rs(Range.greater_than(3)))),
        ("id >= 3", td(id=rs(Range.greater_than_or_equal(3)))),
        ("3 < id", td(id=rs(Range.greater_than(3)))),
        ("3 <= id", td(id=rs(Range.greater_than_or_equal(3)))),
        ("3 > id", td(id=rs(Range.less_than(3)))),
        ("3 >= id", td(id=rs(Range.less_than_or_equal(3)))),
        ("id <> 3", td(id=rs(Range.less_than(3), Range.greater_than(3)))),
        ("id != 3", td(id=rs(Range.less_than(3), Range.greater_than(3)))),
        ("3 <> id", td(id=rs(Range.less_than(3), Range.greater_than(3)))),
        ("id = -7", td(id=Domain.single_value(-7))),
        ("id > -(7)", td(id=rs(Range.greater_than(-7)))),
        ("id BETWEEN 1 AND 5", td(id=rs(Range(1, True, 5, True)))),
        ("id NOT BETWEEN 1 AND 5", td(id=rs(Range.less_than(1), Range.greater_than(5)))),
        ("id BETWEEN 5 AND 1", TupleDomain.none()),
        ("id NOT BETWEEN 5 AND 1", td(id=NOT_NULL)),
        ("id BETWEEN SYMMETRIC 5 AND 1", td(id=rs(Range(1, True, 5, True)))),
        ("id NOT BETWEEN SYMMETRIC 5 AND 1", td(id=rs(Range.less_than(1), Range.greater_than(5)))),
        ("id IN (3, 1, 2)", td(id=values(1, 2, 3))),
        ("id NOT IN (1, 2)", td(id=rs(Range.less_than(1), Range(1, False, 2, False), Range.greater_than(2)))),
        ("id IN (1, NULL)", td(id=Domain.single_value(1))),
        ("id IN (NULL)", TupleDomain.none()),
        ("id NOT IN (1, NULL)", TupleDomain.none()),
        ("id IS NULL", td(id=Domain.only_null())),
        ("id IS NOT NULL", td(id=NOT_NULL)),
        ("NOT (id IS NULL)", td(id=NOT_NULL)),
        ("NOT id IS NOT NULL", td(id=Domain.only_null())),
        ("b", td(b=Domain.single_value(True))),
        ("NOT b", td(b=Domain.single_value(False))),
        ("b = TRUE", td(b=Domain.single_value(True))),
        ("b IS TRUE", td(b=Domain.single_value(True))),
        ("b IS FALSE", td(b=Domain.single_value(False))),
        ("b IS NOT TRUE", td(b=Domain(SortedRangeSet.of_values(False), True))),
        ("NOT (b IS FALSE)", td(b=Domain(SortedRangeSet.of_values(True), True))),
        ("TRUE", TupleDomain.all()),
        ("FALSE", TupleDomain.none()),
        ("NOT TRUE", TupleDomain.none()),
        ("NOT FALSE", TupleDomain.all()),
        ("NULL", TupleDomain.none()),
        ("NOT NULL", TupleDomain.none()),
        ("(((id = 1)))", td(id=Domain.single_value(1))),
        ("id = 1 AND s = 'a'", td(id=Domain.single_value(1), s=Domain.single_value("a"))),
        ("id = 1 AND id = 2", TupleDomain.none()),
        ("id = 1 OR id = 2", td(id=values(1, 2))),
        (
            "id = 1 OR id > 5 OR id IS NULL",
            td(id=Domain(SortedRangeSet.of_ranges(Range.equal(1), Range.greater_than(5)), True)),
        ),
        (
            "NOT (id = 1 OR id = 2)",
            td(id=rs(Range.less_than(1), Range(1, False, 2, False), Range.greater_than(2))),
        ),
        ("NOT (id < 1 AND id > -1)", td(id=rs(Range.less_than_or_equal(-1), Range.greater_than_or_equal(1)))),
        ("id = 1 AND (FALSE OR s = 'a')", td(id=Domain.single_value(1), s=Domain.single_value("a"))),
        ("id = 1 OR TRUE", TupleDomain.all()),
        ("id = 1 AND NULL", TupleDomain.none()),
        ("id = 1 OR NULL", td(id=Domain.single_value(1))),
        ("id = NULL", TupleDomain.none()),
        ("id < NULL", TupleDomain.none()),
        ("NULL <> id", TupleDomain.none()),
        ("NOT (id = NULL)", TupleDomain.none()),
        ("id BETWEEN NULL AND 5", TupleDomain.none()),
        ("id NOT BETWEEN NULL AND 5", td(id=rs(Range.greater_than(5)))),
        ("id IN ()", TupleDomain.none()),
        ("id NOT IN ()", TupleDomain.all()),
    ],
)
def test_translation_is_exact(where: str, expected: TupleDomain) -> None:
    translation = tr(where)
    assert translation.domain == expected, str(translation.domain)
    assert translation.widened == ()


# LIKE -----------------------------------------------------------------------------------------


def prefix(low: str, high: str | None) -> TupleDomain:
    if high is None:
        return td(s=rs(Range.greater_than_or_equal(low)))
    return td(s=rs(Range(low, True, high, False)))


@pytest.mark.parametrize(
    ("where", "expected", "widened"),
    [
        ("s LIKE 'ab%'", prefix("ab", "ac"), False),
        ("s LIKE 'ab%%'", prefix("ab", "ac"), False),
        ("s LIKE 'abc'", td(s=Domain.single_value("abc")), False),
        ("s LIKE ''", td(s=Domain.single_value("")), False),
        ("s NOT LIKE 'abc'", td(s=rs(Range.less_than("abc"), Range.greater_than("abc"))), False),
        ("NOT (s LIKE 'abc')", td(s=rs(Range.less_than("abc"), Range.greater_than("abc"))), False),
        ("s LIKE 'ab_'", prefix("ab", "ac"), True),
        ("s LIKE 'ab%c'", prefix("ab", "ac"), True),
        ("s LIKE 'a_c%'", prefix("a", "b"), True),
        ("s LIKE 'a\\%'", prefix("a", "b"), True),
        ("s LIKE 'a\U0010ffff%'", prefix("a\U0010ffff", "b"), False),
        ("s LIKE '\U0010ffff%'", prefix("\U0010ffff", None), False),
        ("s LIKE '\ud7ff%'", prefix("\ud7ff", "\ue000"), False),
        ("s LIKE 'a''%'", prefix("a'", "a("), False),
        ("s LIKE '%'", td(s=NOT_NULL), False),
        ("s LIKE '%%'", td(s=NOT_NULL), False),
        ("s LIKE '%a'", td(s=NOT_NULL), True),
        ("s LIKE '_a'", td(s=NOT_NULL), True),
        ("s NOT LIKE 'ab%'", td(s=NOT_NULL), True),
        ("NOT s LIKE 'a_'", td(s=NOT_NULL), True),
        ("s LIKE 'ab%' ESCAPE '!'", td(s=NOT_NULL), True),
        ("s NOT LIKE 'ab' ESCAPE '!'", td(s=NOT_NULL), True),
        ("s ILIKE 'ab%'", td(s=NOT_NULL), True),
        ("s NOT ILIKE 'ab%'", td(s=NOT_NULL), True),
        ("s LIKE NULL", TupleDomain.none(), False),
        ("s NOT LIKE NULL", TupleDomain.none(), False),
        ("id LIKE '1%'", TupleDomain.all(), True),
        ("s LIKE s", TupleDomain.all(), True),
        ("'abc' LIKE s", TupleDomain.all(), True),
    ],
)
def test_like(where: str, expected: TupleDomain, widened: bool) -> None:
    translation = tr(where)
    assert translation.domain == expected, str(translation.domain)
    assert bool(translation.widened) == widened, translation.widened


def test_like_prefix_range_holds_exactly_the_prefixed_strings() -> None:
    domain = dom("s LIKE 'ab%'")
    for value in ("ab", "abz", "ab\U0010ffff\U0010ffff"):
        assert domain.matches({"s": value})
    for value in ("a", "aa\U0010ffff", "ac", "b", "", None):
        assert not domain.matches({"s": value})


# OR, AND, NOT ---------------------------------------------------------------------------------


def test_or_over_different_columns_widens_with_a_note() -> None:
    translation = tr("(id = 1 AND s = 'a') OR (id = 2 AND s = 'b')")
    assert translation.domain == td(id=values(1, 2), s=values("a", "b"))
    assert translation.widened == (
        "OR over different columns widened column-wise: (id = 1 AND s = 'a') OR (id = 2 AND s = 'b')",
    )
    translation = tr("id = 1 OR s = 'a'")
    assert translation.domain == TupleDomain.all()
    assert "OR over different columns" in translation.widened[0]


def test_or_with_one_side_containing_the_other_is_exact() -> None:
    translation = tr("(id = 1 AND s = 'a') OR id = 1")
    assert translation.domain == td(id=Domain.single_value(1))
    assert translation.widened == ()


def test_not_and_is_an_or_of_negations() -> None:
    translation = tr("NOT (id < 1 AND s = 'a')")
    assert translation.domain == TupleDomain.all()
    assert translation.widened == ("OR over different columns widened column-wise: NOT (id < 1 AND s = 'a')",)


def test_long_chains_and_in_lists() -> None:
    """Thousands of items: each translated once, combined as a balanced tree (their speed is
    pytest-timeout's to bound, not an assertion's: a timed unit test fails on a loaded machine)."""
    items = ", ".join(str(i) for i in range(5000))
    assert dom(f"id IN ({items})") == td(id=values(*range(5000)))
    assert dom(f"id NOT IN ({items})").matches({"id": 5000})
    assert dom(" OR ".join(f"id = {i}" for i in range(2000))) == td(id=values(*range(2000)))
    assert dom(" AND ".join(f"id <> {i}" for i in range(2000))).matches({"id": -1})
    floats = ", ".join(f"{i}.5" for i in range(3000))
    translation = tr(f"x NOT IN ({floats})")  # exact: every other number, and NaN
    assert translation.widened == () and translation.domain.matches({"x": math.nan})
    assert translation.domain.matches({"x": 1.0}) and not translation.domain.matches({"x": 2999.5})


# Not expressible: every row, with a note ----------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "note"),
    [
        ("id = n", "comparison between columns id = n"),
        ("id < n + 1", "expression n + 1 not indexed"),
        ("hour(ts) = 1", "function HOUR(ts) not indexed"),
        ("abs(id) > 5", "function ABS(id) not indexed"),
        ("id + 1 > 5", "expression id + 1 not indexed"),
        ("1 = 1", "has no column"),
        ("id = 1 + 1", "is not a literal"),
        ("id = abs(-1)", "is not a literal"),
        ("id IN (SELECT id FROM other)", "not supported"),
        ("EXISTS (SELECT 1)", "not supported"),
        ("CASE WHEN id = 1 THEN TRUE ELSE FALSE END", "not supported"),
        ("id IS DISTINCT FROM 1", "not supported"),
        ("id = CAST(1.5 AS INT)", "depends on the engine"),
        ("id = CAST('1.5' AS INT)", "depends on the engine"),
        ("price = CAST(1.234 AS DECIMAL(10, 2))", "depends on the engine"),
        ("s = CAST('abc' AS CHAR(5))", "cast to CHAR(5) not supported"),
        ("s = CAST('abc' AS VARCHAR(2))", "depends on the engine"),
        ("x = CAST('0.1' AS REAL)", "depends on the engine"),
        ("ts = DATE '2026-01-01' + INTERVAL '1' DAY", "is not a literal"),
        ("id", "non-boolean column id"),
        ("1", "not supported"),
        ("id IS TRUE", "not supported"),
        ("(id + 1) IS NULL", "not supported"),
        ("s SIMILAR TO 'a%'", "not supported"),
    ],
)
def test_unsupported_widens_to_all_with_a_note(where: str, note: str) -> None:
    for text in (where, f"NOT ({where})"):
        translation = tr(text)
        assert translation.domain == TupleDomain.all()
        assert len(translation.widened) == 1 and note in translation.widened[0], translation.widened


def test_unsupported_part_keeps_the_rest() -> None:
    translation = tr("id = 1 AND hour(ts) = 3")
    assert translation.domain == td(id=Domain.single_value(1))
    assert translation.widened == ("function HOUR(ts) not indexed: HOUR(ts) = 3 ignored",)


def test_notes_are_not_repeated() -> None:
    translation = tr("(hour(ts) = 3 AND id = 1) OR (hour(ts) = 3 AND id = 2)")
    assert translation.widened == ("function HOUR(ts) not indexed: HOUR(ts) = 3 ignored",)
    assert translation.domain == td(id=values(1, 2))


def test_no_notes_for_what_matches_nothing() -> None:
    assert tr("x NOT IN (1.5, NULL)") == Translation(TupleDomain.none(), ())
    assert tr("(x <> 1 OR id = n) AND FALSE") == Translation(TupleDomain.none(), ())
    assert tr("hour(ts) = 3 OR (hour(ts) = 4 AND id = NULL)").widened == (
        "function HOUR(ts) not indexed: HOUR(ts) = 3 ignored",
    )


def test_or_differing_on_one_column_only_is_exact() -> None:
    translation = tr("(id = 1 AND s = 'a') OR (id = 2 AND s = 'a') OR (s = 'a' AND id = 3)")
    assert translation.domain == td(id=values(1, 2, 3), s=Domain.single_value("a"))
    assert translation.widened == ()
