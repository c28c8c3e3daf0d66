"""pruner.identifiers: the one naming rule for tables, columns and indexes — characters (ASCII only,
whatever `str.isidentifier()` accepts), the length limit, the reserved prefix, and messages that stay
one readable line for absurd names."""

from __future__ import annotations

import pytest

from pruner.errors import InvalidNameError, InvalidSchemaError
from pruner.identifiers import MAX_IDENTIFIER_LENGTH, RESERVED_PREFIX, abbreviate, check_identifier

KINDS = ["table", "column", "index"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "name", ["a", "_", "city", "trip_id", "_private", "x9", "a" * MAX_IDENTIFIER_LENGTH, "lp_x", "_lp"]
)
def test_valid_names(kind: str, name: str) -> None:
    check_identifier(name, kind)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "must not be empty"),
        ("a" * (MAX_IDENTIFIER_LENGTH + 1), f"is too long: at most {MAX_IDENTIFIER_LENGTH} characters"),
        ("a" * 100_000, "…(100,000 chars) is too long"),
        ("City", "'C' at position 0"),
        ("1st", "'1' at position 0"),
        ("a-b", "'-' at position 1"),
        ("a b", "' ' at position 1"),
        ("ok\n", "'\\n' at position 2"),  # `$` in a regex would have let a trailing newline through
        ("a.b", "'.' at position 1"),
        ("\uff43ity", "U+FF43 FULLWIDTH LATIN SMALL LETTER C"),  # full-width 'c'
        ("c\u0456ty", "U+0456 CYRILLIC SMALL LETTER"),  # Cyrillic look-alike of 'i'
        ("ab\u03bfut", "U+03BF GREEK SMALL LETTER OMICRON"),
        ("caf\u00e9", "U+00E9 LATIN SMALL LETTER E WITH ACUTE"),
        ("x\uff11", "U+FF11 FULLWIDTH DIGIT ONE"),
        ("x\u0661", "U+0661 ARABIC-INDIC DIGIT ONE"),
        (f"{RESERVED_PREFIX}x", "uses the reserved prefix '_lp_'"),
    ],
)
def test_invalid_names(kind: str, name: str, message: str) -> None:
    with pytest.raises(InvalidNameError) as raised:
        check_identifier(name, kind)
    text = str(raised.value)
    assert text.startswith(f"{kind} name"), text
    assert message in text, text
    assert "\n" not in text and len(text) < 300, "one short line, whatever the name"


def test_python_identifiers_are_not_enough() -> None:
    """Every refused non-ASCII name above is a valid lowercase Python identifier: the old check."""
    for name in ["\uff43ity", "c\u0456ty", "caf\u00e9", "x\uff11", "x\u0661"]:
        assert name.isidentifier() and name.lower() == name
        with pytest.raises(InvalidNameError, match="non-ASCII"):
            check_identifier(name, "index")


def test_name_errors_are_schema_errors() -> None:
    """Callers that catch InvalidSchemaError (table.json loading) keep catching name errors."""
    assert issubclass(InvalidNameError, InvalidSchemaError)


def test_abbreviate() -> None:
    assert abbreviate("city") == "'city'"
    assert abbreviate("a" * 58) == repr("a" * 58)
    assert abbreviate("b" * 59) == "'" + "b" * 48 + "…(59 chars)"
    assert len(abbreviate("c" * 100_000)) == 60
