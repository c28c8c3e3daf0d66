"""What every match of a regular expression contains, as Google's codesearch extracts it:
`regex_condition` parses a regex (`regexp_like` is a search: a match may lie anywhere in the
value) into literal runs that each match holds, and their AND / OR. A concatenation's literal
characters form runs; `.`, a class (`[...]`, `\\d`, `\\w`, `\\s` and their negations) and an
optional or repeated part end a run; `x+` and `x{m,n}` end a run with `m` copies of `x` and begin
the next with one (the last copy); a group repeated at least once adds what it requires; an
alternation is the OR of its branches; a leading `^` anchors the first run at the value's start.
`$` anchors nothing (in Java and Python it also matches before a final line terminator), `\\b`
and `\\B` consume nothing. Only constructs that mean the same in Java (Spark, Trino's Joni in Java
syntax), Python and RE2 are read: anything else (flags such as `(?i)`, lookaround, named groups,
back-references, `\\Q`, `\\p{..}`, possessive quantifiers, nested classes, an unescaped `{`, `}`
or `]`) makes the whole regex unusable, and the reason is returned instead. Pure."""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass

from pruner.predicate.text import TEXT_TRUE, Fragment, TextCondition, all_of, any_of

# Escapes of a single literal character outside and inside classes.
_CONTROL = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_CLASS_ESCAPES = set("dDwWsS")
_PUNCTUATION = set(string.punctuation)
_MAX_COPIES = 64  # a repeated character contributes at most this many copies to a run


class _UnsupportedError(Exception):
    """A construct outside the subset read here (the message says which)."""


@dataclass(frozen=True)
class _Literal:
    char: str


@dataclass(frozen=True)
class _AnyChar:
    """One character of some set: `.`, a class, `\\d`..."""


@dataclass(frozen=True)
class _Anchor:
    start: bool  # `^`, else `$`


@dataclass(frozen=True)
class _Boundary:
    """`\\b` or `\\B`: consumes nothing."""


@dataclass(frozen=True)
class _Group:
    branches: tuple[tuple[_Node, ...], ...]


@dataclass(frozen=True)
class _Repeat:
    node: _Node
    low: int
    high: int | None


_Node = _Literal | _AnyChar | _Anchor | _Boundary | _Group | _Repeat
Leaf = Callable[[tuple[Fragment, ...]], TextCondition]


def regex_condition(regex: str, leaf: Leaf) -> TextCondition | str:
    """What every match of `regex` contains, with `leaf` turning a branch's runs into a condition;
    or why the regex cannot be read."""
    try:
        branches = _Parser(regex).parse()
    except _UnsupportedError as exc:
        return str(exc)
    return any_of([_sequence(branch, leaf, top=True) for branch in branches])


def _sequence(nodes: tuple[_Node, ...], leaf: Leaf, top: bool) -> TextCondition:
    """What a match of the concatenation `nodes` contains; `top`: it begins at the regex's start."""
    items = _inline(nodes)
    fragments: list[Fragment] = []
    parts: list[TextCondition] = []
    run: list[str] = []
    anchored = False

    def flush() -> None:
        nonlocal anchored
        if run:
            fragments.append(Fragment("".join(run), at_start=anchored))
            run.clear()
        anchored = False

    for index, node in enumerate(items):
        if isinstance(node, _Literal):
            run.append(node.char)
        elif isinstance(node, _Anchor):
            flush()
            anchored = node.start and top and index == 0
        elif isinstance(node, _Boundary):
            continue
        elif isinstance(node, _Group):
            flush()
            parts.append(any_of([_sequence(branch, leaf, top=False) for branch in node.branches]))
        elif isinstance(node, _Repeat) and node.low > 0:
            copies = min(node.low, _MAX_COPIES)
            if isinstance(node.node, _Literal):
                run.extend(node.node.char * copies)
                if node.high != node.low or copies != node.low:
                    flush()  # more copies may follow; the last one is just before what follows
                    run.append(node.node.char)
            else:
                flush()
                parts.append(_sequence((node.node,), leaf, top=False))
        else:  # any character, or a part that may be absent
            flush()
    flush()
    return all_of([leaf(tuple(fragments)) if fragments else TEXT_TRUE, *parts])


def _shown(escaped: str) -> str:
    """An escape as written (`\\Q`), with a control character shown by its Python escape."""
    return "\\" + (escaped if escaped.isprintable() else repr(escaped)[1:-1]) if escaped else "a trailing \\"


