"""Text conditions: what a predicate requires of a string column's text, for the text index
(RFC-51, issue 37). A TupleDomain cannot say "`msg` contains `timeout`", so a bound predicate
carries, beside its TupleDomain, a `TextCondition`: an AND / OR tree whose leaves (`TextMatch`)
each say what every value matching one SQL atom (`msg LIKE '%time_out%'`, `strpos(msg, 'x') > 0`,
`starts_with(...)`, `regexp_like(...)`, `text_match(msg, 'a b')`) must contain: literal
`Fragment`s (substrings, each perhaps anchored at the value's start or end) and whole `words`.
Each is a superset of the rows its atom matches, as the TupleDomain is of the whole predicate; the
two are intersected file by file. A leaf names its `TextSubject`: a column or a string expression
(`substring(msg, 1, 80)`), or `lower` / `upper` of one; a text index answers only leaves with its
own subject, so an index on
`lower(msg)` serves `lower(msg) LIKE ...` and a case-sensitive index never answers a
case-insensitive predicate. `TEXT_TRUE` (every row) is the condition of a predicate with no text
atom, and what any part that cannot be used (an atom under NOT, an OR with a branch that is not
text) becomes. Pure: no files, no indexes, no SQL."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

import pyarrow as pa
import pyarrow.compute as pc

# A word: a maximal run of Python's Unicode `\w`, in text lower-cased by `simple_lower`.
WORD = re.compile(r"\w+")


def simple_lower(text: str) -> str:
    """`text` lower-cased by Unicode's simple case mapping, one code point to one (Arrow's
    `utf8_lower`, as Trino's `lower`), unlike `str.lower` (`'İ'` becomes two code points)."""
    lowered: str = pc.utf8_lower(pa.array([text], pa.large_string()))[0].as_py()
    return lowered


def words_of(text: str) -> frozenset[str]:
    """The words of `text` (`WORD` runs of it lower-cased by `simple_lower`): what `text_match`
    compares, and the terms of a text index's `words` tokenizer."""
    return frozenset(WORD.findall(simple_lower(text)))


class Case(StrEnum):
    """Which form of a column's text a subject is: as stored, or lower- / upper-cased by the
    engine that evaluates the predicate, whose case mapping is Unicode's simple one (per code
    point: Trino, Arrow) or its full one (Spark, Python's `str.lower`: `'ß'` -> `'SS'`). A text
    index on a cased subject holds the terms of both forms (`pruner.index.tokenizers.case_forms`)."""

    AS_IS = "as_is"
    LOWER = "lower"
    UPPER = "upper"


@dataclass(frozen=True, order=True)
class TextSubject:
    """The text a leaf constrains, in one of its `Case`s: a string column (its name) or a string
    expression over the table's columns (its canonical text, `pruner.functions`:
    `substring(msg, 1, 80)`), with no case mapping inside it."""

    source: str
    case: Case = Case.AS_IS
    expression: bool = False  # `source` is an expression's canonical text, not a column's name

    def sql(self) -> str:
        return self.source if self.case is Case.AS_IS else f"{self.case.value}({self.source})"


@dataclass(frozen=True)
class Fragment:
    """A literal run every matching value contains (exact code points, case as the subject's).
    `at_start` / `at_end`: the run begins / ends the value (a LIKE pattern without a leading /
    trailing wildcard, `starts_with`, `ends_with`, a regex anchored by `^` / `$`)."""

    text: str
    at_start: bool = False
    at_end: bool = False


@dataclass(frozen=True)
class TextMatch:
    """One atom's requirement: every matching value of `subject` contains each of `fragments` and
    has each of `words` among its word tokens (lower-cased Unicode word runs, `\\w+`). `source` is
    the atom's SQL text (for the explain record). A leaf with neither fragments nor words requires
    nothing (it is never built: the atom becomes `TEXT_TRUE`)."""

    subject: TextSubject
    fragments: tuple[Fragment, ...] = ()
    words: tuple[str, ...] = ()
    source: str = ""


@dataclass(frozen=True)
class TextAll:
    """Every part holds (AND)."""

    parts: tuple[TextCondition, ...]


@dataclass(frozen=True)
class TextAny:
    """At least one part holds (OR)."""

    parts: tuple[TextCondition, ...]


@dataclass(frozen=True)
class _TextTrue:
    """No requirement (every row)."""


TEXT_TRUE = _TextTrue()

TextCondition = TextMatch | TextAll | TextAny | _TextTrue


def all_of(parts: list[TextCondition] | tuple[TextCondition, ...]) -> TextCondition:
    """The AND of `parts`, simplified: TRUE parts dropped, nested ANDs flattened."""
    flat: list[TextCondition] = []
    for part in parts:
        if isinstance(part, TextAll):
            flat.extend(part.parts)
        elif part is not TEXT_TRUE:
            flat.append(part)
    return TEXT_TRUE if not flat else flat[0] if len(flat) == 1 else TextAll(tuple(flat))


def any_of(parts: list[TextCondition] | tuple[TextCondition, ...]) -> TextCondition:
    """The OR of `parts`, simplified: TRUE if any part is TRUE (a branch without a text requirement
    lets every row through), nested ORs flattened. An empty OR is FALSE, which a text condition
    cannot say: the caller's TupleDomain already says "no row" then, so it is TRUE here."""
    flat: list[TextCondition] = []
    for part in parts:
        if part is TEXT_TRUE:
            return TEXT_TRUE
        flat.extend(part.parts if isinstance(part, TextAny) else (part,))
    return TEXT_TRUE if not flat else flat[0] if len(flat) == 1 else TextAny(tuple(flat))


@dataclass(frozen=True)
class TextPredicate:
    """A predicate's text side: the condition every matching row meets, and notes on the text atoms
    it could not use (under NOT, in an OR with a non-text branch...), which the text index step
    reports where a text index could have answered them."""

    condition: TextCondition = TEXT_TRUE
    notes: tuple[str, ...] = ()


NO_TEXT = TextPredicate()


def leaves(condition: TextCondition) -> list[TextMatch]:
    """The leaves of `condition`, in order."""
    if isinstance(condition, TextMatch):
        return [condition]
    if isinstance(condition, TextAll | TextAny):
        return [leaf for part in condition.parts for leaf in leaves(part)]
    return []
