"""pruner.predicate.sql.text_conditions: what each SQL form requires of the text, by example, and
the key property against DuckDB as the engine: whenever an atom (or an AND / OR / NOT tree of
atoms) is TRUE for a value, the value satisfies the text condition (`satisfies`, an independent
evaluator: fragments are substrings, anchors are startswith / endswith, words are among
`words_of`, a cased subject holds for the value's simple or full case mapping)."""

from __future__ import annotations

import re
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from pruner.errors import InvalidInputError
from pruner.predicate.regex_runs import regex_condition
from pruner.predicate.sql.literals import read_literal
from pruner.predicate.sql.parsing import parse
from pruner.predicate.sql.text_conditions import text_condition
from pruner.predicate.text import (
    TEXT_TRUE,
    Case,
    Fragment,
    TextAll,
    TextAny,
    TextCondition,
    TextMatch,
    TextSubject,
    leaves,
    words_of,
)
from pruner.predicate.text_atoms import like_fragments, text_match_value
from pruner.types import TableSchema

SCHEMA = TableSchema.parse("msg string, other string, id bigint")
MSG = TextSubject("msg")
LOWER = TextSubject("msg", Case.LOWER)
UPPER = TextSubject("msg", Case.UPPER)


def cond(where: str) -> TextCondition:
    return text_condition(where, SCHEMA).condition


def notes(where: str) -> tuple[str, ...]:
    return text_condition(where, SCHEMA).notes


def frags(condition: TextCondition) -> list[tuple[str, bool, bool]]:
    """The fragments of a single leaf, as (text, at_start, at_end)."""
    assert isinstance(condition, TextMatch), condition
    return [(f.text, f.at_start, f.at_end) for f in condition.fragments]


# Examples ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("msg LIKE '%timeout%'", [("timeout", False, False)]),
        ("msg LIKE '%time_out%'", [("time", False, False), ("out", False, False)]),
        ("msg LIKE 'conn%refused'", [("conn", True, False), ("refused", False, True)]),
        ("msg LIKE 'exact'", [("exact", True, True)]),
        ("msg LIKE '_a%%b_'", [("a", False, False), ("b", False, False)]),
        ("msg LIKE '100!%%' ESCAPE '!'", [("100%", True, False)]),
        ("msg LIKE '%a!_b!!c' ESCAPE '!'", [("a_b!c", False, True)]),
        ("msg LIKE 'ab!' ESCAPE '!'", [("ab", True, False)]),  # a trailing escape ends the run
        ("msg LIKE 'a\\b%' ESCAPE '\\'", [("ab", True, False)]),
        # No ESCAPE: a backslash is literal (Trino, DuckDB) or an escape (Spark): both are cut out.
        ("msg LIKE 'ab\\%cd%'", [("ab", True, False), ("cd", False, False)]),
        ("msg LIKE '%ab\\\\cd'", [("ab", False, False), ("cd", False, True)]),
        ("msg LIKE 'ab\\x'", [("ab", True, False)]),
        ("lower(msg) LIKE '%err%'", [("err", False, False)]),
        ("strpos(msg, 'x') > 0", [("x", False, False)]),
        ("strpos(msg, 'x') >= 1", [("x", False, False)]),
        ("strpos(msg, 'x') <> 0", [("x", False, False)]),
        ("strpos(msg, 'x') != 0", [("x", False, False)]),
        ("0 < strpos(msg, 'x')", [("x", False, False)]),
        ("strpos(msg, 'x') > 3", [("x", False, False)]),
        ("NOT (strpos(msg, 'x') = 0)", [("x", False, False)]),
        ("position('xy' IN msg) > 0", [("xy", False, False)]),
        ("locate('xy', msg) > 0", [("xy", False, False)]),
        ("instr(msg, 'xy') > 0", [("xy", False, False)]),
        ("contains(msg, 'xy')", [("xy", False, False)]),
        ("starts_with(msg, 'xy')", [("xy", True, False)]),
        ("startswith(msg, 'xy')", [("xy", True, False)]),
        ("ends_with(msg, 'xy')", [("xy", False, True)]),
        ("regexp_like(msg, 'abc')", [("abc", False, False)]),
        ("regexp_like(msg, '^abc')", [("abc", True, False)]),
        ("regexp_like(msg, 'abc$')", [("abc", False, False)]),  # `$` also matches before a final \n
        (
            "msg RLIKE 'a.b[cd]e\\d+f'",
            [("a", False, False), ("b", False, False), ("e", False, False), ("f", False, False)],
        ),
        ("rlike(msg, 'x\\.y')", [("x.y", False, False)]),
        ("regexp_like(msg, '^ab+c')", [("ab", True, False), ("bc", False, False)]),
        ("regexp_like(msg, 'ab?c')", [("a", False, False), ("c", False, False)]),
        ("regexp_like(msg, 'ab*c')", [("a", False, False), ("c", False, False)]),
        ("regexp_like(msg, 'ab{2}c')", [("abbc", False, False)]),
        ("regexp_like(msg, 'ab{2,}c')", [("abb", False, False), ("bc", False, False)]),
        ("regexp_like(msg, 'ab{1,3}c')", [("ab", False, False), ("bc", False, False)]),
        ("regexp_like(msg, 'a(?:bc)d')", [("abcd", False, False)]),
        ("regexp_like(msg, '\\bterm\\b')", [("term", False, False)]),
        ("regexp_like(msg, '(^ab)c')", [("abc", True, False)]),
    ],
)
def test_fragments_of_each_form(where: str, expected: list[tuple[str, bool, bool]]) -> None:
    condition = cond(where)
    assert frags(condition) == expected
    assert isinstance(condition, TextMatch) and condition.source and not condition.words