def _inline(nodes: tuple[_Node, ...]) -> list[_Node]:
    """`nodes` with each group of one branch replaced by its nodes (a concatenation is associative)."""
    result: list[_Node] = []
    for node in nodes:
        if isinstance(node, _Group) and len(node.branches) == 1:
            result.extend(_inline(node.branches[0]))
        else:
            result.append(node)
    return result


class _Parser:
    """A recursive-descent parser of the subset (module docstring)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def parse(self) -> tuple[tuple[_Node, ...], ...]:
        branches = self.alternation()
        if self.pos < len(self.text):
            raise _UnsupportedError(f"unbalanced ')' at {self.pos}")
        return branches

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def alternation(self) -> tuple[tuple[_Node, ...], ...]:
        branches = [self.concatenation()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.concatenation())
        return tuple(branches)

    def concatenation(self) -> tuple[_Node, ...]:
        nodes: list[_Node] = []
        while self.peek() not in ("", "|", ")"):
            atom = self.atom()
            nodes.append(self.quantified(atom))
        return tuple(nodes)

    def atom(self) -> _Node:
        ch = self.peek()
        self.pos += 1
        if ch == "(":
            if self.text.startswith("?:", self.pos):
                self.pos += 2
            elif self.peek() == "?":
                raise _UnsupportedError("has a (? construct: flags, lookaround or a named group")
            branches = self.alternation()
            if self.peek() != ")":
                raise _UnsupportedError("has an unclosed group")
            self.pos += 1
            return _Group(branches)
        if ch == ".":
            return _AnyChar()
        if ch in "^$":
            return _Anchor(start=ch == "^")
        if ch == "[":
            return self.char_class()
        if ch == "\\":
            return self.escape()
        if ch in "*+?{}]":
            raise _UnsupportedError(f"has {ch!r} where a character is expected")
        return _Literal(ch)

    def escape(self) -> _Node:
        ch = self.peek()
        self.pos += 1
        if not ch:
            raise _UnsupportedError("ends in \\")
        if ch in _CONTROL:
            return _Literal(_CONTROL[ch])
        if ch in _CLASS_ESCAPES:
            return _AnyChar()
        if ch in "bB":
            return _Boundary()
        if ch in _PUNCTUATION:
            return _Literal(ch)
        raise _UnsupportedError(f"has escape {_shown(ch)} (not read the same by every engine)")

    def char_class(self) -> _Node:
        if self.peek() == "^":
            self.pos += 1
        if self.peek() == "]":
            raise _UnsupportedError("has a class beginning with ]")
        while True:
            ch = self.peek()
            self.pos += 1
            if ch == "]":
                return _AnyChar()
            if ch == "":
                raise _UnsupportedError("has an unclosed class")
            if ch == "[" or (ch in "&-~|" and self.peek() == ch):
                raise _UnsupportedError("has a nested class or a set operation in a class")
            if ch == "\\":
                escaped = self.peek()
                self.pos += 1
                if not (escaped in _CONTROL or escaped in _CLASS_ESCAPES or escaped in _PUNCTUATION):
                    raise _UnsupportedError(f"has escape {_shown(escaped)} in a class")

    def quantified(self, atom: _Node) -> _Node:
        ch = self.peek()
        if ch not in ("*", "+", "?", "{"):
            return atom
        if isinstance(atom, _Anchor | _Boundary):
            raise _UnsupportedError("repeats an anchor")
        self.pos += 1
        if ch == "{":
            low, high = self.bounds()
        else:
            low, high = (0 if ch in "*?" else 1), (1 if ch == "?" else None)
        if self.peek() == "?":
            self.pos += 1  # lazy: the same matches exist
        if self.peek() in ("*", "+", "?", "{"):
            raise _UnsupportedError("has a possessive or doubled quantifier")
        return _Repeat(atom, low, high)

    def bounds(self) -> tuple[int, int | None]:
        close = self.text.find("}", self.pos)
        body = self.text[self.pos : close] if close >= 0 else ""
        low, comma, high = body.partition(",")
        if not low.isascii() or not low.isdigit() or (high and not (high.isascii() and high.isdigit())):
            raise _UnsupportedError("has a { that is not a bound {m}, {m,} or {m,n}")
        self.pos = close + 1
        return int(low), (int(high) if high else None) if comma else int(low)
