"""Converting between a predicate's text side (`pruner.predicate.text.TextPredicate`) and the
`TextPredicate` message an engine sends beside its TupleDomain (`predicate.proto`).

Decoding reads each `TextAtom` through `pruner.predicate.text_atoms`, as the SQL reader does, so an
atom means the same from Trino, a gRPC client or SQL text. It refuses only what is malformed (an
unknown column, an atom or a node with no kind set, an AND / OR without parts): an atom that
requires nothing (a pattern without a literal run, an unreadable regex, a column that is not a
string) becomes TRUE with a note, as an `opaque` node is TRUE. Encoding (the Python client, which
has already read its SQL into conditions) sends each `TextMatch` as the AND of one atom per
fragment (`contains`, `starts_with`, `ends_with`, or an escaped `LIKE` for a fragment anchored at
both ends) and one `words` atom for its words: atoms that require exactly what the leaf does."""

from __future__ import annotations

from collections.abc import Sequence

from pruner.bounded import echo
from pruner.errors import InvalidInputError
from pruner.functions.parsing import parse_sql
from pruner.predicate import text_atoms
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
from pruner.predicate.text_atoms import UnusedTextAtom, unused_note
from pruner.predicate.text_subjects import expression_subject
from pruner.service.gen.lakeprune.v1 import predicate_pb2 as ppb
from pruner.types import TableSchema, TypeKind

_CASES = {ppb.TEXT_CASE_AS_IS: Case.AS_IS, ppb.TEXT_CASE_LOWER: Case.LOWER, ppb.TEXT_CASE_UPPER: Case.UPPER}
_PROTO_CASES = {case: proto for proto, case in _CASES.items()}
# The escape of the LIKE that encodes a fragment anchored at both ends.
_ESCAPE = "\\"


def decode_text(message: ppb.TextPredicate, notes: Sequence[str], schema: TableSchema) -> TextPredicate:
    """The text predicate of a request (`message` unset: none) over `schema`, with the client's
    `notes` and those of the atoms that require nothing."""
    reader = _Reader(schema, list(notes))
    condition = reader.node(message) if message.WhichOneof("kind") else TEXT_TRUE
    return TextPredicate(condition, tuple(dict.fromkeys(reader.notes)))


def encode_text(condition: TextCondition) -> ppb.TextPredicate | None:
    """`condition` as the message (None for TRUE, which an unset field says)."""
    if isinstance(condition, TextMatch):
        atoms = [_fragment_atom(condition, f) for f in condition.fragments]
        if condition.words:
            words = _atom(condition)
            words.atom.words = " ".join(condition.words)
            atoms.append(words)
        return atoms[0] if len(atoms) == 1 else ppb.TextPredicate(all=ppb.TextPredicates(parts=atoms))
    if isinstance(condition, TextAll | TextAny):
        parts = [encode_text(part) for part in condition.parts]
        group = ppb.TextPredicates(parts=[p for p in parts if p is not None])
        return (
            ppb.TextPredicate(all=group) if isinstance(condition, TextAll) else ppb.TextPredicate(any=group)
        )
    return None