def test_subjects_and_cases() -> None:
    assert isinstance(c := cond("lower(msg) LIKE '%a%'"), TextMatch) and c.subject == LOWER
    assert isinstance(c := cond("upper(msg) LIKE '%A%'"), TextMatch) and c.subject == UPPER
    assert isinstance(c := cond("starts_with(lower(msg), 'a')"), TextMatch) and c.subject == LOWER
    assert isinstance(c := cond("regexp_like(upper(msg), 'AB')"), TextMatch) and c.subject == UPPER
    assert isinstance(c := cond("other LIKE '%a%'"), TextMatch) and c.subject == TextSubject("other")
    assert isinstance(c := cond("MSG LIKE '%a%'"), TextMatch) and c.subject == MSG
    # string expressions, as a text index over one is bound (`pruner.predicate.text_subjects`)
    prefix = TextSubject("substring(msg, 1, 5)", expression=True)
    assert isinstance(c := cond("substring(MSG, 1, 5) LIKE '%a%'"), TextMatch) and c.subject == prefix
    trimmed = TextSubject("trim(msg)", Case.LOWER, expression=True)
    assert isinstance(c := cond("strpos(lower(trim(msg)), 'ab') > 0"), TextMatch) and c.subject == trimmed


def test_ilike_is_lower_of_both_sides_in_both_case_mappings() -> None:
    assert cond("msg ILIKE '%AbC%'") == TextMatch(LOWER, (Fragment("abc"),), (), "msg ILIKE '%AbC%'")
    # Simple mapping: U+0130 -> i, capital sigma -> small sigma; full: U+0130 -> i + U+0307, a final
    # capital sigma -> final sigma (U+03C2). Either may be the engine's.
    condition = cond("msg ILIKE '%İΣ'")
    assert isinstance(condition, TextAny)
    assert {leaf.fragments[0].text for leaf in leaves(condition)} == {"i\u03c3", "i\u0307\u03c2"}
    assert frags(cond("msg ILIKE 'A!%%' ESCAPE '!'")) == [("a%", True, False)]
    assert cond("msg ILIKE 'xA%' ESCAPE 'a'") == TEXT_TRUE  # lower-casing the pattern makes escapes
    assert cond("lower(msg) ILIKE '%a%'") == TEXT_TRUE
    # Spark: lower(alpha final-sigma) LIKE lower('%ALPHA SIGMA') is TRUE (full mapping, final sigma).
    final = "\u03b1\u03c2"
    assert satisfies(cond("msg ILIKE '%\u0391\u03a3'"), final)
    assert satisfies(cond("msg ILIKE '%\u0391\u03a3'"), "\u0391\u03a3")
    assert satisfies(cond("msg ILIKE 'İx'"), "i\u0307x") and satisfies(cond("msg ILIKE 'İx'"), "İX")


