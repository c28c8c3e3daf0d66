"""The text predicate on the wire: an engine's atoms decode to what the same SQL reads to (one
reading, `pruner.predicate.text_atoms`); what the Python client encodes decodes to a condition every
matching value still meets; malformed messages are refused in one line and atoms that require
nothing are noted, never refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pruner.errors import InvalidInputError
from pruner.predicate.sql import text_condition
from pruner.predicate.text import TEXT_TRUE, Case, Fragment, TextMatch, TextSubject
from pruner.service.gen.lakeprune.v1 import predicate_pb2 as ppb
from pruner.service.text_codec import decode_text, encode_text
from pruner.types import TableSchema
from tests.pruner.planner.test_text_index import ALPHABET, _matches, conditions

SCHEMA = TableSchema.parse("id bigint, msg string, note string")


def _atom(column: str = "msg", case: int = ppb.TEXT_CASE_AS_IS, **kind: object) -> ppb.TextPredicate:
    atom = ppb.TextAtom(column=column, case=case)
    for name, value in kind.items():
        if name == "like":
            assert isinstance(value, ppb.LikePattern)
            atom.like.CopyFrom(value)
        else:
            setattr(atom, name, value)
    return ppb.TextPredicate(atom=atom)


def _conditions_of(message: ppb.TextPredicate, sql: str) -> tuple[object, object]:
    decoded = decode_text(message, (), SCHEMA)
    read = text_condition(sql, SCHEMA)
    return _shape(decoded.condition), _shape(read.condition)


def _shape(condition: object) -> object:
    """A condition without its leaves' sources (the engine's text differs from SQL's)."""
    if isinstance(condition, TextMatch):
        return (condition.subject, condition.fragments, condition.words)
    parts = getattr(condition, "parts", None)
    return condition if parts is None else (type(condition).__name__, tuple(_shape(p) for p in parts))


@pytest.mark.parametrize(
    ("message", "sql"),
    [
        (_atom(like=ppb.LikePattern(pattern="%time_out%")), "msg LIKE '%time_out%'"),
        (_atom(like=ppb.LikePattern(pattern="a!%b%", escape="!")), "msg LIKE 'a!%b%' ESCAPE '!'"),
        (_atom(like=ppb.LikePattern(pattern="x\\%y%")), "msg LIKE 'x\\%y%'"),
        (_atom(contains="timeout"), "strpos(msg, 'timeout') > 0"),
        (_atom(starts_with="GET /"), "starts_with(msg, 'GET /')"),
        (_atom(ends_with=".json"), "ends_with(msg, '.json')"),
        (_atom(regex="time(out|d out)"), "regexp_like(msg, 'time(out|d out)')"),
        (_atom(words="Connection REFUSED"), "text_match(msg, 'Connection REFUSED')"),
        (_atom(case=ppb.TEXT_CASE_LOWER, contains="istanbul"), "strpos(lower(msg), 'istanbul') > 0"),
        (
            ppb.TextPredicate(
                any=ppb.TextPredicates(parts=[_atom(contains="disk"), _atom(column="note", contains="full")])
            ),
            "strpos(msg, 'disk') > 0 OR strpos(note, 'full') > 0",
        ),
        (
            ppb.TextPredicate(
                all=ppb.TextPredicates(
                    parts=[_atom(contains="disk"), ppb.TextPredicate(opaque=ppb.OpaqueText())]
                )
            ),
            "strpos(msg, 'disk') > 0 AND id = 3",
        ),
    ],
)
def test_an_engines_atoms_read_as_the_same_sql(message: ppb.TextPredicate, sql: str) -> None:
    decoded, read = _conditions_of(message, sql)
    assert decoded == read and decoded is not TEXT_TRUE


def test_an_or_with_an_opaque_branch_requires_nothing() -> None:
    opaque = ppb.TextPredicate(opaque=ppb.OpaqueText())
    message = ppb.TextPredicate(any=ppb.TextPredicates(parts=[_atom(contains="disk"), opaque]))
    assert decode_text(message, (), SCHEMA).condition is TEXT_TRUE
    assert decode_text(ppb.TextPredicate(), (), SCHEMA).condition is TEXT_TRUE  # unset