class _Reader:
    def __init__(self, schema: TableSchema, notes: list[str]) -> None:
        self.schema = schema
        self.notes = notes

    def node(self, message: ppb.TextPredicate) -> TextCondition:
        kind = message.WhichOneof("kind")
        if kind == "atom":
            return self.atom(message.atom)
        if kind == "opaque":
            return TEXT_TRUE
        if kind in ("all", "any"):
            group = message.all if kind == "all" else message.any
            if not group.parts:
                raise InvalidInputError(f"text predicate: {kind.upper()} without parts")
            parts = [self.node(part) for part in group.parts]
            return all_of(parts) if kind == "all" else any_of(parts)
        raise InvalidInputError("text predicate: a node with none of atom, all, any, opaque set")

    def atom(self, atom: ppb.TextAtom) -> TextCondition:
        on = atom.column or atom.expression
        if atom.expression and atom.column:
            raise InvalidInputError(f"text atom on {echo(on)}: both a column and an expression")
        if not atom.expression and not self.schema.has(atom.column):
            raise InvalidInputError(
                f"text atom: unknown column {echo(atom.column)} (columns: {', '.join(self.schema.names)})"
            )
        if atom.case not in _CASES:
            raise InvalidInputError(f"text atom on {echo(on)}: unknown case {atom.case}")
        kind = atom.WhichOneof("kind")
        if kind is None:
            raise InvalidInputError(f"text atom on {echo(on)}: none of like, contains, ... set")
        subject = TextSubject(on, _CASES[atom.case], expression=bool(atom.expression))
        source = atom.source or _describe(atom, subject, kind)
        try:
            if atom.expression:
                subject = self.expression_subject(atom.expression, subject.case)
            else:
                column = self.schema.column(atom.column)
                if column.type.kind is not TypeKind.STRING:
                    raise UnusedTextAtom(f"is over {column.type} column {column.name}")
            return _read(atom, subject, kind, source)
        except UnusedTextAtom as exc:
            self.notes.append(unused_note(source, str(exc)))
            return TEXT_TRUE

    def expression_subject(self, expression: str, case: Case) -> TextSubject:
        """The subject of an atom over `expression`, bound as a text index's expression is."""
        types = {c.name: c.type for c in self.schema.columns}
        try:
            return expression_subject(parse_sql(expression), types, expression, case)
        except InvalidInputError as exc:
            raise UnusedTextAtom(f"is not over a string expression an index could hold ({exc})") from None


def _read(atom: ppb.TextAtom, subject: TextSubject, kind: str, source: str) -> TextCondition:
    match kind:
        case "like":
            escape = atom.like.escape if atom.like.HasField("escape") else None
            return text_atoms.like(subject, atom.like.pattern, escape, source)
        case "contains" | "starts_with" | "ends_with":
            text = getattr(atom, kind)
            return text_atoms.contains(subject, text, kind == "starts_with", kind == "ends_with", source)
        case "regex":
            return text_atoms.regex(subject, atom.regex, source)
        case "words":
            return text_atoms.words(subject, atom.words, source)
    raise AssertionError(kind)


def _describe(atom: ppb.TextAtom, subject: TextSubject, kind: str) -> str:
    """The atom as SQL, for the notes of an atom sent without its source."""
    if kind == "like":
        escape = f" ESCAPE {echo(atom.like.escape)}" if atom.like.HasField("escape") else ""
        return f"{subject.sql()} LIKE {echo(atom.like.pattern)}{escape}"
    name = {"regex": "regexp_like", "words": "text_match"}.get(kind, kind)
    return f"{name}({subject.sql()}, {echo(getattr(atom, kind))})"


def _fragment_atom(leaf: TextMatch, fragment: Fragment) -> ppb.TextPredicate:
    atom = _atom(leaf)
    if fragment.at_start and fragment.at_end:  # the whole value: a LIKE without wildcards
        escaped = "".join(_ESCAPE + ch if ch in "%_" + _ESCAPE else ch for ch in fragment.text)
        atom.atom.like.CopyFrom(ppb.LikePattern(pattern=escaped, escape=_ESCAPE))
    elif fragment.at_start:
        atom.atom.starts_with = fragment.text
    elif fragment.at_end:
        atom.atom.ends_with = fragment.text
    else:
        atom.atom.contains = fragment.text
    return atom


def _atom(leaf: TextMatch) -> ppb.TextPredicate:
    """An atom on the leaf's subject, with its source, and no kind yet."""
    subject = leaf.subject
    return ppb.TextPredicate(
        atom=ppb.TextAtom(
            column="" if subject.expression else subject.source,
            expression=subject.source if subject.expression else "",
            case=_PROTO_CASES[subject.case],
            source=leaf.source,
        )
    )
