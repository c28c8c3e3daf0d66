"""Index expression trees: canonical texts, evaluation against an exact Python oracle (SQL's NULL,
overflow and division rules), and the order each tree claims — a range on its column projects onto
its values only where every value the range holds lands in the projection, and `=` / `IN` on its
columns map to exactly the values the tree makes of them, whatever its order."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pruner.errors import InvalidInputError
from pruner.functions import Monotonicity, parse_expression
from pruner.functions.parsing import bind, parse_sql
from pruner.index.functional import IMAGE_LIMIT, image, project, source_domain
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.types import ColumnType

TYPES = {
    "n": ColumnType("bigint"),
    "m": ColumnType("bigint"),
    "i": ColumnType("int"),
    "x": ColumnType("double"),
    "ts": ColumnType("timestamp"),
    "d": ColumnType("date"),
    "s": ColumnType("string"),
    "amount": ColumnType("decimal", 10, 2),
}
INT64 = st.integers(-(2**63), 2**63 - 1)
Tree = tuple[Any, ...]


def parse(text: str) -> Any:
    return parse_expression(text, TYPES)


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("n + m", "m + n"),
        ("m + n", "m + n"),
        ("n * 2 + 1", "1 + (2 * n)"),
        ("n * (60 * 1000)", "60000 * n"),
        ("CAST(n AS BIGINT) + 1", "1 + n"),
        ("n % 7", "mod(n, 7)"),
        ("n DIV 3", "n / 3"),
        ("-(-n)", "-(-(n))"),
        ("lower(substring(s, 1, 3))", "lower(substring(s, 1, 3))"),
        ("hour(from_unixtime(n / 1000))", "hour(from_unixtime(n / 1000))"),
        ("COALESCE(i, 0)", "coalesce(i, 0)"),
        ("year(CAST(d AS TIMESTAMP))", "year(CAST(d AS timestamp))"),
        ("x * -1.5", "(-1.5) * x"),
        ("lower('AB') || s", None),
        ("CASE WHEN n > 5 THEN 1 ELSE 0 END", "CASE WHEN (n > 5) THEN 1 ELSE 0 END"),
        ("CASE WHEN 5 < n THEN 1 ELSE 0 END", "CASE WHEN (n > 5) THEN 1 ELSE 0 END"),
        ("IF(n = m, 1, 2)", "CASE WHEN (m = n) THEN 1 ELSE 2 END"),
        (
            "CASE n WHEN 1 THEN 'a' WHEN 2 THEN 'b' END",
            "CASE WHEN (n = 1) THEN 'a' WHEN (n = 2) THEN 'b' END",
        ),
        (
            "CASE WHEN s IS NOT NULL AND n BETWEEN 1 AND 3 THEN s ELSE 'none' END",
            "CASE WHEN ((n <= 3) AND (n >= 1) AND (s IS NOT NULL)) THEN s ELSE 'none' END",
        ),
        (
            "CASE WHEN NOT (x > 1 OR i IS NULL) THEN x END",
            "CASE WHEN (NOT ((i IS NULL) OR (x > 1))) THEN x END",
        ),
        (
            "CASE WHEN hour(ts) < 12 THEN 'am' ELSE 'pm' END",
            "CASE WHEN (hour(ts) < 12) THEN 'am' ELSE 'pm' END",
        ),
        ("CASE WHEN i > 0 THEN 1.5 ELSE 2 END", "CASE WHEN (i > 0) THEN 1.5 ELSE 2 END"),
    ],
)
def test_canonical_text(written: str, canonical: str | None) -> None:
    if canonical is None:
        with pytest.raises(InvalidInputError):
            parse(written)
        return
    expression = parse(written)
    assert expression.sql() == canonical
    assert parse(canonical).sql() == canonical  # the canonical text reads back as itself


@pytest.mark.parametrize(
    ("text", "order"),
    [
        ("n + 1", Monotonicity.INCREASING),
        ("100 - n", Monotonicity.DECREASING),
        ("n / -2", Monotonicity.DECREASING),
        ("-(n * 3)", Monotonicity.DECREASING),
        ("n + n", Monotonicity.INCREASING),
        ("n - n", Monotonicity.NONE),
        ("n * n", Monotonicity.NONE),
        ("mod(n, 7)", Monotonicity.NONE),
        ("abs(n)", Monotonicity.NONE),
        ("year(from_unixtime(n))", Monotonicity.INCREASING),
        ("year(from_unixtime(0 - n))", Monotonicity.DECREASING),
        ("hour(from_unixtime(n))", Monotonicity.NONE),
        ("date_trunc('day', ts)", Monotonicity.INCREASING),
        ("to_date(CAST(d AS timestamp))", Monotonicity.INCREASING),
        ("CASE WHEN n > 0 THEN n ELSE 0 END", Monotonicity.NONE),
    ],
)
def test_order(text: str, order: Monotonicity) -> None:
    assert parse(text).order is order


def test_several_columns_never_project() -> None:
    expression = parse("n + m")
    assert expression.order is Monotonicity.INCREASING
    assert expression.source is None
    assert not expression.projects
    assert sorted(expression.columns) == ["m", "n"]


@pytest.mark.parametrize(
    "text",
    [
        "amount * 2",  # decimals: CAST to double first
        "mod(x, 2)",
        "CAST(n AS INT)",
        "CAST(x AS BIGINT)",
        "CAST(s AS BIGINT)",
        "coalesce(n, 'a')",
        "n > 5",  # a condition alone is no index expression
        "CASE WHEN s > 5 THEN 1 END",  # string with number
        "CASE WHEN amount > 5 THEN 1 END",  # decimals: CAST to double first
        "CASE WHEN n THEN 1 END",  # not a condition
        "CASE WHEN 1 < 2 THEN n END",  # a condition of no column
        "CASE WHEN n > 1 THEN s ELSE 1 END",  # values of two types
        "CASE WHEN n IS 1 THEN 1 END",
        "1 / 0 + n",  # a constant part that is NULL
        "lower(s) + 1",
        "n + 1e999",
    ],
)
def test_rejects(text: str) -> None:
    with pytest.raises(InvalidInputError):
        parse(text)


# Integer arithmetic trees over `n` and an exact oracle --------------------------------------------
constants = st.integers(-7, 7)


def _extend(children: st.SearchStrategy[Tree]) -> st.SearchStrategy[Tree]:
    return st.one_of(
        st.tuples(st.sampled_from(["+", "-", "*", "/", "mod"]), children, constants.map(lambda c: ("c", c))),
        st.tuples(st.sampled_from(["+", "-", "*"]), constants.map(lambda c: ("c", c)), children),
        st.tuples(st.sampled_from(["+", "-", "*"]), children, children),
        st.tuples(st.just("neg"), children),
        st.tuples(st.just("abs"), children),
    )


trees = st.recursive(st.just(("n",)), _extend, max_leaves=5)


def render(tree: Tree) -> str:
    head = tree[0]
    if head == "n":
        return "n"
    if head == "c":
        return f"({tree[1]})"
    if head in ("neg", "abs"):
        return f"-({render(tree[1])})" if head == "neg" else f"abs({render(tree[1])})"
    if head == "mod":
        return f"mod({render(tree[1])}, {render(tree[2])})"
    return f"({render(tree[1])} {head} {render(tree[2])})"


def oracle(tree: Tree, n: int | None) -> int | None:
    """SQL's answer in exact integers: NULL in, NULL out; NULL where SQL fails the query."""
    head = tree[0]
    if head == "n":
        return n
    if head == "c":
        return int(tree[1])
    values = [oracle(child, n) for child in tree[1:]]
    if any(v is None for v in values):
        return None
    if head == "neg":
        result = -values[0]  # type: ignore[operator]
    elif head == "abs":
        result = abs(values[0])  # type: ignore[arg-type]
    else:
        a, b = values[0], values[1]
        assert a is not None and b is not None
        if head in ("/", "mod"):
            if b == 0:
                return None
            quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
            result = quotient if head == "/" else a - quotient * b
        else:
            result = {"+": a + b, "-": a - b, "*": a * b}[head]
    return result if -(2**63) <= result < 2**63 else None


