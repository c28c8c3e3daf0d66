"""pruner.predicate.sql.grids: snapping an inexact literal widens with a note; NaN and the
infinities on floating columns."""

from __future__ import annotations

from decimal import Decimal

import pytest

from pruner.predicate.domain import Domain
from pruner.predicate.ranges import Range
from pruner.predicate.sql import Translation
from pruner.predicate.tuple_domain import TupleDomain
from tests.pruner.predicate.sql.support import F32_01, INF, NAN, NOT_NULL, dom, rs, td, tr

# Rounding ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "expected", "note"),
    [
        # Engines compare a double column with 0.1 rounded; SQL compares exactly: cover both.
        ("x > 0.1", td(x=rs(Range.greater_than_or_equal(0.1))), "literal 0.1 is inexact in double"),
        ("r > 0.1", td(r=rs(Range.greater_than_or_equal(F32_01))), "literal 0.1 is inexact in float"),
        (
            "r = 16777217",
            td(r=rs(Range(16777216.0, True, 16777218.0, True))),
            "literal 16777217 is inexact in float",
        ),
        # A double literal against a bigint column: engines round the column value to double.
        (
            "id = 9007199254740993e0",
            td(id=rs(Range(2**53 - 1, True, 2**53 + 2, True))),
            "literal 9007199254740993e0 is inexact in bigint",
        ),
        ("price > 1.2e0", td(price=rs(Range.greater_than_or_equal(Decimal("1.20")))), "inexact in decimal"),
    ],
)
def test_rounding_widens_with_a_note(where: str, expected: TupleDomain, note: str) -> None:
    translation = tr(where)
    assert translation.domain == expected, str(translation.domain)
    assert len(translation.widened) == 1 and note in translation.widened[0]


# Floating point and NaN -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "where",
    [
        "x <> 1.5",
        "x != 1.5",
        "1.5 <> x",
        "NOT (x < 1.5)",
        "NOT (x = 1.5)",
        "NOT x >= 1.5",
        "x NOT IN (1.5, 2.5)",
        "NOT (x IN (1.5))",
        "x NOT BETWEEN 1 AND 2",
        "NOT (x BETWEEN 1 AND 2)",
        "NOT (x > 1 AND x < 2)",
        "r <> 1.5",
        "NOT (r > 0)",
        "r NOT IN (0.5)",
    ],
)
def test_negations_on_floating_columns_keep_nan(where: str) -> None:
    """Exactly: NaN allowed beside the values the negation keeps."""
    translation = tr(where)
    column = "r" if where.startswith(("r", "NOT (r")) else "x"
    domain = translation.domain.domain(column)
    assert domain.is_nan_allowed() and not domain.values.is_all()
    assert translation.domain.matches({column: NAN})
    assert not translation.domain.matches({column: None})
    assert translation.widened == ()


def test_is_nan() -> None:
    assert tr("is_nan(x)") == Translation(td(x=Domain.only_nan()), ())
    assert tr("x > 1 OR is_nan(x)").domain == td(x=Domain(rs(Range.greater_than(1.0)).values, False, True))
    assert tr("is_nan(x) AND x < 1").domain.is_none()
    negated = tr("NOT is_nan(r)")
    assert negated.domain == td(r=NOT_NULL)
    assert negated.widened == ("NOT IS_NAN(r) keeps NaN: widened to r IS NOT NULL",)
    assert tr("is_nan(id)").widened == ("IS_NAN(id) on bigint column id: ignored",)


@pytest.mark.parametrize(
    "where",
    ["x = 1.5", "x < 1.5", "x >= 1.5", "x IN (1.5, 2)", "x BETWEEN 1 AND 2", "NOT (x <> 1.5)", "x > -1e400"],
)
def test_comparisons_on_floating_columns_exclude_nan(where: str) -> None:
    translation = tr(where)
    assert not translation.domain.matches({"x": NAN})
    assert translation.widened == ()


def test_floating_infinities() -> None:
    assert dom("x > 1e308").matches({"x": INF})
    assert not dom("x < 1e308").matches({"x": INF})
    assert dom("x < 1e400").matches({"x": 1.7976931348623157e308})
    assert not dom("x < 1e400").matches({"x": INF})
    assert dom("x < 1e400") == td(x=rs(Range.less_than(INF)))
    assert dom("x >= CAST('-Infinity' AS DOUBLE)").matches({"x": -INF})
