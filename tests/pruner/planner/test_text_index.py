"""The text index step, without storage: files of random text, their rows computed by the text kind,
and the step run against them through a context that serves those rows. The invariant: a file
holding a row that matches the text condition (scanned with Python's `in` and the words tokenizer's
words, under either case mapping an engine may use) is never removed; and the notes say what was
looked up and what could not be."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pruner.format.config import TableConfig
from pruner.functions.parsing import parse_sql
from pruner.index.defining import define
from pruner.index.definitions import IndexDefinition, IndexState
from pruner.index.kinds import kind_of
from pruner.index.kinds.text import subject_of
from pruner.metadata.files_index import DataFile
from pruner.planner.steps import text_index
from pruner.planner.steps.base import InPlay, Skipped, StepContext, Verdict
from pruner.planner.steps.text_index import TextIndex
from pruner.predicate.text import (
    TEXT_TRUE,
    Case,
    Fragment,
    TextAll,
    TextAny,
    TextCondition,
    TextMatch,
    TextPredicate,
    TextSubject,
    all_of,
    any_of,
)
from pruner.predicate.text_subjects import text_subject
from pruner.types import TableSchema

CONFIG = TableConfig("t", TableSchema.parse("id bigint, msg string, note string"), ("id",))
MSG, LOWER_MSG = TextSubject("msg"), TextSubject("msg", Case.LOWER)


def _index(name: str, sql_subject: str, **options: str) -> IndexDefinition:
    column, expression = (None, sql_subject) if "(" in sql_subject else (sql_subject, None)
    definition = define(CONFIG, [], name, "text", [column] if column else [], options, expression)
    return definition.ready("0001")


@dataclass
class _Table:
    definitions: list[IndexDefinition]


@dataclass
class _Context:
    """What the step reads of a `StepContext`: the definitions, the text condition, the index rows
    of the files (`files`: partition, file name -> the `msg` values) and the deadline."""

    files: dict[tuple[str, str], list[str | None]]
    definitions: list[IndexDefinition]
    condition: TextCondition
    notes: tuple[str, ...] = ()
    damaged: dict[tuple[str, str], bytes | None] = field(default_factory=dict)
    unindexed: set[tuple[str, str]] = field(default_factory=set)

    @property
    def text(self) -> TextPredicate:
        return TextPredicate(self.condition, self.notes)

    @property
    def table(self) -> _Table:
        return _Table(self.definitions)

    @property
    def schema(self) -> TableSchema:
        return CONFIG.schema

    def rows_for(self, definition: IndexDefinition, in_play: InPlay) -> pa.Table:
        kind = kind_of(definition.index_type)
        parts = []
        for (partition, name), values in self.files.items():
            if (partition, name) in self.unindexed:
                continue
            data = pa.table({"msg": pa.array(values, pa.string())})
            row = kind.file_rows(data, CONFIG.schema, definition, partition, name)
            assert row is not None
            if (partition, name) in self.damaged:
                row = row.set_column(3, "filter", pa.array([self.damaged[(partition, name)]], pa.binary()))
            parts.append(row)
        return pa.concat_tables(parts)

    def check_deadline(self) -> None:
        return None

    def data_files(self) -> list[DataFile]:
        return [DataFile(p, n, n, "0001", 1, len(v)) for (p, n), v in self.files.items()]

    def kept(self) -> tuple[set[str], Verdict | Skipped]:
        files = self.data_files()
        outcome = TextIndex().plan(cast(StepContext, self), InPlay.of(files))
        if isinstance(outcome, Skipped):
            return {f.file_name for f in files}, outcome
        # two files per batch, as the planner streams them (a verdict decides each batch alone)
        return {
            f.file_name for i in range(0, len(files), 2) for f in outcome.filter.keep(files[i : i + 2])
        }, outcome


# The oracle ------------------------------------------------------------------------------------


def _forms(value: str, case: Case) -> list[str]:
    """The texts an engine may compare: the value, or its simple or full case mapping."""
    if case is Case.AS_IS:
        return [value]
    simple = (pc.utf8_lower if case is Case.LOWER else pc.utf8_upper)(pa.array([value]))[0].as_py()
    return [simple, value.lower() if case is Case.LOWER else value.upper()]


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", pc.utf8_lower(pa.array([text]))[0].as_py()))


def _leaf_matches(leaf: TextMatch, value: str | None) -> bool:
    if value is None:
        return False
    for text in _forms(value, leaf.subject.case):
        if all(
            f.text in text
            and (not f.at_start or text.startswith(f.text))
            and (not f.at_end or text.endswith(f.text))
            for f in leaf.fragments
        ) and all(_words(w) <= _words(text) and len(_words(w)) == 1 for w in leaf.words):
            return True
    return False


def _matches(condition: TextCondition, value: str | None) -> bool:
    if isinstance(condition, TextMatch):
        return _leaf_matches(condition, value)
    if isinstance(condition, TextAll):
        return all(_matches(p, value) for p in condition.parts)
    if isinstance(condition, TextAny):
        return any(_matches(p, value) for p in condition.parts)
    return True


# Random files and conditions -------------------------------------------------------------------

ALPHABET = "abcAB İiß\u0307é\u0301Σ\u03c3ς._-😀"
values = st.one_of(st.none(), st.text(st.sampled_from(ALPHABET), max_size=12))
files = st.lists(st.lists(values, min_size=1, max_size=4), min_size=1, max_size=6)


@st.composite
def fragments(draw: st.DrawFn, texts: Sequence[str]) -> Fragment:
    """A fragment of one of `texts` (so that some rows match) or of random text."""
    source = draw(st.sampled_from(list(texts)) | st.text(st.sampled_from(ALPHABET), max_size=6))
    start = draw(st.integers(0, len(source)))
    end = draw(st.integers(start, min(len(source), start + 6)))
    at_start = start == 0 and draw(st.booleans())
    at_end = end == len(source) and draw(st.booleans())
    return Fragment(source[start:end], at_start, at_end)


@st.composite
def conditions(draw: st.DrawFn, texts: Sequence[str], depth: int = 2) -> TextCondition:
    if depth == 0 or draw(st.booleans()):
        subject = draw(st.sampled_from([MSG, LOWER_MSG, TextSubject("note")]))
        found = draw(st.lists(fragments(texts), min_size=0, max_size=2))
        words = draw(st.lists(st.sampled_from(["ab", "abc", "ß", "i", "a_b"]), max_size=1))
        if not found and not words:
            return TEXT_TRUE
        return TextMatch(subject, tuple(found), tuple(words), "leaf")
    parts = draw(st.lists(conditions(texts, depth - 1), min_size=1, max_size=3))
    return all_of(parts) if draw(st.booleans()) else any_of(parts)


INDEXES = {
    "trigrams": [_index("grams", "msg")],
    "bigrams_lower": [_index("grams", "lower(msg)", n="2")],
    "words": [_index("words", "msg", tokenizer="words")],
    "all": [
        _index("grams", "msg"),
        _index("lower_words", "lower(msg)", tokenizer="words"),
        _index("lower_grams", "lower(msg)", n="4"),
    ],
}


@pytest.mark.parametrize("indexes", INDEXES.values(), ids=INDEXES.keys())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), contents=files)
def test_a_file_holding_a_matching_row_is_never_removed(
    indexes: list[IndexDefinition], data: st.DataObject, contents: list[list[str | None]]
) -> None:
    # fragments are drawn from the values and from their lower-cased forms (both mappings)
    texts = [t for values in contents for v in values if v for t in (v, *_forms(v, Case.LOWER))] or [""]
    condition = data.draw(conditions(texts))
    by_key = {("p=1" if i % 2 else "p=0", f"f{i}"): values for i, values in enumerate(contents)}
    context = _Context(by_key, indexes, condition)
    kept, _ = context.kept()
    matching = {name for (_, name), rows in by_key.items() if any(_matches(condition, v) for v in rows)}
    assert matching <= kept


# Indexes over string expressions (issue 38): the index holds the terms of the expression's values,
# the oracle computes the expression for every row and matches the leaf against it.
EXPRESSIONS = [
    "substring(msg, 2, 4)",
    "trim(msg)",
    "regexp_extract(msg, '([a-c]+)', 1)",
    "coalesce(msg, 'abc')",  # a NULL text has a value
    "lower(substring(msg, 1, 5))",
    "upper(trim(msg))",
    "CASE WHEN length(msg) > 3 THEN substring(msg, 1, 3) ELSE msg END",
    "CASE WHEN length(msg) > 3 THEN 'long' ELSE 'short' END",  # no text of the column's
]


@pytest.mark.parametrize(
    "options", [{}, {"n": "2"}, {"tokenizer": "words"}], ids=["trigrams", "bigrams", "words"]
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), contents=files, expression=st.sampled_from(EXPRESSIONS))
def test_an_index_over_an_expression_never_removes_a_matching_file(
    options: dict[str, str], data: st.DataObject, contents: list[list[str | None]], expression: str
) -> None:
    definition = _index("over", expression, **options)
    subject = subject_of(definition, CONFIG.schema)
    types = {c.name: c.type for c in CONFIG.schema.columns}
    values = text_subject(parse_sql(expression), types, expression).values
    computed = [[values.value(msg=v) for v in rows] for rows in contents]
    texts = [t for rows in computed for v in rows if v for t in (v, *_forms(v, subject.case))] or [""]
    leaves_drawn = data.draw(st.lists(fragments(texts), min_size=1, max_size=3))
    condition = any_of([TextMatch(subject, (f,), (), "leaf") for f in leaves_drawn])
    if data.draw(st.booleans()):
        condition = all_of([TextMatch(subject, (f,), (), "leaf") for f in leaves_drawn])
    by_key = {("p=1" if i % 2 else "p=0", f"f{i}"): rows for i, rows in enumerate(contents)}
    kept, _ = _Context(by_key, [definition], condition).kept()
    matching = {f"f{i}" for i, rows in enumerate(computed) if any(_matches(condition, v) for v in rows)}
    assert matching <= kept, (expression, computed)


# What it prunes, and its notes -----------------------------------------------------------------

LOGS = {
    ("p=0", "a"): ["connection timeout after 5s", "ok"],
    ("p=0", "b"): ["disk full", None],
    ("p=1", "c"): ["Connection reset by peer", "retrying"],
}


def _leaf(*texts: str, subject: TextSubject = MSG, words: tuple[str, ...] = ()) -> TextMatch:
    return TextMatch(subject, tuple(Fragment(t) for t in texts), words, f"msg ~ {'/'.join(texts + words)}")


def _run(condition: TextCondition, *indexes: IndexDefinition) -> tuple[set[str], Verdict | Skipped]:
    return _Context(dict(LOGS), list(indexes or [_index("grams", "msg")]), condition).kept()


def test_a_fragment_keeps_only_the_files_that_may_hold_it() -> None:
    kept, outcome = _run(_leaf("timeout"))
    assert kept == {"a"}
    assert isinstance(outcome, Verdict)
    assert outcome.filter.notes() == ("grams: 5 3-grams of 'timeout' looked up in 3 files",)


def test_or_keeps_a_file_holding_either_and_and_needs_both() -> None:
    assert _run(TextAny((_leaf("timeout"), _leaf("disk"))))[0] == {"a", "b"}
    assert _run(TextAll((_leaf("timeout"), _leaf("disk"))))[0] == set()
    assert _run(TextAny((_leaf("timeout"), TextMatch(LOWER_MSG, (Fragment("disk"),)))))[0] == {"a", "b", "c"}


def test_case_needs_an_index_on_the_same_subject() -> None:
    lowered = TextMatch(LOWER_MSG, (Fragment("connection"),), (), "lower(msg) LIKE '%connection%'")
    kept, outcome = _run(lowered)
    assert kept == {"a", "b", "c"} and isinstance(outcome, Skipped)
    assert "lower(msg) LIKE '%connection%': no ready text index on lower(msg)" in outcome.reason
    kept, _ = _run(lowered, _index("grams", "msg"), _index("lower_grams", "lower(msg)"))
    assert kept == {"a", "c"}
    assert _run(_leaf("connection"), _index("grams", "msg"))[0] == {"a"}  # case-sensitive


def test_short_fragments_and_words_on_ngrams_require_nothing() -> None:
    kept, outcome = _run(_leaf("ok", "di"))
    assert kept == {"a", "b", "c"} and isinstance(outcome, Skipped)
    assert "fragments shorter than 3 require nothing: 'ok', 'di'" in outcome.reason
    kept, outcome = _run(_leaf(words=("disk",)))
    assert kept == {"a", "b", "c"} and isinstance(outcome, Skipped)
    assert "words are answered by a words index" in outcome.reason


def test_words_index_answers_delimited_words_and_words() -> None:
    words = _index("words", "msg", tokenizer="words")
    assert _run(_leaf(words=("TIMEOUT",)), words)[0] == {"a"}
    assert _run(_leaf(" full"), words)[0] == {"a", "b", "c"}  # 'full' is not delimited on the right
    kept, outcome = _run(TextMatch(MSG, (Fragment(" full", at_end=True),), (), "x"), words)
    assert kept == {"b"}
    kept, outcome = _run(_leaf("time"), words)
    assert (
        isinstance(outcome, Skipped) and "fragments holding no whole word require nothing" in outcome.reason
    )


def test_stop_grams_are_counted() -> None:
    logs = {("p=0", "a"): ["GET /x timeout"], ("p=0", "b"): ["GET /y"], ("p=1", "c"): ["GET /z"]}
    context = _Context(logs, [_index("grams", "msg")], _leaf("GET /", "timeout"))
    kept, outcome = context.kept()
    assert kept == {"a"} and isinstance(outcome, Verdict)
    # 'GET', 'ET ', 'T /' are in every file: they prune nothing
    looked_up = "grams: 8 3-grams of 'GET /', 'timeout' looked up in 3 files"
    assert outcome.filter.notes() == (f"{looked_up}; 3 of them in every file (stop-grams)",)


def test_a_file_without_a_row_or_with_a_malformed_filter_is_kept() -> None:
    context = _Context(dict(LOGS), [_index("grams", "msg")], _leaf("timeout"))
    context.unindexed.add(("p=0", "b"))
    context.damaged[("p=1", "c")] = b"\x00" * 33
    assert context.kept()[0] == {"a", "b", "c"}
    context.damaged[("p=1", "c")] = None
    assert context.kept()[0] == {"a", "b", "c"}


def test_no_text_condition_or_no_ready_index_skips() -> None:
    assert _run(TEXT_TRUE)[1] == Skipped("no text predicate")
    unused = "msg NOT LIKE '%x%': NOT LIKE never prunes"
    assert _Context(dict(LOGS), [_index("grams", "msg")], TEXT_TRUE, (unused,)).kept()[1] == Skipped(unused)
    building = define(CONFIG, [], "grams", "text", ["msg"], {})
    assert building.state == IndexState.BUILDING
    _, outcome = _run(_leaf("timeout"), building)
    assert isinstance(outcome, Skipped) and "index grams is still building" in outcome.reason
    assert _Context(dict(LOGS), [], _leaf("timeout")).kept()[1] == Skipped("no text index")


def test_the_deadline_is_checked_between_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    context = _Context(dict(LOGS), [_index("grams", "msg")], _leaf("timeout"))
    monkeypatch.setattr(context, "check_deadline", lambda: calls.append(1))
    monkeypatch.setattr(text_index, "FILES_PER_SLICE", 1)
    assert context.kept()[0] == {"a"}
    assert len(calls) == 1  # between the two slices of the first batch (of two files)