def _parsed(tree: Tree) -> Any:
    text = render(tree)
    try:
        return bind(parse_sql(text), TYPES, text)  # `n` alone too
    except InvalidInputError as exc:  # a constant part that is NULL (a division by a zero constant)
        assume("is NULL" not in str(exc))
        raise


@settings(max_examples=300, deadline=None)
@given(trees, st.lists(st.one_of(st.none(), INT64, st.integers(-100, 100)), min_size=1, max_size=20))
def test_arithmetic_matches_the_exact_oracle(tree: Tree, values: list[int | None]) -> None:
    expression = _parsed(tree)
    computed = expression.arrow({"n": pa.array(values, pa.int64())}).to_pylist()
    assert computed == [oracle(tree, v) for v in values]


@settings(max_examples=300, deadline=None)
@given(trees, INT64, INT64, st.lists(INT64 | st.integers(-100, 100), min_size=1, max_size=10))
def test_projection_holds_every_value_of_the_range(tree: Tree, a: int, b: int, picks: list[int]) -> None:
    expression = _parsed(tree)
    assume(expression.projects)
    low, high = min(a, b), max(a, b)
    domain = Domain.of(SortedRangeSet.of_ranges(Range(low, True, high, True)), False)
    projected = project(expression, domain)
    for pick in picks:
        v = low + (pick % (high - low + 1))
        value = expression.value(n=v)
        assert value is None or projected.contains_value(value), (render(tree), v, value, projected)


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(
        [
            "year(ts)",
            "date_trunc('month', ts)",
            "to_date(ts)",
            "date_format(ts, '%Y-%m')",
            "year(from_unixtime(n / 1000))",
        ]
    ),
    st.lists(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)), min_size=2),
)
def test_temporal_projection_holds_every_value(text: str, instants: list[datetime]) -> None:
    expression = parse(text)
    assert expression.projects
    ordered = sorted(instants)
    if expression.source == "ts":
        points: list[Any] = [t.replace(tzinfo=UTC) for t in ordered]
    else:
        points = [int(t.replace(tzinfo=UTC).timestamp() * 1000) for t in ordered]
    domain = Domain.of(SortedRangeSet.of_ranges(Range(points[0], True, points[-1], True)), False)
    projected = project(expression, domain)
    for point in points:
        value = expression.value(**{expression.source: point})
        assert value is None or projected.contains_value(value)