def test_words_of_text_match() -> None:
    source = "text_match(msg, 'Connection  REFUSED, connection')"
    condition = cond(source)
    assert isinstance(condition, TextMatch)
    assert condition.words == ("connection", "refused") and condition.fragments == ()
    assert cond("text_match(msg, ' ,; ')") == TEXT_TRUE
    assert cond("text_match(lower(msg), 'a')") == TEXT_TRUE


def test_text_match_value() -> None:
    assert text_match_value("Connection refused by peer", "refused CONNECTION") is True
    assert text_match_value("Connection refused", "refuse") is False
    assert text_match_value("foo-bar baz", "bar-foo") is True  # the query is tokenised the same way
    assert text_match_value("anything", "") is True
    assert text_match_value(None, "a") is None and text_match_value("a", None) is None
    assert words_of("İstanbul ΣΟΦΙΑ café_2") == {"istanbul", "σοφια", "café_2"}


def test_connectives_and_polarity() -> None:
    a, b = cond("msg LIKE '%ab%'"), cond("contains(msg, 'cd')")
    assert frags(a) == [("ab", False, False)] and frags(b) == [("cd", False, False)]
    assert cond("msg LIKE '%ab%' AND contains(msg, 'cd')") == TextAll((a, b))
    assert cond("msg LIKE '%ab%' OR (contains(msg, 'cd'))") == TextAny((a, b))
    assert cond("msg LIKE '%ab%' AND id = 3") == a
    assert cond("msg LIKE '%ab%' OR id = 3") == TEXT_TRUE
    # NOT (x OR y) is NOT x AND NOT y; NOT (NOT x) is x.
    assert cond("NOT (NOT msg LIKE '%ab%' OR id = 3)") == a
    assert cond("NOT (msg NOT LIKE '%ab%')") == TEXT_TRUE  # "is TRUE" after a NOT LIKE: no fragment
    assert cond("NOT (msg LIKE '%ab%' AND contains(msg, 'cd'))") == TEXT_TRUE
    # A branch that matches no row adds nothing to an OR.
    assert cond("msg LIKE NULL OR msg LIKE '%ab%'") == a
    assert cond("FALSE OR msg LIKE '%ab%'") == a
    assert cond("msg LIKE '%ab%' AND contains(msg, NULL)") == TEXT_TRUE


@pytest.mark.parametrize(
    ("where", "note"),
    [
        ("msg NOT LIKE '%ab%'", "must be FALSE"),
        ("NOT contains(msg, 'ab')", "under NOT must be FALSE"),
        ("msg LIKE '%'", "has no literal run"),
        ("msg LIKE '_%_'", "has no literal run"),
        ("strpos(msg, 'x') >= 0", "holds where the position is 0"),
        ("strpos(msg, 'x') < 1", "holds where the position is 0"),
        ("strpos(msg, 'x') > id", "no number literal"),
        ("strpos(msg, '') > 0", "has no literal run"),
        ("id LIKE '%1%'", "is over bigint column id"),
        ("concat(msg, 'x') LIKE '%ab%'", "is not over a string column or expression"),
        ("msg LIKE other", "pattern that is not a literal"),
        ("msg LIKE '%a%' ESCAPE '!!'", "not one character"),
        ("msg LIKE '%a%' ESCAPE '%'", "not one character"),
        ("regexp_like(msg, '(?i)abc')", "(? construct"),
        ("regexp_like(msg, 'a\\Qb')", "escape \\Q"),
        ("regexp_like(msg, 'a\\\nb')", "escape \\\\n"),
        ("regexp_like(msg, '[a\\\n]b')", "escape \\\\n in a class"),
        ("regexp_like(msg, 'a(?=b)')", "(? construct"),
        ("regexp_like(msg, 'ab++')", "possessive"),
        ("regexp_like(msg, 'a{,2}')", "not a bound"),
        ("regexp_like(msg, 'a]')", "where a character is expected"),
        ("regexp_like(msg, '[[:alpha:]]x')", "nested class"),
        ("regexp_like(msg, '.*|b')", "has no literal run every match contains"),
        ("regexp_like(msg, 'abc', 'i')", "is not a form the text index reads"),
        ("msg SIMILAR TO '%a%'", "is not a form the text index reads"),
        ("msg LIKE ANY ('%a%', '%b%')", "pattern that is not a literal"),
        ("text_match(msg, '...')", "has no word"),
        ("substring(lower(msg), 1, 3) LIKE '%a%'", "cases text inside an expression"),
        ("lower(lower(msg)) LIKE '%a%'", "cases its text twice"),
        ("length(msg) LIKE '%1%'", "is bigint, not a string"),
    ],
)
def test_unusable_atoms_keep_every_row_and_say_why(where: str, note: str) -> None:
    translation = text_condition(where, SCHEMA)
    assert translation.condition == TEXT_TRUE
    assert any(note in n for n in translation.notes), translation.notes
    assert all("\n" not in n for n in translation.notes)


