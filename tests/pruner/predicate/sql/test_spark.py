"""pruner.predicate.sql.spark: Catalyst's SQL text as lakeprune SQL. What means the same in Spark and
lakeprune is rewritten (typed literals, qualified and backquoted names, `startswith`, the registry
functions, Java date patterns); everything else is left out, never approximated."""

from __future__ import annotations

import math
import operator

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.predicate.sql import text_condition, translate
from pruner.predicate.sql.spark import from_spark
from pruner.predicate.text import Fragment, TextMatch
from pruner.types import TableSchema
from tests.pruner.predicate.sql.engine_cases import SCHEMA, SPARK, SparkCase


@pytest.mark.parametrize(
    ("spark", "lakeprune"),
    [
        ("((t.id IS NOT NULL) AND (t.id = 3L))", '((NOT "id" IS NULL) AND ("id" = CAST(3 AS BIGINT)))'),
        ("(t.id IN (1L, 2L))", '("id" IN (CAST(1 AS BIGINT), CAST(2 AS BIGINT)))'),
        ("spark_catalog.default.t.score > -1.5D", '"score" > CAST(-1.5 AS DOUBLE)'),
        ("startswith(t.city, 'am')", "\"city\" LIKE 'am%'"),
        ("t.`odd name` = 'it\\'s'", "\"odd name\" = 'it''s'"),
        (
            "(t.ts >= TIMESTAMP '2026-01-01 10:00:00')",
            "(\"ts\" >= CAST('2026-01-01 10:00:00' AS TIMESTAMP))",
        ),
        ("(t.day = DATE '2026-01-02')", "(\"day\" = CAST('2026-01-02' AS DATE))"),
        ("(month(CAST(t.ts AS DATE)) IN (1, 2))", '(MONTH("ts") IN (1, 2))'),
        ("(year(t.day) = 2026)", '(YEAR("day") = 2026)'),
        (
            "(regexp_extract(t.url, '^https?://([^/]+)\\\\.com', 1) IN ('a', 'b'))",
            "(REGEXP_EXTRACT(\"url\", '^https?://([^/]+)\\.com', 1) IN ('a', 'b'))",
        ),
        ("contains(t.msg, 'time')", "CONTAINS(\"msg\", 'time')"),
        ("endswith(t.msg, '.json')", "ENDS_WITH(\"msg\", '.json')"),
        ("RLIKE(t.msg, 'time(out)?')", "REGEXP_LIKE(\"msg\", 'time(out)?')"),
        ("(locate('x', t.msg, 1) > 0)", "(STR_POSITION(\"msg\", 'x', 1) > 0)"),
        ("t.msg LIKE '%a%b'", "\"msg\" LIKE '%a%b'"),
        ("t.msg LIKE '%a\\\\_b%'", "\"msg\" LIKE '%a\\_b%' ESCAPE '\\'"),  # Spark's default escape
        ("t.msg LIKE '%a!_b%' ESCAPE '!'", "\"msg\" LIKE '%a!_b%' ESCAPE '!'"),
        ("contains(lower(t.msg), 'i\u0307')", "CONTAINS(LOWER(\"msg\"), 'i\u0307')"),  # the index has both
        ("lower(t.msg) LIKE '%ab%'", "LOWER(\"msg\") LIKE '%ab%'"),
        ("contains(upper(t.msg), 'SS')", "CONTAINS(UPPER(\"msg\"), 'SS')"),
    ],
)
def test_what_means_the_same_is_rewritten(spark: str, lakeprune: str) -> None:
    assert from_spark([spark], "UTC").where == f"({lakeprune})"


@pytest.mark.parametrize("case", SPARK, ids=lambda case: case.shape)
def test_each_engine_case(case: SparkCase) -> None:
    """The engine-parity table's cases (`engine_cases.py`): read as the SQL lakeprune reads back,
    or left out."""
    filters = from_spark([case.text], case.time_zone, ansi=case.ansi)
    if case.read is None:
        assert filters.where is None and filters.dropped == (case.text,)
        return
    assert filters.where == f"({case.read})"
    translate(filters.where, SCHEMA)


