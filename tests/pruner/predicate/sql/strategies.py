"""Hypothesis strategies for the key property of `pruner.predicate.sql`: random predicates over every
column type, with hints of the row values around their literals."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any

import numpy as np
from hypothesis import strategies as st

from tests.pruner.predicate.sql.support import F32_01, INF, NAN

Hints = dict[str, list[Any]]
Atom = tuple[str, Hints]

F32_MAX = float(np.finfo(np.float32).max)
INT_RANGES = {"id": (-(2**63), 2**63 - 1), "n": (-(2**31), 2**31 - 1)}
PRICE_MAX = Decimal("99999999.99")
CENT = Decimal("0.01")
ID_PIVOTS = [0, 1, -1, 2, 3, 5, 7, 1000, 2**53 - 1, 2**53, 2**53 + 1, 2**53 + 2, 2**63 - 1, -(2**63)]
N_PIVOTS = [0, 1, -1, 2, 3, 5, 1000, 2**31 - 1, -(2**31)]
X_PIVOTS = [0.0, -0.0, 0.1, math.nextafter(0.1, 0), math.nextafter(0.1, 1), 1.5, -1.5, 2.5, 1000.0]
X_PIVOTS += [0.30000000000000004, 1e308, 1.7976931348623157e308, 5e-324, INF, -INF, NAN]
R_PIVOTS = [0.0, F32_01, 1.5, 2.5, 16777216.0, 16777218.0, F32_MAX, -F32_MAX, INF, -INF, NAN]
PRICE_PIVOTS = [Decimal(v) for v in ("0.00", "0.01", "1.20", "1.21", "1.23", "1.24", "-1.24", "1.50", "2.50")]
PRICE_PIVOTS += [PRICE_MAX, -PRICE_MAX]
STRING_ALPHABET = "ab'%_\U0010ffff\ud7ff"
DATE_PIVOTS = [date(2026, 1, 1), date(2025, 12, 31), date(2026, 1, 2), date(1, 1, 1), date(9999, 12, 31)]
TS_PIVOTS = [
    datetime(2026, 1, 1, tzinfo=UTC),
    datetime(2026, 1, 1, 10, tzinfo=UTC),
    datetime(2026, 1, 1, 10, 0, 0, 1, tzinfo=UTC),
    datetime(2026, 1, 1, 9, 59, 59, 999999, tzinfo=UTC),
    datetime(2025, 12, 31, 23, tzinfo=UTC),
]


def f32(value: float) -> float:
    with np.errstate(over="ignore"):
        return float(np.float32(value))


def f32_step(value: float, up: bool) -> float:
    with np.errstate(all="ignore"):
        return float(np.nextafter(np.float32(value), np.float32(INF if up else -INF)))


def near(column: str, value: Any) -> list[Any]:
    """Row values of `column` at and around a literal's value."""
    if value is None:
        return []
    if column in INT_RANGES:
        low, high = INT_RANGES[column]
        number = Decimal(value)
        centers = {int(number.to_integral_value(ROUND_FLOOR)), int(number.to_integral_value(ROUND_CEILING))}
        if math.isfinite(float(number)):
            centers.add(int(float(number)))
        found = [c + k for c in centers for k in range(-2, 3) if low <= c + k <= high]
        return found or [low, high]
    if column == "price":
        number = Decimal(value)
        if abs(number) > PRICE_MAX:
            return [PRICE_MAX, -PRICE_MAX]
        base = number.quantize(CENT, ROUND_FLOOR)
        return [base + k * CENT for k in range(-1, 3) if abs(base + k * CENT) <= PRICE_MAX]
    if column == "x":
        number = float(value)
        return [number, math.nextafter(number, INF), math.nextafter(number, -INF), NAN]
    if column == "r":
        number = f32(float(value))
        return [number, f32_step(number, True), f32_step(number, False), NAN]
    if column == "s":
        return [value, value + "a", value + "\U0010ffff", value[:-1], value + "'"]
    if column == "d":
        day = value.date() if isinstance(value, datetime) else value
        return [d for d in (day, shift(day, -1), shift(day, 1)) if d is not None]
    if column == "ts":
        moment = value if isinstance(value, datetime) else datetime.combine(value, datetime.min.time(), UTC)
        step = timedelta(microseconds=1)
        return [t for t in (moment, shift(moment, -step), shift(moment, step)) if t is not None]
    return [True, False]