def test_non_text_atoms_are_silent_and_unknown_columns_are_errors() -> None:
    assert text_condition("id = 3 AND msg = 'x'", SCHEMA) == text_condition("TRUE", SCHEMA)
    assert notes("id = 3") == ()
    with pytest.raises(InvalidInputError, match=r"unknown column 'nope'.*columns: msg, other, id"):
        text_condition("nope LIKE '%a%'", SCHEMA)
    with pytest.raises(InvalidInputError, match="unknown column 'nope'"):
        text_condition("id = 3 OR length(nope) > 2", SCHEMA)


def test_null_pattern_matches_no_row() -> None:
    assert cond("msg LIKE NULL") == TEXT_TRUE
    assert cond("msg LIKE NULL OR contains(msg, 'q')") == cond("contains(msg, 'q')")
    assert cond("strpos(msg, 'x') > NULL OR contains(msg, 'q')") == cond("contains(msg, 'q')")
    assert cond("msg LIKE 'a' ESCAPE NULL OR contains(msg, 'q')") == cond("contains(msg, 'q')")


def test_regex_alternation_and_groups() -> None:
    def leaf(fragments: tuple[Fragment, ...]) -> TextCondition:
        return TextMatch(MSG, fragments)

    def m(*texts: str) -> TextMatch:
        return TextMatch(MSG, tuple(Fragment(t) for t in texts))

    assert regex_condition("foo|bar", leaf) == TextAny((m("foo"), m("bar")))
    assert regex_condition("x(foo|bar)+y", leaf) == TextAll((m("x", "y"), TextAny((m("foo"), m("bar")))))
    assert regex_condition("x(foo|bar)?y", leaf) == m("x", "y")
    assert regex_condition("^(foo|bar)", leaf) == TextAny((m("foo"), m("bar")))  # no anchor inside
    assert regex_condition("^foo|^bar", leaf) == TextAny(
        (TextMatch(MSG, (Fragment("foo", at_start=True),)), TextMatch(MSG, (Fragment("bar", at_start=True),)))
    )
    assert regex_condition("foo|", leaf) == TEXT_TRUE
    assert regex_condition("", leaf) == TEXT_TRUE
    assert regex_condition("a{100}", leaf) == m("a" * 64, "a")
    assert regex_condition("[a\\]b]c", leaf) == m("c")
    assert isinstance(regex_condition("(ab", leaf), str)
    assert isinstance(regex_condition("ab)", leaf), str)
    assert isinstance(regex_condition("ab\\", leaf), str)


def test_like_fragments_never_empty() -> None:
    assert like_fragments("", None) == []
    assert like_fragments("%%__%", "!") == []
    assert like_fragments("\\", None) == []
    assert like_fragments("!", "!") == []


# The oracle ----------------------------------------------------------------------------------

