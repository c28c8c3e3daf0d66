"""pruner.index.tokenizers: a file's terms and the terms a fragment or word requires, computed by
the same functions. The soundness of the text index rests on one property per tokenizer: whatever a
value contains, the terms its fragments (and words) require are among the value's terms."""

from __future__ import annotations

import re
from unittest import mock

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.index import tokenizers
from pruner.index.tokenizers import Tokenizer, TokenizerName, case_forms
from pruner.predicate.text import Case, Fragment, simple_lower

# Characters where tokenising goes wrong if anything does: case mappings that change length or
# depend on context, combining marks (not word characters), non-BMP code points, separators.
TRICKY = "aAbB_ 1.-İiI\u0131\u0307é\u0301ßẞΣ\u03c3ςǅﬁ😀\U0001d400\u00a0\t"
texts = st.text(st.sampled_from(TRICKY), max_size=30) | st.text(st.characters(codec="utf-8"), max_size=30)
NGRAMS = [Tokenizer(TokenizerName.NGRAM, n) for n in range(tokenizers.MIN_N, tokenizers.MAX_N + 1)]
WORDS = Tokenizer(TokenizerName.WORDS)


def _terms(tokenizer: Tokenizer, values: list[str | None]) -> set[int]:
    return set(tokenizer.terms(pa.array(values, pa.string())).tolist())


def _required(tokenizer: Tokenizer, fragment: Fragment) -> set[int]:
    return set(tokenizer.fragment_terms(fragment).tolist())


@st.composite
def value_and_fragment(draw: st.DrawFn) -> tuple[str, Fragment]:
    value = draw(texts)
    start = draw(st.integers(0, len(value)))
    end = draw(st.integers(start, len(value)))
    # anchored only where the fragment really begins / ends the value
    at_start = start == 0 and draw(st.booleans())
    at_end = end == len(value) and draw(st.booleans())
    return value, Fragment(value[start:end], at_start, at_end)


@given(st.lists(texts, max_size=6))
def test_code_points_are_decoded_from_utf8_as_python_reads_them(values: list[str]) -> None:
    array = pa.array(["x", *values], pa.large_string()).slice(1)  # a sliced array has an offset
    points, offsets = tokenizers._code_points(array)
    assert [chr(p) for p in points.tolist()] == list("".join(values))
    assert offsets.tolist() == [0, *np.cumsum([len(v) for v in values]).tolist()]


@pytest.mark.parametrize("tokenizer", NGRAMS, ids=Tokenizer.describe)
@given(case=value_and_fragment(), others=st.lists(texts, max_size=3))
def test_ngrams_a_fragment_requires_are_in_every_value_holding_it(
    tokenizer: Tokenizer, case: tuple[str, Fragment], others: list[str]
) -> None:
    value, fragment = case
    assert _required(tokenizer, fragment) <= _terms(tokenizer, [*others, value, None])


@pytest.mark.parametrize("tokenizer", NGRAMS, ids=Tokenizer.describe)
@given(values=st.lists(texts, max_size=5))
def test_ngrams_are_the_runs_of_n_code_points_of_each_value(tokenizer: Tokenizer, values: list[str]) -> None:
    n = tokenizer.n
    grams = {v[i : i + n] for v in values for i in range(len(v) - n + 1)}
    terms = _terms(tokenizer, list(values))
    # no gram spans two values, every gram is found, and (n <= 3) distinct grams have distinct ids
    assert terms == set().union(*(_required(tokenizer, Fragment(g)) for g in grams))
    if n <= 3:
        assert len(terms) == len(grams)


def test_values_and_fragments_shorter_than_n_have_no_terms() -> None:
    trigrams = NGRAMS[1]
    assert trigrams.n == 3
    assert _terms(trigrams, ["ab", "", None, "😀é"]) == set()
    assert _required(trigrams, Fragment("ab", at_start=True, at_end=True)) == set()
    assert len(_required(trigrams, Fragment("abcd"))) == 2


def test_ngrams_are_case_sensitive_and_exact() -> None:
    trigrams = NGRAMS[1]
    assert not _required(trigrams, Fragment("Time")) <= _terms(trigrams, ["a timeout"])
    assert not _required(trigrams, Fragment("e\u0301t")) <= _terms(trigrams, ["éte"])  # composed é


def test_terms_of_a_file_are_computed_a_slice_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    values = [f"value {i} with some text ü{i * 7}" for i in range(300)]
    for tokenizer in (NGRAMS[1], WORDS):
        whole = tokenizer.terms(pa.array(values))
        monkeypatch.setattr(tokenizers, "SLICE_BYTES", 64)
        assert len(tokenizers._slices(tokenizers._distinct(pa.array(values)))) > 50
        assert np.array_equal(tokenizer.terms(pa.array(values)), whole)
        monkeypatch.undo()


@pytest.mark.parametrize("tokenizer", NGRAMS, ids=Tokenizer.describe)
@given(values=st.lists(st.text(st.sampled_from("ab c\x7féß"), max_size=12), max_size=5))
def test_grams_of_few_code_points_are_found_by_table_as_by_sorting(
    tokenizer: Tokenizer, values: list[str]
) -> None:
    array = pa.array(values)
    assert max((ord(c) for v in values for c in v), default=0) < 256
    dense = tokenizer.terms(array)
    with mock.patch.object(tokenizers, "DENSE_GRAMS", 0):
        assert np.array_equal(tokenizer.terms(array), dense)