def shift(value: Any, by: Any) -> Any:
    try:
        return value + (timedelta(days=by) if isinstance(by, int) else by)
    except OverflowError:
        return None


def sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def date_text(value: date) -> str:
    return f"DATE '{value.isoformat()}'"


def ts_text(value: datetime) -> str:
    return f"TIMESTAMP '{value.replace(tzinfo=None).isoformat(sep=' ')}'"


def numbers(texts: list[str], pivots: list[int]) -> st.SearchStrategy[tuple[str, Any]]:
    return (
        st.sampled_from(texts).map(lambda t: (t, Decimal(t)))
        | st.sampled_from([*pivots, 0]).map(lambda i: (str(i), i))
        | st.integers(-10, 10).map(lambda i: (str(i), i))
    )


def fixed(*pairs: tuple[str, Any]) -> st.SearchStrategy[tuple[str, Any]]:
    return st.sampled_from(pairs)


# Literals as (SQL text, value).
LITERALS: dict[str, st.SearchStrategy[tuple[str, Any]]] = {
    "id": numbers(
        [
            "2.5",
            "-2.5",
            "0.5",
            "9223372036854775807.5",
            "1e3",
            "2.5e0",
            "9007199254740993e0",
            "1e19",
            "-1e19",
            "1e400",
            "1.0",
            "9.007199254740992e15",
            "9223372036854775808",
            "-9223372036854775809",
            "1e20",
        ],
        ID_PIVOTS,
    )
    | fixed(("CAST('7' AS BIGINT)", 7)),
    "n": numbers(["2.5", "-0.5", "1e10", "2147483647.5", "3e0", "2147483648", "-2147483649"], N_PIVOTS),
    "x": numbers(
        [
            "0",
            "-0.0",
            "0.1",
            "1.5",
            "-1.5",
            "2.5",
            "1000",
            "1e308",
            "1.7976931348623157e308",
            "1e309",
            "5e-324",
            "2e-324",
            "0.30000000000000004",
            "0.3",
            "0.12345678901234567890123",
            "9007199254740993",
        ],
        [],
    )
    | fixed(
        ("CAST('NaN' AS DOUBLE)", NAN),
        ("CAST('Infinity' AS DOUBLE)", INF),
        ("CAST('-Infinity' AS DOUBLE)", -INF),
        ("CAST('0.1' AS DOUBLE)", 0.1),
        ("-CAST('1.5' AS DOUBLE)", -1.5),
    ),
    "r": numbers(
        [
            "0",
            "0.1",
            "1.5",
            "2.5",
            "16777217",
            "16777216",
            "3.4028235e38",
            "3.4028236e38",
            "3.5e38",
            "1e-45",
            "0.1e0",
            "340282356779733661637539395458142568447",
        ],
        [],
    )
    | fixed(("CAST('NaN' AS FLOAT)", NAN), ("CAST('1.5' AS FLOAT)", 1.5)),
    "price": numbers(
        [
            "1.23",
            "1.234",
            "-1.235",
            "0.005",
            "99999999.99",
            "99999999.995",
            "100000000",
            "1e9",
            "-99999999.995",
            "1.2e0",
            "0.1e1",
            "1.2",
            "1.20",
            "2.5",
            "-1.24",
        ],
        [0, 1, -1],
    ),
    "s": (
        st.sampled_from(["", "a", "ab", "b", "a'", "\U0010ffff", "a\U0010ffff", "\ud7ff"])
        | st.text(STRING_ALPHABET, max_size=3)
    ).map(lambda v: (sql_string(v), v)),
    "d": st.sampled_from(DATE_PIVOTS).map(lambda v: (date_text(v), v))
    | st.sampled_from([*TS_PIVOTS, datetime(9999, 12, 31, 1, tzinfo=UTC)]).map(lambda v: (ts_text(v), v))
    | st.dates().map(lambda v: (date_text(v), v)),
    "ts": st.sampled_from(TS_PIVOTS).map(lambda v: (ts_text(v), v))
    | st.sampled_from(DATE_PIVOTS).map(lambda v: (date_text(v), v))
    | st.datetimes(timezones=st.just(UTC)).map(lambda v: (ts_text(v), v)),
    "b": fixed(("TRUE", True), ("FALSE", False)),
}
COLUMNS = list(LITERALS)
OPS = ["=", "<>", "!=", "<", "<=", ">", ">="]