_DUCK = duckdb.connect()
_DUCK.create_function(
    "text_match",
    text_match_value,
    [duckdb.sqltype("VARCHAR"), duckdb.sqltype("VARCHAR")],
    duckdb.sqltype("BOOLEAN"),
)


def _simple(text: str, case: Case) -> str:
    array = pa.array([text], pa.large_string())
    mapped = pc.utf8_lower(array) if case is Case.LOWER else pc.utf8_upper(array)
    result: str = mapped[0].as_py()
    return result


def forms(value: str, case: Case) -> set[str]:
    """The forms of `value` an engine may see as `case` of it: simple or full case mapping."""
    if case is Case.AS_IS:
        return {value}
    return {_simple(value, case), value.lower() if case is Case.LOWER else value.upper()}


def satisfies(condition: TextCondition, value: str) -> bool:
    if isinstance(condition, TextAll):
        return all(satisfies(part, value) for part in condition.parts)
    if isinstance(condition, TextAny):
        return any(satisfies(part, value) for part in condition.parts)
    if isinstance(condition, TextMatch):
        assert condition.subject.source == "msg"
        assert all(f.text for f in condition.fragments)
        assert not condition.words or condition.subject.case is Case.AS_IS
        return any(
            all(
                f.text in form
                and (not f.at_start or form.startswith(f.text))
                and (not f.at_end or form.endswith(f.text))
                for f in condition.fragments
            )
            and set(condition.words) <= words_of(form)
            for form in forms(value, condition.subject.case)
        )
    assert condition is TEXT_TRUE
    return True


def duck(sql: str, value: str | None, *params: Any) -> bool | None:
    """The SQL condition over a one-row table with `msg = value`; None for NULL or an error (an
    engine that rejects the pattern returns no row)."""
    try:
        row = _DUCK.execute(f"SELECT {sql} FROM (SELECT ?::VARCHAR AS msg) t", [*params, value]).fetchone()
    except duckdb.Error:
        return None
    assert row is not None
    result: bool | None = row[0]
    return result


def quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def case_agrees(*texts: str) -> bool:
    """DuckDB's lower / upper are one of the two mappings for these texts (it maps 'ß' to 'ẞ')."""
    for text in texts:
        row = _DUCK.execute("SELECT lower(?), upper(?)", [text, text]).fetchone()
        assert row is not None
        if row[0] not in forms(text, Case.LOWER) or row[1] not in forms(text, Case.UPPER):
            return False
    return True


ALPHABET = [
    *"aAbBxX01 .*+?()[]{}|^$\\!%_'\n\t",
    "İ",
    "\u0131",  # dotless i
    "i",
    "\u03a3",  # capital, small and final sigma
    "\u03c3",
    "\u03c2",
    "ß",
    "é",
    "e\u0301",
    "\u0307",
    "ǅ",
    "\u212a",
    "ﬁ",
    "ᾳ",
    "\u03b1\u03c2",
    "\u0391\u03a3",
    "i\u0307",
    "日本",
    "\U0001f600",
]
chars = st.one_of(st.sampled_from(ALPHABET), st.characters(codec="utf-8", exclude_characters="\x00"))
texts = st.lists(chars, max_size=12).map("".join)
# NULL now and then (st.one_of with st.none() draws NULL in most examples).
values = st.tuples(st.sampled_from([True] * 9 + [False]), texts).map(lambda t: t[1] if t[0] else None)


def _slice(data: st.DataObject, value: str | None) -> str:
    """Most often a piece of the value (so that atoms are often TRUE), else random text."""
    if value and data.draw(st.integers(0, 3)) > 0:
        i = data.draw(st.integers(0, len(value) - 1))
        j = data.draw(st.integers(i + 1, len(value)))
        return value[i:j]
    return data.draw(texts)


def like_pattern(data: st.DataObject, value: str | None, escape: str | None) -> str:
    out = ["%"] if data.draw(st.booleans()) else []
    for ch in _slice(data, value):
        action = data.draw(st.integers(0, 9))
        if action == 0:
            out.append("_")
            continue
        if action == 1:
            out.append("%")
        swapped = ch.swapcase() if action == 2 and len(ch.swapcase()) == 1 else ch  # for ILIKE
        if escape is not None and (swapped in "%_" or swapped == escape) and action != 3:
            out.append(escape)
        out.append(swapped)
    if data.draw(st.booleans()):
        out.append("%")
    return "".join(out)