@given(st.text(st.sampled_from(TRICKY), max_size=30) | st.text(max_size=30), st.data())
def test_arrow_lowering_is_per_code_point(value: str, data: st.DataObject) -> None:
    """What words rest on: the lowered text of a fragment is the lowered text of the value there."""
    value = tokenizers._encodable(value)
    start = data.draw(st.integers(0, len(value)))
    end = data.draw(st.integers(start, len(value)))
    lowered = simple_lower(value)
    assert len(lowered) == len(value)
    assert simple_lower(value[start:end]) == lowered[start:end]


@given(case=value_and_fragment(), others=st.lists(texts, max_size=3))
def test_words_a_fragment_requires_are_in_every_value_holding_it(
    case: tuple[str, Fragment], others: list[str]
) -> None:
    value, fragment = case
    assert _required(WORDS, fragment) <= _terms(WORDS, [*others, value])


@given(texts)
def test_words_of_a_value_require_themselves(value: str) -> None:
    words = re.findall(r"\w+", simple_lower(value))
    terms = _terms(WORDS, [value])
    assert len(terms) == len(set(words))
    for word in words:
        assert (required := set(WORDS.word_terms(word).tolist())) and required <= terms
    # a whole anchored value requires all its words
    assert _required(WORDS, Fragment(value, at_start=True, at_end=True)) == terms


def test_words_a_fragment_requires_are_the_ones_it_delimits() -> None:
    def words(fragment: Fragment) -> set[int]:
        return _required(WORDS, fragment)

    def ids(*names: str) -> set[int]:
        return set().union(*(set(WORDS.word_terms(name).tolist()) for name in names))

    assert words(Fragment("connection timeout after")) == ids("timeout")
    assert words(Fragment("connection timeout after", at_start=True)) == ids("connection", "timeout")
    assert words(Fragment("connection timeout after", at_end=True)) == ids("timeout", "after")
    assert words(Fragment("Connection TIMEOUT. After", True, True)) == ids("connection", "timeout", "after")
    assert words(Fragment("timeout")) == set()
    assert words(Fragment(" timeout ")) == ids("timeout")
    assert ids("TimeOut") == ids("timeout")
    assert WORDS.word_terms("two words").size == 0 and WORDS.word_terms("").size == 0


def test_ngram_tokenizer_answers_no_word() -> None:
    assert NGRAMS[1].word_terms("timeout").size == 0


@pytest.mark.parametrize("case", [Case.LOWER, Case.UPPER])
@given(value=texts, data=st.data())
def test_case_forms_hold_both_case_mappings(case: Case, value: str, data: st.DataObject) -> None:
    """An engine's lower / upper is Arrow's, the full one (Spark) or the JVM's per code point
    (Trino): the fragments of any are found in the terms of the case forms."""
    forms = case_forms(pa.array([value, None]), case)
    simple = (pc.utf8_lower if case is Case.LOWER else pc.utf8_upper)(pa.array([value]))[0].as_py()
    full = value.lower() if case is Case.LOWER else value.upper()
    # The JVM's Character.toLowerCase / toUpperCase: a code point mapped to one, else kept
    jvm = "".join(
        m if len(m := (ch.lower() if case is Case.LOWER else ch.upper())) == 1 else ch for ch in value
    )
    trigrams = NGRAMS[1]
    terms = set(trigrams.terms(forms).tolist())
    for mapped in (simple, full, jvm):
        start = data.draw(st.integers(0, len(mapped)))
        fragment = Fragment(mapped[start : start + data.draw(st.integers(0, 8))])
        assert _required(trigrams, fragment) <= terms


def test_case_forms_of_ascii_are_one_mapping() -> None:
    assert case_forms(pa.array(["AbC", "abc", None]), Case.LOWER).to_pylist() == ["abc"]
    assert case_forms(pa.array(["AbC"]), Case.AS_IS).to_pylist() == ["AbC"]
    # Arrow's, the full mapping, and the JVM's per code point (Trino's upper keeps 'ß')
    assert sorted(case_forms(pa.array(["Straße"]), Case.UPPER).to_pylist()) == ["STRASSE", "STRAßE", "STRAẞE"]
    lowered = case_forms(pa.array(["İstanbul"]), Case.LOWER).to_pylist()
    assert sorted(lowered) == ["istanbul", "i̇stanbul", "İstanbul"]


def test_n_must_be_in_range() -> None:
    with pytest.raises(ValueError, match="between 2 and 5"):
        Tokenizer(TokenizerName.NGRAM, 6)


@settings(max_examples=50)
@given(st.text(max_size=10))
def test_a_fragment_with_a_lone_surrogate_is_tokenised(text: str) -> None:
    fragment = Fragment(text + "\ud800" + text)
    for tokenizer in (NGRAMS[1], WORDS):
        tokenizer.fragment_terms(fragment)  # no error: such a fragment matches no stored value
