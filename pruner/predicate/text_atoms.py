"""Text atoms (issue 37): what every value matching one atom an engine writes contains, as a
`TextCondition` over the atom's `TextSubject`. The atoms: `LIKE` with its optional escape (`%` and
`_` end a literal run; an escape makes the next character literal; without one a backslash is
literal in Trino and DuckDB but an escape in Spark, so the runs stop on both sides of it and of the
character after it, which holds in both readings), `ILIKE` (Spark's `lower(left) LIKE
lower(right)`: the runs of the pattern lower-cased by both case mappings, on `lower(col)`), a
searched string (`contains`, and `starts_with` / `ends_with` anchored), `regexp_like` (the literal
runs every match holds, `regex_condition`) and `text_match` (every word of the query; its reference
is `text_match_value`). The SQL reader (`pruner.predicate.sql.text_conditions`) and the gRPC codec
(an engine's `TextAtom`) both read atoms here, so an atom means the same however it arrives. An atom
that requires nothing raises `UnusedTextAtom` saying why (the caller notes it). Pure."""

from __future__ import annotations

from dataclasses import replace

from pruner.predicate.regex_runs import regex_condition
from pruner.predicate.text import (
    TEXT_TRUE,
    Case,
    Fragment,
    TextCondition,
    TextMatch,
    TextSubject,
    any_of,
    simple_lower,
    words_of,
)


class UnusedTextAtom(Exception):  # noqa: N818 (not an error: the atom requires nothing)
    """The atom requires nothing of the text (the message says why)."""


def unused_note(source: str, reason: str) -> str:
    """The note on an atom (its text, `source`) that requires nothing, and why."""
    return f"{source} {reason}: no text requirement"


def like(subject: TextSubject, pattern: str, escape: str | None, source: str) -> TextCondition:
    """`subject LIKE pattern [ESCAPE escape]`."""
    _check_escape(escape)
    return _leaf(subject, source, like_fragments(pattern, escape))


def ilike(subject: TextSubject, pattern: str, escape: str | None, source: str) -> TextCondition:
    """`subject ILIKE pattern [ESCAPE escape]`, read as Spark does: `lower(subject) LIKE
    lower(pattern)`, for either case mapping."""
    _check_escape(escape)
    if subject.case is not Case.AS_IS:
        raise UnusedTextAtom("is ILIKE over lower / upper")
    if escape and any(escape in form for ch in pattern if ch != escape for form in _lowered(ch)):
        raise UnusedTextAtom(f"has escape {escape!r}, which lower-casing the pattern can produce")
    lowered = replace(subject, case=Case.LOWER)
    return any_of([_leaf(lowered, source, like_fragments(form, escape)) for form in _lowered(pattern)])


def contains(subject: TextSubject, text: str, at_start: bool, at_end: bool, source: str) -> TextCondition:
    """`subject` contains `text` (at its start / end, if so anchored)."""
    return _leaf(subject, source, [Fragment(text, at_start, at_end)])


def regex(subject: TextSubject, pattern: str, source: str) -> TextCondition:
    """`regexp_like(subject, pattern)`, a search."""
    result = regex_condition(pattern, lambda fragments: TextMatch(subject, fragments, (), source))
    if isinstance(result, str):
        raise UnusedTextAtom(result)
    if result is TEXT_TRUE:
        raise UnusedTextAtom("has no literal run every match contains")
    return result


def words(subject: TextSubject, query: str, source: str) -> TextCondition:
    """`text_match(subject, query)`: every word of `query` is a word of the value."""
    if subject.case is not Case.AS_IS:
        raise UnusedTextAtom("is over lower / upper (words are lower-cased already)")
    found = tuple(sorted(words_of(query)))
    if not found:
        raise UnusedTextAtom("has no word")
    return TextMatch(subject, (), found, source)


def text_match_value(value: str | None, query: str | None) -> bool | None:
    """`text_match(value, query)`: TRUE when every word of `query` is a word of `value` (a query
    without words matches every value), NULL when either is NULL."""
    if value is None or query is None:
        return None
    return words_of(query) <= words_of(value)


def like_fragments(pattern: str, escape: str | None) -> list[Fragment]:
    """The literal runs of a LIKE pattern (module docstring): `%` and `_` end a run; `escape`
    makes the next character literal (a trailing one ends the run). Without `escape`, a
    backslash and the character after it end the run, as neither reading fixes what they match."""
    fragments: list[Fragment] = []
    run: list[str] = []
    run_start = 0  # where the current run began in the pattern
    i = 0

    def flush(end: int) -> None:
        if run:
            fragments.append(Fragment("".join(run), at_start=run_start == 0, at_end=end == len(pattern)))
        run.clear()

    while i < len(pattern):
        ch = pattern[i]
        if escape is not None and ch == escape and i + 1 < len(pattern):
            if not run:
                run_start = i
            run.append(pattern[i + 1])
            i += 2
            continue
        if ch in "%_" or ch == escape or (escape is None and ch == "\\"):
            flush(i)
            i += 2 if escape is None and ch == "\\" else 1
            run_start = i
            continue
        if not run:
            run_start = i
        run.append(ch)
        i += 1
    flush(len(pattern))
    return fragments


def _check_escape(escape: str | None) -> None:
    if escape is not None and (len(escape) != 1 or escape in ("%", "_")):
        raise UnusedTextAtom(f"has escape {escape!r}, not one character other than % and _")


def _leaf(subject: TextSubject, source: str, fragments: list[Fragment]) -> TextCondition:
    kept = tuple(f for f in fragments if f.text)
    if not kept:
        raise UnusedTextAtom("has no literal run")
    return TextMatch(subject, kept, (), source)


def _lowered(text: str) -> list[str]:
    """`text` lower-cased by Unicode's simple mapping (code point by code point: Trino, Arrow,
    DuckDB) and by the full one (Spark, Python), once if they agree."""
    simple, full = simple_lower(text), text.lower()
    return [simple] if simple == full else [simple, full]
