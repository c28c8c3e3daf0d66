"""`shorten` and `echo`: text within the limit is kept as it is (quoted, by `echo`); longer text
keeps its start and says how long it was, the whole within the limit."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from pruner.bounded import ECHO_CHARS, MESSAGE_CHARS, echo, shorten


def test_short_text_is_kept() -> None:
    assert shorten("lake.events") == "lake.events"
    assert shorten("x" * ECHO_CHARS) == "x" * ECHO_CHARS
    assert shorten(12345) == "12345"
    assert echo("lake.events") == "'lake.events'"
    assert echo(b"\x00") == "b'\\x00'"
    assert echo(Decimal("1.5")) == "Decimal('1.5')"


def test_long_text_keeps_its_start_and_its_length() -> None:
    marker = "…(1,048,576 chars)"
    assert shorten("x" * 1_048_576) == "x" * (ECHO_CHARS - len(marker)) + marker
    assert shorten("abcdefghijklmnopqrstuvwxyz", 20) == "abcdefghi…(26 chars)"
    assert echo("c" * 65_536) == "'" + "c" * (ECHO_CHARS - 1 - len("…(65,536 chars)")) + "…(65,536 chars)"
    assert echo("a" * 100_000, 60) == "'" + "a" * 43 + "…(100,000 chars)"


@given(st.text(), st.integers(0, 3 * MESSAGE_CHARS))
def test_the_bound_holds_whatever_the_text(text: str, limit: int) -> None:
    assert len(shorten(text, limit)) <= limit
    assert len(echo(text, limit)) <= limit
    assert len(echo(text.encode(), limit)) <= limit
    assert shorten(text, limit) == text or len(text) > limit
