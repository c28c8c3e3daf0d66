"""pruner.predicate.sql.literals: literals of every type, CASTs, quoted and qualified column names,
as seen through `translate`."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest

from pruner.predicate.domain import Domain
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from tests.pruner.predicate.sql.support import F32_01, INF, NOT_NULL, rs, td, tr

# Literals -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("d = DATE '2026-01-02'", td(d=Domain.single_value(date(2026, 1, 2)))),
        ("d = CAST('2026-01-02' AS DATE)", td(d=Domain.single_value(date(2026, 1, 2)))),
        ("d = '2026-01-02'", td(d=Domain.single_value(date(2026, 1, 2)))),
        (
            "ts = TIMESTAMP '2026-01-01 10:00:00'",
            td(ts=Domain.single_value(datetime(2026, 1, 1, 10, tzinfo=UTC))),
        ),
        (
            "ts = TIMESTAMP '2026-01-01 10:00:00+02:00'",
            td(ts=Domain.single_value(datetime(2026, 1, 1, 8, tzinfo=UTC))),
        ),
        (
            "ts < TIMESTAMP '2026-01-01 10:00:00.000001'",
            td(ts=rs(Range.less_than(datetime(2026, 1, 1, 10, 0, 0, 1, tzinfo=UTC)))),
        ),
        ("ts >= DATE '2026-01-01'", td(ts=rs(Range.greater_than_or_equal(datetime(2026, 1, 1, tzinfo=UTC))))),
        ("ts = '2026-01-01 10:00:00'", td(ts=Domain.single_value(datetime(2026, 1, 1, 10, tzinfo=UTC)))),
        # A date is midnight UTC when compared with a timestamp.
        ("d < TIMESTAMP '2026-01-01 10:00:00'", td(d=rs(Range.less_than_or_equal(date(2026, 1, 1))))),
        ("d > TIMESTAMP '2026-01-01 10:00:00'", td(d=rs(Range.greater_than_or_equal(date(2026, 1, 2))))),
        ("d = TIMESTAMP '2026-01-01 10:00:00'", TupleDomain.none()),
        ("d = TIMESTAMP '2026-01-01 00:00:00'", td(d=Domain.single_value(date(2026, 1, 1)))),
        ("d > TIMESTAMP '2026-01-01 00:00:00'", td(d=rs(Range.greater_than(date(2026, 1, 1))))),
        ("d > TIMESTAMP '9999-12-31 10:00:00'", TupleDomain.none()),
        ("price = 1.5", td(price=Domain.single_value(Decimal("1.50")))),
        ("price = CAST('1.5' AS DECIMAL(10, 2))", td(price=Domain.single_value(Decimal("1.50")))),
        ("price = '1.25'", td(price=Domain.single_value(Decimal("1.25")))),
        ("price = -1.25", td(price=Domain.single_value(Decimal("-1.25")))),
        ("id = CAST('7' AS BIGINT)", td(id=Domain.single_value(7))),
        ("id = CAST(7.0 AS INT)", td(id=Domain.single_value(7))),
        ("x = CAST('1.5' AS DOUBLE)", td(x=Domain.single_value(1.5))),
        ("x = -1.5", td(x=Domain.single_value(-1.5))),
        ("x = 1.5e3", td(x=Domain.single_value(1500.0))),
        ("x = 0.1", td(x=Domain.single_value(0.1))),
        ("x < 0.1", td(x=rs(Range.less_than(0.1)))),
        ("x >= 0.1", td(x=rs(Range.greater_than_or_equal(0.1)))),
        ("x < CAST('Infinity' AS DOUBLE)", td(x=rs(Range.less_than(INF)))),
        ("x = CAST('-Infinity' AS DOUBLE)", td(x=Domain.single_value(-INF))),
        ("r = 0.1", td(r=Domain.single_value(F32_01))),
        ("r = 1.5", td(r=Domain.single_value(1.5))),
        ("s = 'it''s'", td(s=Domain.single_value("it's"))),
        ("s = CAST('ab' AS VARCHAR(5))", td(s=Domain.single_value("ab"))),
        ("b = CAST('true' AS BOOLEAN)", td(b=Domain.single_value(True))),
        ("b <> FALSE", td(b=Domain.single_value(True))),
        ('"ID" = 1', td(id=Domain.single_value(1))),
        ("ID = 1", td(id=Domain.single_value(1))),
        ("t.id = 1", td(id=Domain.single_value(1))),
        ("id = 1;", td(id=Domain.single_value(1))),
        # Exact comparisons with a value between two representable ones.
        ("id > 2.5", td(id=rs(Range.greater_than_or_equal(3)))),
        ("id >= 2.5", td(id=rs(Range.greater_than_or_equal(3)))),
        ("id < 2.5", td(id=rs(Range.less_than_or_equal(2)))),
        ("id <= -2.5", td(id=rs(Range.less_than_or_equal(-3)))),
        ("id = 2.5", TupleDomain.none()),
        ("id <> 2.5", td(id=NOT_NULL)),
        ("id IN (2.5, 3)", td(id=Domain.single_value(3))),
        ("id BETWEEN 1.5 AND 3.5", td(id=rs(Range(2, True, 3, True)))),
        ("price > 1.234", td(price=rs(Range.greater_than_or_equal(Decimal("1.24"))))),
        ("price < 1.234", td(price=rs(Range.less_than_or_equal(Decimal("1.23"))))),
        ("price < -1.234", td(price=rs(Range.less_than_or_equal(Decimal("-1.24"))))),
        ("price = 1.234", TupleDomain.none()),
        ("price >= 1.230", td(price=rs(Range.greater_than_or_equal(Decimal("1.23"))))),
        # Out of the type's range.
        ("n > 3000000000", TupleDomain.none()),
        ("n < 3000000000", td(n=rs(Range.less_than_or_equal(2**31 - 1)))),
        ("n = -3000000000", TupleDomain.none()),
        ("n >= -3000000000", td(n=rs(Range.greater_than_or_equal(-(2**31))))),
        ("id > 1e30", TupleDomain.none()),
        ("price >= 1e20", TupleDomain.none()),
        ("price < 1e20", td(price=rs(Range.less_than_or_equal(Decimal("99999999.99"))))),
        ("price > -1e200", td(price=rs(Range.greater_than_or_equal(Decimal("-99999999.99"))))),
        # An exponent makes a double: exactly representable values stay exact.
        ("id > 1e0", td(id=rs(Range.greater_than(1)))),
        ("id >= 1e3", td(id=rs(Range.greater_than_or_equal(1000)))),
        ("id = 1e3", td(id=Domain.single_value(1000))),
        ("id <> 1e3", td(id=rs(Range.less_than(1000), Range.greater_than(1000)))),
        # NaN literals: only <> is true.
        ("x = CAST('NaN' AS DOUBLE)", TupleDomain.none()),
        ("x < CAST('NaN' AS DOUBLE)", TupleDomain.none()),
        ("x <> CAST('NaN' AS DOUBLE)", td(x=NOT_NULL)),
        ("NOT (x = CAST('NaN' AS DOUBLE))", td(x=NOT_NULL)),
        ("NOT (x <> CAST('NaN' AS DOUBLE))", TupleDomain.none()),
        ("id = CAST('NaN' AS DOUBLE)", TupleDomain.none()),
        ("x = -NULL", TupleDomain.none()),
    ],
)
def test_literals(where: str, expected: TupleDomain) -> None:
    translation = tr(where)
    assert translation.domain == expected, str(translation.domain)
    assert translation.widened == ()