@pytest.mark.parametrize(
    "spark",
    [
        "(t.id <=> 3L)",  # null-safe equality
        "(abs(t.score) = 1.0D)",  # not a registry function
        "(year(CAST(t.ts AS TIMESTAMP)) = 2026)",  # only a date cast is Spark's own
        "(date_format(t.ts, 'yyyy-MM-dd''T''HH') = 'x')",  # quotes in quotes
        "(t.bin = X'0A')",  # sqlglot would read a binary literal as a number
        "startswith(t.city, 'a_')",  # a LIKE wildcard in the prefix
        "(lower(t.city) LIKE 'a%b')",  # a prefix range on a functional index over lower
        "t.msg LIKE t.pattern",
        "not even sql (",
        # Spark's regexp_extract is '' where the registry's is NULL: = / IN of non-empty strings only
        "(regexp_extract(t.url, '^x([0-9]+)', 1) > '3')",
        "(NOT (regexp_extract(t.url, '^x([0-9]+)', 1) = '3'))",
    ],
)
def test_what_may_differ_is_left_out(spark: str) -> None:
    filters = from_spark([spark], "UTC")
    assert filters.where is None
    assert filters.dropped == (spark,)


def test_timestamps_need_a_utc_session() -> None:
    texts = [
        "(hour(t.ts) = 12)",
        "(t.ts > TIMESTAMP '2026-01-01 00:00:00')",
        "(year(CAST(t.ts AS DATE)) = 1)",
        "(hour(CAST(from_unixtime(t.epoch, 'yyyy-MM-dd HH:mm:ss') AS TIMESTAMP)) = 3)",
    ]
    texts.append("(t.id = 1L)")
    filters = from_spark(texts, "America/New_York")  # a date in the session zone is not the UTC one
    assert filters.where == '(("id" = CAST(1 AS BIGINT)))'
    assert filters.dropped == tuple(texts[:4])
    assert from_spark(texts, "Etc/UTC").dropped == ()


def test_the_rewrite_binds() -> None:
    schema = TableSchema.parse("id bigint, city string, score double, ts timestamp, day date")
    filters = from_spark(
        ["(t.id IN (1L, 2L))", "(t.score > -1.5D)", "(t.ts >= TIMESTAMP '2026-01-01 10:00:00')"], "UTC"
    )
    assert filters.where is not None
    translation = translate(filters.where, schema)
    assert sorted(translation.domain.columns) == ["id", "score", "ts"]
    assert translation.widened == ()


def test_ranges_that_nan_passes_in_spark_keep_nan_and_nan_literals_are_left_out() -> None:
    nan_passes = ["(t.score > 1.0D)", "(t.score >= 1.0D)", "(1.0D < t.score)"]
    kept = ["(t.score < 1.0D)", "(t.score = 1.0D)", "(t.id > 1L)", "(NOT (t.score = 1.0D))"]
    literal = "(t.score = CAST('NaN' AS DOUBLE))"
    schema = TableSchema.parse("id bigint, score double")
    for text in nan_passes:
        filters = from_spark([text, literal], "UTC", floating=["score"])
        assert filters.dropped == (literal,) and filters.where is not None
        domain = translate(filters.where, schema).domain
        assert domain.matches({"score": math.nan}) and domain.matches({"score": 1.5})
        assert not domain.matches({"score": 0.5}) and not domain.matches({"score": None})
    filters = from_spark(kept, "UTC", floating=["score"])
    assert filters.where is not None and filters.where.count(" AND ") == len(kept) - 1
    assert not translate(filters.where, schema).domain.matches({"score": math.nan})


_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "=": operator.eq}
_OPS["<>"] = operator.ne


def spark_truth(op: str, value: float | None, literal: float, negated: bool) -> bool | None:
    """Spark's `value op literal` (under NOT if `negated`): NaN above every number and equal to
    itself; NULL unknown."""
    if value is None:
        return None

    def order(v: float) -> tuple[bool, float]:
        return (math.isnan(v), 0.0 if math.isnan(v) else v)

    return _OPS[op](order(value), order(literal)) != negated


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["<", "<=", ">", ">=", "=", "<>"]),
            st.sampled_from([-1.5, 0.0, 1.0, 2.5]),
            st.booleans(),
            st.booleans(),
        ),
        min_size=1,
        max_size=3,
    ),
    st.lists(st.sampled_from([None, math.nan, -math.inf, -1.5, 0.0, 1.0, 2.0, 2.5, math.inf]), max_size=6),
)
def test_spark_comparisons_on_doubles_keep_every_row_spark_matches(
    conjuncts: list[tuple[str, float, bool, bool]], rows: list[float | None]
) -> None:
    """Each conjunct `score op v` (or `v op' score`), maybe under NOT, as Spark hands it over:
    every row Spark finds TRUE for all of them matches the translated domain."""
    flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>"}
    texts = []
    for op, literal, negated, literal_first in conjuncts:
        text = f"({literal}D {flipped[op]} t.score)" if literal_first else f"(t.score {op} {literal}D)"
        texts.append(f"(NOT {text})" if negated else text)
    filters = from_spark(texts, "UTC", floating=["score"])
    assert filters.dropped == ()
    assert filters.where is not None
    domain = translate(filters.where, TableSchema.parse("score double")).domain
    for value in rows:
        if all(spark_truth(op, value, literal, negated) is True for op, literal, negated, _ in conjuncts):
            assert domain.matches({"score": value}), f"{texts} is TRUE in Spark for {value}, not in {domain}"