def test_atoms_that_require_nothing_are_noted() -> None:
    message = ppb.TextPredicate(
        all=ppb.TextPredicates(
            parts=[
                _atom(like=ppb.LikePattern(pattern="%%")),
                _atom(column="id", contains="3"),
                _atom(regex="(?i)timeout"),
                _atom(like=ppb.LikePattern(pattern="a%", escape="%")),
            ]
        )
    )
    decoded = decode_text(message, ("client: msg NOT LIKE '%x%'",), SCHEMA)
    assert decoded.condition is TEXT_TRUE
    assert decoded.notes[0] == "client: msg NOT LIKE '%x%'"
    assert decoded.notes[1:] == (
        "msg LIKE '%%' has no literal run: no text requirement",
        "contains(id, '3') is over bigint column id: no text requirement",
        decoded.notes[3],
        "msg LIKE 'a%' ESCAPE '%' has escape '%', not one character other than % and _: no text requirement",
    )
    assert decoded.notes[3].startswith("regexp_like(msg, '(?i)timeout') ")


@pytest.mark.parametrize(
    ("message", "error"),
    [
        (_atom(column="nope", contains="x"), "text atom: unknown column 'nope'"),
        (_atom(), "text atom on 'msg': none of like, contains"),
        (_atom(case=7, contains="x"), "text atom on 'msg': unknown case 7"),
        (ppb.TextPredicate(all=ppb.TextPredicates()), "text predicate: ALL without parts"),
        (ppb.TextPredicate(any=ppb.TextPredicates(parts=[ppb.TextPredicate()])), "a node with none of"),
    ],
)
def test_malformed_messages_are_refused(message: ppb.TextPredicate, error: str) -> None:
    with pytest.raises(InvalidInputError, match=error.replace("(", r"\(")):
        decode_text(message, (), SCHEMA)


def test_a_fragment_anchored_at_both_ends_travels_as_an_escaped_like() -> None:
    leaf = TextMatch(TextSubject("msg", Case.UPPER), (Fragment("50%_\\off", True, True),), (), "x")
    encoded = encode_text(leaf)
    assert encoded is not None and encoded.atom.like.pattern == "50\\%\\_\\\\off"
    assert decode_text(encoded, (), SCHEMA).condition == leaf


def test_an_atom_over_an_expression_travels_as_lakeprune_sql() -> None:
    subject = TextSubject("substring(msg, 1, 5)", Case.LOWER, expression=True)
    leaf = TextMatch(subject, (Fragment("err"),), (), "lower(substring(msg, 1, 5)) LIKE '%err%'")
    encoded = encode_text(leaf)
    assert encoded is not None and (encoded.atom.column, encoded.atom.expression) == ("", subject.source)
    assert decode_text(encoded, (), SCHEMA).condition == leaf
    # an expression the table cannot bind keeps every row, and says why
    unbound = ppb.TextPredicate(atom=ppb.TextAtom(expression="substring(gone, 1, 5)", contains="x"))
    decoded = decode_text(unbound, (), SCHEMA)
    assert decoded.condition == TEXT_TRUE and "unknown column" in decoded.notes[0]
    with pytest.raises(InvalidInputError, match="both a column and an expression"):
        both = ppb.TextAtom(column="msg", expression="msg", contains="x")
        decode_text(ppb.TextPredicate(atom=both), (), SCHEMA)


@given(st.data())
def test_what_the_client_encodes_decodes_to_a_condition_every_match_meets(data: st.DataObject) -> None:
    texts = data.draw(st.lists(st.text(st.sampled_from(ALPHABET), max_size=10), min_size=1, max_size=4))
    condition = data.draw(conditions(texts))
    encoded = encode_text(condition)
    decoded = decode_text(encoded, (), SCHEMA).condition if encoded is not None else TEXT_TRUE
    for value in [*texts, *data.draw(st.lists(st.text(st.sampled_from(ALPHABET), max_size=10), max_size=4))]:
        assert not _matches(condition, value) or _matches(decoded, value)