_REGEX_SPECIAL = set("\\.^$|?*+()[]{}")


def regex_pattern(data: st.DataObject, value: str | None) -> str:
    """A regex in the subset that means the same in Java, Python and RE2, mostly built around
    pieces of the value."""
    out = ["^"] if data.draw(st.integers(0, 4)) == 0 else []
    for ch in _slice(data, value):
        action = data.draw(st.integers(0, 16))
        piece = "\\" + ch if ch in _REGEX_SPECIAL else ch
        if ch.isascii() and not ch.isprintable():
            piece = {"\n": "\\n", "\t": "\\t"}.get(ch, piece)
        out.append(
            {
                0: ".",
                1: "[^x]",
                2: f"{piece}+",
                3: f"{piece}?",
                4: f"(?:{piece}|zz)",
                5: f"({piece}|{piece}{piece})",
                6: f"{piece}{{1,2}}",
                7: f"{piece}*",
                8: "\\s",
                9: f"\\b{piece}",
                10: f"{piece}q?",
                11: f"{piece}(?:zz)*",
                12: f"{piece}[xy]{{0,2}}",
            }.get(action, piece)
        )
    if data.draw(st.integers(0, 4)) == 0:
        out.append("$")
    if data.draw(st.integers(0, 6)) == 0:
        out.append("|" + data.draw(st.sampled_from(["abc", "x.y", "q+"])))
    return "".join(out)


def subject_sql(data: st.DataObject) -> str:
    return data.draw(st.sampled_from(["msg", "msg", "lower(msg)", "upper(msg)"]))


def atom(data: st.DataObject, value: str | None) -> tuple[str, str, list[str]]:
    """A random text atom: (lakeprune SQL, DuckDB SQL, texts whose case mapping it uses)."""
    kind = data.draw(st.sampled_from(["like", "escape", "ilike", "strpos", "contains", "regex", "words"]))
    subject = subject_sql(data)
    if kind in ("like", "ilike", "escape"):
        escape = data.draw(st.sampled_from(["!", "\\", "a"])) if kind == "escape" else None
        pattern = like_pattern(data, value, escape)
        operator = "ILIKE" if kind == "ilike" else "LIKE"
        subject = "msg" if kind == "ilike" else subject
        negate = "NOT " if data.draw(st.integers(0, 5)) == 0 else ""
        sql = f"{subject} {negate}{operator} {quote(pattern)}"
        if escape is not None:
            sql += f" ESCAPE {quote(escape)}"
        return sql, sql, [pattern] if escape is None else [pattern, escape]
    if kind == "strpos":
        needle = _slice(data, value)
        form = data.draw(
            st.sampled_from(["strpos({s}, {n}) > 0", "strpos({s}, {n}) >= 1", "0 <> strpos({s}, {n})"])
        )
        sql = form.format(s=subject, n=quote(needle))
        return sql, sql, [needle]
    if kind == "contains":
        function = data.draw(st.sampled_from(["contains", "starts_with", "ends_with"]))
        needle = _slice(data, value)
        sql = f"{function}({subject}, {quote(needle)})"
        return sql, sql, [needle]
    if kind == "regex":
        regex = regex_pattern(data, value)
        return (
            f"regexp_like({subject}, {quote(regex)})",
            f"regexp_matches({subject}, {quote(regex)})",
            [regex],
        )
    query = " ".join(data.draw(st.lists(st.sampled_from([*sorted(words_of(value or "")), "a", "Zz", "-"]))))
    query = query.upper() if data.draw(st.booleans()) else query
    sql = f"text_match(msg, {quote(query)})"
    return sql, sql, [query]


