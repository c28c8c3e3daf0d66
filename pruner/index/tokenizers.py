"""The terms of the text index (issue 37): what a file's text is broken into at write time, and
what a `Fragment` or a word of a text condition requires at query time, by the same functions so
that the two sides cannot disagree. A term is a uint64 id, inserted into a file's bloom filter.

- `ngram` (n from 2 to 5, default 3): every run of n consecutive code points of a value. A gram
  never spans two values, and a value shorter than n contributes nothing. Its id is the
  polynomial `sum(cp[i] * 0x110001 ** (n - 1 - i))` in uint64 arithmetic (wrapping), then
  MurmurHash3's 64-bit finaliser (a bijection) to spread the bits; for n <= 3 the polynomial
  cannot wrap, so distinct grams have distinct ids. A fragment of length >= n requires each of
  its grams; a shorter one requires nothing.
- `words`: the maximal runs of Python's Unicode `\\w` in the value lower-cased by Arrow's
  `utf8_lower` (Unicode simple case mapping, one code point to one, the same for every code
  point wherever it stands), hashed as UTF-8 strings by `bloom.hash_values`. Lowering before
  tokenising, code point by code point, keeps a fragment's lower-cased text exactly the
  lower-cased text of the value where it occurs (Python's `str.lower` would not: `'İ'` becomes
  two code points and a final `'Σ'` depends on what follows). A fragment requires the runs it
  holds whole: delimited on both sides within it by a non-word character, or by the start / end
  of the value where it is anchored there (`at_start` / `at_end`); so `'connection timeout
  after'` requires `timeout` only. A word of a condition requires itself, lower-cased the same
  way, when it is one run (`\\w+`); otherwise nothing.

Case forms (`case_forms`): an index on `lower(col)` / `upper(col)` answers predicates the engine
evaluates with its own case mapping: the full one (Spark and Python's `str.lower`: `'ß'` -> `'SS'`,
`'İ'` -> `'i̇'`) or one code point at a time, where Arrow's (utf8proc) and the JVM's
(`Character.toUpperCase`, Trino's `upper`) differ: Arrow upper-cases `'ß'` to `'ẞ'`, the JVM keeps
`'ß'`, having no single-code-point mapping for it. The index takes the terms of three forms of each
value — Arrow's, the full one, and each code point's full mapping where that is one code point, else
the code point itself (the JVM's `'ß'`; for `'İ'`, whose JVM mapping `'i'` Arrow's form has, only an
extra form) — so a fragment of any engine's mapping is found."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pruner.index import bloom
from pruner.index.bloom import U64Array
from pruner.predicate.text import WORD, Case, Fragment, simple_lower

MIN_N = 2
MAX_N = 5
DEFAULT_N = 3
# Larger than every code point (0x10FFFF), so that a gram's code points are its digits in this base.
GRAM_BASE = np.uint64(0x110001)
# Text tokenised at once, in UTF-8 bytes: bounds the numpy arrays of a file with much text.
SLICE_BYTES = 8 * 1024 * 1024
# Grams of few distinct code points (base ** n up to this) are collected in a table of that many
# flags instead of being sorted: 128 ** 3 for ASCII trigrams, 2 MiB against a sort of millions.
DENSE_GRAMS = 1 << 24
_EMPTY: U64Array = np.zeros(0, dtype=np.uint64)
# The payload bits of a UTF-8 lead byte, by the code point's width in bytes.
_LEAD_BITS = np.array([0, 0x7F, 0x1F, 0x0F, 0x07], dtype=np.uint32)


class TokenizerName(StrEnum):
    NGRAM = "ngram"
    WORDS = "words"


@dataclass(frozen=True)
class Tokenizer:
    """How text becomes terms (the module docstring): `name`, and `n` for n-grams."""

    name: TokenizerName
    n: int = DEFAULT_N

    def __post_init__(self) -> None:
        if not MIN_N <= self.n <= MAX_N:
            raise ValueError(f"n must be between {MIN_N} and {MAX_N}, got {self.n}")

    def describe(self) -> str:
        return f"{self.n}-grams" if self.name is TokenizerName.NGRAM else "words"

    def terms(self, texts: pa.Array | pa.ChunkedArray) -> U64Array:
        """The distinct term ids of the non-null values of a string array, sorted."""
        distinct = _distinct(texts)
        parts = [self._terms_of(part) for part in _slices(distinct)]
        return _unique(np.concatenate(parts)) if parts else _EMPTY

    def fragment_terms(self, fragment: Fragment) -> U64Array:
        """The term ids every value containing `fragment` (anchored as it says) has, sorted."""
        text = _encodable(fragment.text)
        if self.name is TokenizerName.NGRAM:
            grams = self._terms_of(pa.array([text], pa.large_string())) if len(text) >= self.n else _EMPTY
            return _unique(grams)
        lowered = simple_lower(text)
        whole = [
            m.group()
            for m in WORD.finditer(lowered)
            if (m.start() > 0 or fragment.at_start) and (m.end() < len(lowered) or fragment.at_end)
        ]
        return _word_ids(whole)

    def word_terms(self, word: str) -> U64Array:
        """The term ids every value with word token `word` has: its own, for the words tokenizer,
        when it is one run of word characters once lower-cased; none otherwise."""
        if self.name is TokenizerName.NGRAM:
            return _EMPTY
        lowered = simple_lower(_encodable(word))
        return _word_ids([lowered]) if WORD.fullmatch(lowered) else _EMPTY

    def _terms_of(self, texts: pa.LargeStringArray) -> U64Array:
        if self.name is TokenizerName.NGRAM:
            return _gram_ids(texts, self.n)
        # A space is no word character: runs never span two values.
        return _word_ids(WORD.findall(" ".join(pc.utf8_lower(texts).to_pylist())))


def case_forms(values: pa.Array | pa.ChunkedArray, case: Case) -> pa.LargeStringArray:
    """The distinct forms of the non-null values an engine may see as `case` of them: the values
    themselves, or their simple and their full case mappings (module docstring)."""
    distinct = _distinct(values)
    if case is Case.AS_IS:
        return distinct
    simple = pc.utf8_lower(distinct) if case is Case.LOWER else pc.utf8_upper(distinct)
    # The mappings differ only outside ASCII: map those values in Python.
    others = distinct.filter(pc.invert(pc.string_is_ascii(distinct))).to_pylist()
    full = [s.lower() if case is Case.LOWER else s.upper() for s in others]
    per_code_point = [_per_code_point(s, case) for s in others]
    forms = [simple, pa.array(full, pa.large_string()), pa.array(per_code_point, pa.large_string())]
    return _distinct(pa.chunked_array(forms, pa.large_string()))


def _per_code_point(text: str, case: Case) -> str:
    """`text` mapped one code point at a time, as the JVM's `Character.toLowerCase` /
    `toUpperCase` do where they differ from Arrow's: a code point whose full mapping is longer than
    one stays as it is."""
    mapped = (ch.lower() if case is Case.LOWER else ch.upper() for ch in text)
    return "".join(m if len(m) == 1 else ch for ch, m in zip(text, mapped, strict=True))


def _encodable(text: str) -> str:
    """`text` with any lone surrogate replaced: no stored value holds one, so a fragment with one
    matches no value and whatever it requires is sound."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _distinct(values: pa.Array | pa.ChunkedArray) -> pa.LargeStringArray:
    distinct = pc.unique(pc.drop_null(pc.cast(values, pa.large_string())))
    if isinstance(distinct, pa.ChunkedArray):
        distinct = distinct.combine_chunks()
    return distinct