PIVOTS: dict[str, list[Any]] = {
    "id": ID_PIVOTS,
    "n": N_PIVOTS,
    "x": X_PIVOTS,
    "r": R_PIVOTS,
    "price": PRICE_PIVOTS,
    "s": ["", "a", "ab", "b", "a'", "ab\U0010ffff"],
    "d": DATE_PIVOTS,
    "ts": TS_PIVOTS,
    "b": [True, False],
}


def pivots_or(values: list[Any], other: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | st.sampled_from(values) | other


ROW_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "id": pivots_or(ID_PIVOTS, st.integers(-(2**63), 2**63 - 1)),
    "n": pivots_or(N_PIVOTS, st.integers(-(2**31), 2**31 - 1)),
    "x": pivots_or(X_PIVOTS, st.floats()),
    "r": pivots_or(R_PIVOTS, st.floats(width=32)),
    "price": pivots_or(PRICE_PIVOTS, st.decimals(-PRICE_MAX, PRICE_MAX, places=2, allow_nan=False)),
    "s": pivots_or(["", "a", "ab", "b", "a'"], st.text(STRING_ALPHABET, max_size=4)),
    "d": pivots_or(DATE_PIVOTS, st.dates()),
    "ts": pivots_or(TS_PIVOTS, st.datetimes(timezones=st.just(UTC))),
    "b": st.none() | st.booleans(),
}


@st.composite
def literal_for(draw: st.DrawFn, column: str) -> tuple[str, list[Any]]:
    if draw(st.integers(0, 15)) == 0:
        return "NULL", []
    text, value = draw(LITERALS[column])
    return text, near(column, value)


@st.composite
def comparison(draw: st.DrawFn, column: str | None = None) -> Atom:
    column = column or draw(st.sampled_from(COLUMNS))
    op, (literal, hints) = draw(st.sampled_from(OPS)), draw(literal_for(column))
    text = f"{literal} {op} {column}" if draw(st.booleans()) else f"{column} {op} {literal}"
    return text, {column: hints}


@st.composite
def between(draw: st.DrawFn, column: str | None = None) -> Atom:
    column = column or draw(st.sampled_from(COLUMNS))
    (low, low_hints), (high, high_hints) = draw(literal_for(column)), draw(literal_for(column))
    negation = draw(st.sampled_from(["", "NOT "]))
    symmetric = draw(st.sampled_from(["", "", "SYMMETRIC "]))
    return f"{column} {negation}BETWEEN {symmetric}{low} AND {high}", {column: low_hints + high_hints}


@st.composite
def in_list(draw: st.DrawFn, column: str | None = None) -> Atom:
    column = column or draw(st.sampled_from(COLUMNS))
    items = draw(st.lists(literal_for(column), min_size=1, max_size=4))
    negation = draw(st.sampled_from(["", "NOT "]))
    hints = [value for _, near_values in items for value in near_values]
    return f"{column} {negation}IN ({', '.join(text for text, _ in items)})", {column: hints}