# Discrete domains: the image of the values ---------------------------------------------------------


def points(domain: Domain) -> set[Any]:
    return set() if domain.values.is_none() else set(domain.values.discrete_values())


@settings(max_examples=300, deadline=None)
@given(trees, st.lists(st.one_of(st.none(), INT64, st.integers(-100, 100)), min_size=1, max_size=20))
def test_an_in_list_maps_to_exactly_the_values_of_its_rows(tree: Tree, values: list[int | None]) -> None:
    expression = _parsed(tree)
    present = [v for v in values if v is not None]
    domain = Domain.of(SortedRangeSet.of_values(*present), None in values)
    imaged = image(expression, {"n": domain})
    assert imaged is not None
    expected = {oracle(tree, v) for v in values}
    assert imaged.is_null_allowed() == (None in expected)
    assert points(imaged) == expected - {None}


@pytest.mark.parametrize(
    ("text", "domains", "values", "null"),
    [
        # not monotonic: equality and IN still map
        ("lower(s)", {"s": Domain.multiple_values(["Ab", "aB", "C"], null_allowed=True)}, {"ab", "c"}, True),
        ("coalesce(i, 0)", {"i": Domain.only_null()}, {0}, False),
        ("mod(n, 10)", {"n": Domain.multiple_values([3, 13, 24])}, {3, 4}, False),
        # several columns: every combination
        (
            "n + m",
            {"n": Domain.multiple_values([1, 2]), "m": Domain.multiple_values([10, 20])},
            {11, 12, 21, 22},
            False,
        ),
        ("n + m", {"n": Domain.none(), "m": Domain.multiple_values([10])}, set(), False),
    ],
)
def test_image(text: str, domains: dict[str, Domain], values: set[Any], null: bool) -> None:
    imaged = image(parse(text), domains)
    assert imaged is not None
    assert (points(imaged), imaged.is_null_allowed()) == (values, null)