def _slices(texts: pa.LargeStringArray) -> list[pa.LargeStringArray]:
    """`texts` in runs of whole values of about `SLICE_BYTES` of UTF-8 each (a longer value alone)."""
    if len(texts) == 0:
        return []
    offsets = np.frombuffer(texts.buffers()[1], dtype=np.int64)[texts.offset : texts.offset + len(texts) + 1]
    bounds = np.searchsorted(offsets, np.arange(offsets[0], offsets[-1], SLICE_BYTES), side="right") - 1
    cuts = sorted({int(b) for b in bounds} | {0, len(texts)})
    return [texts.slice(a, b - a) for a, b in itertools.pairwise(cuts) if b > a]


def _code_points(texts: pa.LargeStringArray) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """The code points of all values one after another, and where each value's begin (offsets in
    code points, one more than values), decoded from the UTF-8 buffer with array operations."""
    offsets = np.frombuffer(texts.buffers()[1], dtype=np.int64)[texts.offset : texts.offset + len(texts) + 1]
    data_buffer = texts.buffers()[2]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    utf8 = data[offsets[0] : offsets[-1]]
    if not (utf8 & 0x80).any():  # ASCII: a byte is a code point
        return utf8.astype(np.uint64), offsets - offsets[0]
    lead = (utf8 & 0xC0) != 0x80  # every byte that is not a continuation byte starts a code point
    starts = np.flatnonzero(lead)
    first = utf8[starts]
    width = 1 + (first >= 0xC0).astype(np.int64) + (first >= 0xE0) + (first >= 0xF0)
    points = first.astype(np.uint32) & _LEAD_BITS[width]
    padded = np.concatenate([utf8, np.zeros(3, np.uint8)])
    for k in (1, 2, 3):
        more = np.flatnonzero(width > k)
        points[more] = (points[more] << np.uint32(6)) | (padded[starts[more] + k] & np.uint32(0x3F))
    leads_before = np.concatenate([[0], np.cumsum(lead)])
    return points.astype(np.uint64), leads_before[offsets - offsets[0]].astype(np.int64)