@st.composite
def null_test(draw: st.DrawFn, column: str | None = None) -> Atom:
    column = column or draw(st.sampled_from(COLUMNS))
    negation = draw(st.sampled_from(["", "NOT "]))
    if column == "b" and draw(st.booleans()):
        return f"b IS {negation}{draw(st.sampled_from(['TRUE', 'FALSE']))}", {}
    return f"{column} IS {negation}NULL", {}


@st.composite
def like(draw: st.DrawFn, column: str = "s") -> Atom:
    pattern = draw(st.text("ab%_'\U0010ffff", max_size=4) | st.sampled_from(["ab%", "a%", "%", "a_b", "ab"]))
    negation = draw(st.sampled_from(["", "NOT "]))
    kind = draw(st.sampled_from(["LIKE", "LIKE", "LIKE", "ILIKE"]))
    text = f"s {negation}{kind} {sql_string(pattern)}"
    if draw(st.integers(0, 5)) == 0:
        text += " ESCAPE '%'" if "%" in pattern else " ESCAPE 'a'"
    # Strings the pattern matches, and strings around its literal prefix.
    filler = st.text("ab'\U0010ffff", max_size=2)
    matching = "".join(
        draw(filler) if ch == "%" else draw(filler.filter(lambda f: len(f) == 1)) if ch == "_" else ch
        for ch in pattern
    )
    prefix = pattern.split("%")[0].split("_")[0]
    return text, {"s": [matching, pattern, *near("s", prefix)]}


atoms = st.one_of(
    comparison(),
    comparison(),
    between(),
    in_list(),
    null_test(),
    like(),
    st.sampled_from([("is_nan(x)", {"x": [NAN, 0.0]}), ("is_nan(r)", {"r": [NAN, 0.0]})]),
    st.sampled_from(["TRUE", "FALSE", "NULL", "b", "NOT b", "id < n", "abs(id) > 5", "n = id"]).map(
        lambda t: (t, {})
    ),
)


def merged(*hints: Hints) -> Hints:
    result: Hints = {}
    for part in hints:
        for column, values_ in part.items():
            result.setdefault(column, []).extend(values_)
    return result


def combine(children: st.SearchStrategy[Atom]) -> st.SearchStrategy[Atom]:
    pairs = st.tuples(children, children)
    return st.one_of(
        pairs.map(lambda p: (f"({p[0][0]}) AND ({p[1][0]})", merged(p[0][1], p[1][1]))),
        pairs.map(lambda p: (f"({p[0][0]}) OR ({p[1][0]})", merged(p[0][1], p[1][1]))),
        st.tuples(children, children, st.sampled_from([" AND ", " OR "])).map(
            lambda p: (p[0][0] + p[2] + p[1][0], merged(p[0][1], p[1][1]))
        ),
        children.map(lambda c: (f"NOT ({c[0]})", c[1])),
        children.map(lambda c: (f"NOT {c[0]}", c[1])),
    )


predicates = st.recursive(atoms, combine, max_leaves=8)


@st.composite
def cases(draw: st.DrawFn, wheres: st.SearchStrategy[Atom]) -> tuple[str, list[dict[str, Any]]]:
    where, hints = draw(wheres)
    values_ = {
        column: st.sampled_from(hints[column]) | ROW_VALUES[column]
        if hints.get(column)
        else ROW_VALUES[column]
        for column in COLUMNS
    }
    return where, draw(st.lists(st.fixed_dictionaries(values_), min_size=1, max_size=8))


@st.composite
def single_comparison(draw: st.DrawFn, column: str) -> tuple[str, list[dict[str, Any]]]:
    """A comparison, IN, BETWEEN, IS test or LIKE on `column`, possibly negated, and a row at each
    of the values near its literals and at each of the column's pivots."""
    kinds = [comparison(column), comparison(column), in_list(column), between(column), null_test(column)]
    where, hints = draw(st.one_of(*kinds, *([like()] * 2 if column == "s" else [])))
    where = draw(st.sampled_from([where, f"NOT ({where})"]))
    return where, [{column: value} for value in [*hints.get(column, []), *PIVOTS[column], None]]
