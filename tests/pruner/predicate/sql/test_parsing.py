"""pruner.predicate.sql.parsing (and every other error path): one-line errors for what cannot be
parsed, unknown columns and literals that cannot be values of their column; deep nesting."""

from __future__ import annotations

import pytest

from pruner.errors import InvalidInputError
from pruner.predicate.ranges import Range
from tests.pruner.predicate.sql.support import error, rs, td, tr

# Errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("", "empty WHERE clause"),
        ("   ", "empty WHERE clause"),
        ("id = = 1", "cannot parse WHERE clause 'id = = 1': Required keyword"),
        ("id = 'abc", "cannot parse WHERE clause"),
        ("WHERE id = 1", "cannot parse WHERE clause 'WHERE id = 1': Invalid expression / Unexpected token"),
        ("(id = 1", "cannot parse WHERE clause"),
        ("SELECT 1", "not a WHERE predicate: 'SELECT 1' (parsed as Select)"),
        ("id = 1; id = 2", "not a WHERE predicate"),
        ("id = 0x1F", "not a WHERE predicate"),
        ("nope = 1", "unknown column 'nope' in WHERE clause (columns: id, n, x, r, price, s, d, ts, b)"),
        ("1 = nope", "unknown column 'nope'"),
        ('"Nope" IS NULL', "unknown column 'Nope'"),
        ("nope", "unknown column 'nope'"),
        ("hour(nope) = 1", "unknown column 'nope'"),
        ("id = 1 OR nope LIKE 'a%'", "unknown column 'nope'"),
        ("nope IN (SELECT 1)", "unknown column 'nope'"),
        ("id = 'abc'", "cannot compare column id (bigint) with 'abc': expected an int"),
        ("s = 5", "cannot compare column s (string) with 5: expected a str"),
        ("b = 1", "cannot compare column b (boolean) with 1"),
        ("d = 5", "cannot compare column d (date) with 5"),
        ("id = TRUE", "cannot compare column id (bigint) with TRUE"),
        ("id = DATE '2026-01-01'", "cannot compare column id (bigint) with CAST('2026-01-01' AS DATE)"),
        ("d = TIMESTAMP '2026-01-01'", None),
        ("d = '2026-13-01'", "cannot compare column d (date) with '2026-13-01': not an ISO-8601 date"),
        (
            "d = DATE '2026-13-01'",
            "cannot compare column d with CAST('2026-13-01' AS DATE): not an ISO-8601 date",
        ),
        ("ts > TIMESTAMP 'soon'", "cannot compare column ts with CAST('soon' AS TIMESTAMP)"),
        ("ts = TIMESTAMP '2026-01-01 10:00:00.0000001'", "more than microsecond precision"),
        ("s = DATE '2026-01-01'", "cannot compare column s (string) with CAST('2026-01-01' AS DATE)"),
        ("price = '1.234'", "cannot compare column price (decimal(10,2)) with '1.234'"),
        (
            "price = '1e200'",
            "cannot compare column price (decimal(10,2)) with '1e200': needs more than 10 digits",
        ),
        ("id = CAST('abc' AS BIGINT)", "cannot compare column id with CAST('abc' AS BIGINT): not a number"),
        ("s LIKE CAST('x' AS DATE)", "invalid literal CAST('x' AS DATE): not an ISO-8601 date"),
        ("b = CAST('maybe' AS BOOLEAN)", "not a boolean"),
        ("s IN ('a', 1)", "cannot compare column s (string) with 1"),
        ("s NOT BETWEEN 'a' AND 2", "cannot compare column s (string) with 2"),
    ],
)
def test_errors(where: str, expected: str | None) -> None:
    if expected is None:  # not an error
        tr(where)
        return
    message = error(where)
    assert expected in message, message


def test_deep_nesting_is_an_error_or_a_translation() -> None:
    where = "NOT (" * 3000 + "id = 1" + ")" * 3000
    try:
        translation = tr(where)
    except InvalidInputError as exc:
        assert "\n" not in str(exc)
    else:
        assert translation.domain == td(id=rs(Range.less_than(1), Range.greater_than(1)))