def _gram_ids(texts: pa.LargeStringArray, n: int) -> U64Array:
    points, char_offsets = _code_points(texts)
    count = len(points) - n + 1
    if count <= 0:
        return _EMPTY
    value_end = np.repeat(char_offsets[1:], np.diff(char_offsets))  # each code point's value's end
    within = np.flatnonzero(np.arange(count) + n <= value_end[:count])  # no gram spans two values
    base = int(points.max()) + 1
    if base**n <= DENSE_GRAMS:  # few code points (ASCII trigrams): mark the grams in a table
        seen = np.zeros(base**n, dtype=np.bool_)
        seen[_polynomial(points, within, n, np.uint64(base))] = True
        compact = np.flatnonzero(seen).astype(np.uint64)
        digits = [(compact // np.uint64(base ** (n - 1 - k))) % np.uint64(base) for k in range(n)]
        grams = _polynomial(np.concatenate(digits), np.arange(len(compact)), n, GRAM_BASE, len(compact))
        return _finalise(grams)  # ascending compact ids: the grams are distinct, not sorted
    return _finalise(_unique(_polynomial(points, within, n, GRAM_BASE)))  # a bijection keeps them distinct


def _polynomial(
    points: U64Array, starts: npt.NDArray[np.intp], n: int, base: np.uint64, stride: int = 1
) -> U64Array:
    """The gram of n code points at each of `starts` as the polynomial of its code points in
    `base` (uint64: wraps modulo 2**64). Code point k of a gram is at `start + k * stride`."""
    value = np.zeros(len(starts), dtype=np.uint64)
    for k in range(n):
        value = value * base + points[starts + k * stride]
    return value


def _finalise(h: U64Array) -> U64Array:
    """MurmurHash3's fmix64: a bijection of uint64 that spreads every input bit over the output."""
    h = h ^ (h >> np.uint64(33))
    h = h * np.uint64(0xFF51AFD7ED558CCD)
    h = h ^ (h >> np.uint64(33))
    h = h * np.uint64(0xC4CEB93FE53B3EA5)
    return h ^ (h >> np.uint64(33))


def _word_ids(words: list[str]) -> U64Array:
    if not words:
        return _EMPTY
    return _unique(bloom.hash_values(pa.array(words, pa.large_string())))


def _unique(ids: U64Array) -> U64Array:
    """The distinct ids, sorted. Sorting: numpy's and Arrow's hash-based unique take 15-20x as
    long on ten million mostly distinct ids (measured: 1 s against 15-20 s)."""
    ordered = np.sort(ids)
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), dtype=np.bool_)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]