def tree(data: st.DataObject, value: str | None, depth: int) -> tuple[str, str, list[str]]:
    choice = data.draw(st.integers(0, 5)) if depth > 0 else 0
    if choice <= 2:
        return atom(data, value)
    if choice == 3:
        ours, theirs, used = tree(data, value, depth - 1)
        return f"NOT ({ours})", f"NOT ({theirs})", used
    left, right = tree(data, value, depth - 1), tree(data, value, depth - 1)
    connective = "AND" if choice == 4 else "OR"
    return (
        f"({left[0]}) {connective} ({right[0]})",
        f"({left[1]}) {connective} ({right[1]})",
        left[2] + right[2],
    )


def reads_back(where: str, literals: list[str]) -> bool:
    """Whether lakeprune reads the string literals of `where` as DuckDB does (to sqlglot, a
    backslash before a quote escapes it; such patterns are not what these tests are about)."""
    try:
        found = [read_literal(node).value for node in parse(where).find_all(exp.Literal) if node.is_string]
    except InvalidInputError:
        return False
    return sorted(map(str, found)) == sorted(literals)


def check(where: str, duck_sql: str, value: str | None, used: list[str]) -> None:
    assume(reads_back(where, used))
    assume(value is None or case_agrees(value, *used))
    truth = duck(duck_sql, value)
    event(f"atom is {truth}")
    if truth is True:
        assert value is not None
        condition = cond(where)
        event("TRUE with a text requirement" if condition is not TEXT_TRUE else "TRUE without one")
        assert satisfies(condition, value), (where, value, condition)


_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(st.data(), values)
def test_every_true_atom_satisfies_its_condition(data: st.DataObject, value: str | None) -> None:
    where, duck_sql, used = atom(data, value)
    check(where, duck_sql, value, used)


@_SETTINGS
@given(st.data(), texts)
def test_like_without_escape_is_sound_under_spark_backslash_reading(data: st.DataObject, value: str) -> None:
    pattern = like_pattern(data, value, data.draw(st.sampled_from([None, "\\"])))
    where = f"msg LIKE {quote(pattern)}"
    assume(reads_back(where, [pattern]))
    for reading in (where, f"{where} ESCAPE '\\'"):  # Trino / DuckDB, and Spark's default escape
        if duck(reading, value) is True:
            assert satisfies(cond(where), value), (reading, value)


@_SETTINGS
@given(st.data(), texts)
def test_ilike_is_sound_under_spark_full_lower_casing(data: st.DataObject, value: str) -> None:
    """Spark's ILIKE is `lower(left) LIKE lower(right)` with the JVM's full case mapping (Python's)."""
    escape = data.draw(st.sampled_from([None, "!"]))
    pattern = like_pattern(data, value, escape)
    where = f"msg ILIKE {quote(pattern)}" + (f" ESCAPE {quote(escape)}" if escape else "")
    assume(reads_back(where, [pattern] if escape is None else [pattern, escape]))
    spark = "? LIKE ?" + (f" ESCAPE {quote(escape)}" if escape else "")
    try:
        row = _DUCK.execute(f"SELECT {spark}", [value.lower(), pattern.lower()]).fetchone()
    except duckdb.Error:
        return
    if row is not None and row[0] is True:
        assert satisfies(cond(where), value), (where, value)


@_SETTINGS
@given(st.data(), values)
def test_every_true_tree_satisfies_its_condition(data: st.DataObject, value: str | None) -> None:
    where, duck_sql, used = tree(data, value, depth=3)
    check(where, duck_sql, value, used)


@_SETTINGS
@given(st.data(), texts)
def test_regex_runs_are_sound_under_python_re(data: st.DataObject, value: str) -> None:
    """The subset read means the same in Python's `re` as in RE2 (DuckDB) and Java."""
    regex = regex_pattern(data, value)
    if re.search(regex, value):
        condition = regex_condition(regex, lambda fragments: TextMatch(MSG, fragments))
        assert not isinstance(condition, str)
        assert satisfies(condition, value), (regex, value, condition)


@settings(max_examples=200, deadline=None)
@given(texts, texts)
def test_text_match_value_is_word_containment(value: str, query: str) -> None:
    result = text_match_value(value, query)
    assert result is (words_of(query) <= words_of(value))
    where = f"text_match(msg, {quote(query)})"
    if result and reads_back(where, [query]):
        assert satisfies(cond(where), value)