# Letters whose case mappings differ between the JVM (full mapping, as Python's str.lower / str.upper)
# and the registry (simple mapping, Arrow's utf8proc), and plain ones.
_CASE_ALPHABET = "aAsSfFiItTnN\u00df\ufb01\ufb00\ufb05\u0130\u0131\u017f\u03a3\u03c3\u03c2\u0149\u1e9e "


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["lower", "upper"]), st.text(alphabet=_CASE_ALPHABET, min_size=1, max_size=6))
def test_a_case_mapping_is_read_only_where_spark_and_the_index_agree(function: str, value: str) -> None:
    """A row whose case mapping in Spark equals the literal (`upper('straße') = 'STRASSE'`) must
    have that value in the index too, or the conjunct must be left out: reading it would drop the
    row's file."""
    spark_value = getattr(value, function)()  # the JVM's full mapping
    literal = spark_value.replace("'", "''")
    filters = from_spark([f"({function}(t.name) = '{literal}')"], "UTC")
    if filters.where is None:
        return
    index_value = getattr(pc, f"utf8_{function}")(pa.array([value]))[0].as_py()
    assert index_value == spark_value, f"{function}({value!r}): Spark {spark_value!r}, index {index_value!r}"


@pytest.mark.parametrize(
    ("spark", "fragments"),
    [
        ("t.msg LIKE '%a\\\\_b%'", [Fragment("a_b")]),  # Spark's escaped underscore
        ("t.msg LIKE 'x\\\\\\\\y%'", [Fragment("x\\y", at_start=True)]),  # an escaped backslash
        ("endswith(t.msg, '.json')", [Fragment(".json", at_end=True)]),
        ("(instr(t.msg, 'timeout') > 0)", [Fragment("timeout")]),
    ],
)
def test_text_atoms_keep_their_spark_meaning(spark: str, fragments: list[Fragment]) -> None:
    filters = from_spark([spark], "UTC")
    assert filters.where is not None
    condition = text_condition(filters.where, TableSchema.parse("msg string")).condition
    assert isinstance(condition, TextMatch) and list(condition.fragments) == fragments


def test_index_expressions_in_ansi_mode() -> None:
    """Trees of calls and arithmetic are read as the index expressions they are; arithmetic only in
    ANSI mode, where Spark fails the query on the rows whose value an index holds as NULL (Spark
    wraps integer overflow otherwise)."""
    schema = TableSchema.parse("id bigint, org_id string, name string, ts timestamp, hour_org bigint")
    indexed = {"(10 * hour(ts)) + length(org_id)": "hour_org"}
    text = "(((hour(t.ts) * 10) + length(t.org_id)) = 124)"
    filters = from_spark([text], "UTC", ansi=True)
    assert filters.where is not None
    assert translate(filters.where, schema, indexed).domain.columns == ("hour_org",)
    assert from_spark([text], "UTC", ansi=False).dropped == (text,)
    nested = from_spark(["(lower(substring(t.name, 1, 2)) = 'al')"], "UTC")  # no arithmetic: any mode
    assert nested.where == "((LOWER(SUBSTRING(\"name\", 1, 2)) = 'al'))"
    # Spark's `/` of doubles is a plain division here (its dialect marks it NULL on zero)
    divided = from_spark(["((CAST(t.id AS DOUBLE) / CAST(2 AS DOUBLE)) > 1.0D)"], "UTC", ansi=True)
    assert divided.where == '(((CAST("id" AS DOUBLE) / CAST(2 AS DOUBLE)) > CAST(1.0 AS DOUBLE)))'
    # a cast of a column stands only inside arithmetic or a call, and only to a type both compute alike
    assert from_spark(["((CAST(t.id AS STRING) + 1) = 2)"], "UTC", ansi=True).where is None


@pytest.mark.parametrize("ansi", [False, True])
def test_case_expressions_are_read_as_their_index(ansi: bool) -> None:
    # Catalyst's text of a CASE over a call and literals: no arithmetic, so in any mode
    schema = TableSchema.parse("ts timestamp, day_half string")
    indexed = {"CASE WHEN (hour(ts) < 12) THEN 'am' ELSE 'pm' END": "day_half"}
    filters = from_spark(["(CASE WHEN (hour(t.ts) < 12) THEN 'am' ELSE 'pm' END = 'pm')"], "UTC", ansi=ansi)
    assert filters.where is not None
    assert translate(filters.where, schema, indexed).domain.columns == ("day_half",)
