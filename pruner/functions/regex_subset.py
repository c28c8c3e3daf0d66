"""The regular expressions an index expression may hold (`regexp_extract`): a subset on which
Python's `re` (the registry's implementation), Java's `java.util.regex` (Spark), Joni and RE2J
(Trino) and RE2 agree on every input, both on whether a string matches and on what each group
captures (all of them pick the leftmost match and, within it, the leftmost-first alternative with
greedy or lazy quantifiers as written).

Allowed: literal characters; a backslash before ASCII punctuation (a literal); character classes
`[...]` / `[^...]` of literal characters, ranges and escaped punctuation (no nested `[`, no `&&`,
no `]` first); groups `(...)` and `(?:...)`; alternation `|`; quantifiers `* + ? {n} {n,} {n,m}`,
greedy or lazy (`?` after); `^` as the pattern's first character. Refused, because the engines
differ: `.` (which line terminators it skips), `$` (a final line terminator), class escapes such
as `\\d \\w \\s \\b` (ASCII in some, Unicode in others), flags, lookaround, backreferences,
possessive quantifiers and atomic groups, named groups, anything else after a backslash."""

from __future__ import annotations

import re

from pruner.bounded import echo
from pruner.errors import InvalidInputError

_QUANTIFIER = re.compile(r"\*|\+|\?|\{[0-9]+(?:,[0-9]*)?\}")
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def check_pattern(pattern: str) -> int:
    """The number of capturing groups of `pattern`; InvalidInputError naming what is outside the
    subset."""
    groups = 0
    depth = 0
    quantifiable = False  # whether the previous item can take a quantifier
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            if i + 1 >= len(pattern) or pattern[i + 1] not in _PUNCTUATION:
                raise _refused(pattern, i, "a backslash before other than ASCII punctuation")
            i += 2
            quantifiable = True
            continue
        if char == "[":
            i = _class_end(pattern, i)
            quantifiable = True
            continue
        if char == "(":
            if pattern.startswith("(?:", i):
                i += 3
            elif pattern.startswith("(?", i):
                raise _refused(pattern, i, "flags, lookaround, named or atomic groups")
            else:
                groups += 1
                i += 1
            depth += 1
            quantifiable = False
            continue
        if char == ")":
            if depth == 0:
                raise _refused(pattern, i, "an unopened ')'")
            depth -= 1
            i += 1
            quantifiable = True
            continue
        quantifier = _QUANTIFIER.match(pattern, i)
        if quantifier is not None and char in "*+?{":
            if not quantifiable:
                raise _refused(pattern, i, "a quantifier with nothing to repeat")
            i = quantifier.end()
            if pattern.startswith("?", i):
                i += 1  # lazy
            if pattern.startswith("+", i):
                raise _refused(pattern, i, "a possessive quantifier")
            quantifiable = False
            continue
        if char == "^" and i == 0:
            i += 1
            continue
        if char in ".$^{}]":
            raise _refused(pattern, i, f"{char!r} (the engines read it differently)")
        quantifiable = char != "|"
        i += 1
    if depth != 0:
        raise _refused(pattern, len(pattern), "an unclosed '('")
    return groups


def _class_end(pattern: str, start: int) -> int:
    """The index after the character class that opens at `start`."""
    i = start + 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):
        raise _refused(pattern, i, "']' first in a class")
    while i < len(pattern):
        char = pattern[i]
        if char == "]":
            return i + 1
        if char == "\\":
            if i + 1 >= len(pattern) or pattern[i + 1] not in _PUNCTUATION:
                raise _refused(pattern, i, "a backslash before other than ASCII punctuation")
            i += 2
            continue
        if char == "[" or pattern.startswith("&&", i):
            raise _refused(pattern, i, "a nested class or a class intersection")
        i += 1
    raise _refused(pattern, start, "an unclosed '['")


def _refused(pattern: str, at: int, what: str) -> InvalidInputError:
    return InvalidInputError(
        f"regexp_extract pattern {echo(pattern)}: {what} at position {at} is outside the subset every "
        "engine reads alike (literals, escaped punctuation, [classes], groups, |, * + ? {n,m}, a "
        "leading ^; not . $ \\d \\w \\s or flags)"
    )