def test_no_image_of_ranges_or_too_many_combinations() -> None:
    assert image(parse("lower(s)"), {"s": Domain.not_null()}) is None
    wide = Domain.multiple_values(range(IMAGE_LIMIT // 2 + 1))
    assert image(parse("n + m"), {"n": wide, "m": Domain.multiple_values([1, 2])}) is None
    assert image(parse("n + 1"), {"n": wide}) is not None


def test_what_the_predicate_implies() -> None:
    ranged = TupleDomain.with_domains(
        {"n": Domain.of(SortedRangeSet.of_ranges(Range(1, True, 5, True)), False)}
    )
    # a range projects only through an ordered expression of its one column
    assert source_domain(parse("n + 1"), ranged) == project(parse("n + 1"), ranged.domain("n"))
    assert source_domain(parse("mod(n, 3)"), ranged) is None
    assert source_domain(parse("n + m"), ranged) is None
    listed = TupleDomain.with_domains({"n": Domain.multiple_values([1, 4])})
    implied = source_domain(parse("mod(n, 3)"), listed)
    assert implied is not None and implied.values.discrete_values() == (1,)


# CASE over `n` against SQL's three-valued logic ----------------------------------------------------
comparisons = st.tuples(st.sampled_from(["=", "<>", "<", "<=", ">", ">="]), constants)


def _conditions(children: st.SearchStrategy[Tree]) -> st.SearchStrategy[Tree]:
    return st.one_of(
        st.tuples(st.sampled_from(["AND", "OR"]), children, children),
        st.tuples(st.just("NOT"), children),
    )


conditions = st.recursive(
    st.one_of(comparisons.map(lambda c: ("cmp", *c)), st.sampled_from([("null",), ("notnull",)])),
    _conditions,
    max_leaves=4,
)
values = st.one_of(constants.map(lambda c: ("c", c)), trees)


def render_condition(tree: Tree) -> str:
    head = tree[0]
    if head == "cmp":
        return f"n {tree[1]} {tree[2]}"
    if head in ("null", "notnull"):
        return "n IS NULL" if head == "null" else "n IS NOT NULL"
    if head == "NOT":
        return f"NOT ({render_condition(tree[1])})"
    return f"({render_condition(tree[1])}) {head} ({render_condition(tree[2])})"


def truth(tree: Tree, n: int | None) -> bool | None:
    """SQL's value of a condition: TRUE, FALSE or NULL (None)."""
    head = tree[0]
    if head == "cmp":
        if n is None:
            return None
        c = tree[2]
        return {"=": n == c, "<>": n != c, "<": n < c, "<=": n <= c, ">": n > c, ">=": n >= c}[tree[1]]
    if head in ("null", "notnull"):
        return (n is None) == (head == "null")
    if head == "NOT":
        inner = truth(tree[1], n)
        return None if inner is None else not inner
    a, b = truth(tree[1], n), truth(tree[2], n)
    if head == "AND":
        return False if False in (a, b) else (None if None in (a, b) else True)
    return True if True in (a, b) else (None if None in (a, b) else False)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(conditions, values), min_size=1, max_size=3),
    st.one_of(st.none(), values),
    st.lists(st.one_of(st.none(), st.integers(-10, 10), INT64), min_size=1, max_size=20),
)
def test_case_matches_three_valued_logic(
    branches: list[tuple[Tree, Tree]], default: Tree | None, rows: list[int | None]
) -> None:
    whens = " ".join(f"WHEN {render_condition(c)} THEN {render(v)}" for c, v in branches)
    text = f"CASE {whens}{f' ELSE {render(default)}' if default is not None else ''} END"
    try:
        expression = bind(parse_sql(text), TYPES, text)
    except InvalidInputError as exc:  # a constant part that is NULL, or a CASE of no column
        assume("is NULL" not in str(exc) and "names no column" not in str(exc))
        raise
    assume(expression.columns)

    def expected(n: int | None) -> int | None:
        for condition, value in branches:
            if truth(condition, n) is True:
                return oracle(value, n)
        return oracle(default, n) if default is not None else None

    computed = expression.arrow({"n": pa.array(rows, pa.int64())}).to_pylist()
    assert computed == [expected(n) for n in rows], text
