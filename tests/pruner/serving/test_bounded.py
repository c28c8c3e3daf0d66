"""`shorten`: text up to the limit is kept as it is; longer text keeps its start and says how long
it was."""

from __future__ import annotations

from pruner.serving.bounded import ECHO_CHARS, shorten


def test_short_text_is_kept() -> None:
    assert shorten("lake.events") == "lake.events"
    assert shorten("x" * ECHO_CHARS) == "x" * ECHO_CHARS
    assert shorten(12345) == "12345"


def test_long_text_keeps_its_start_and_its_length() -> None:
    assert shorten("x" * 1_048_576) == "x" * ECHO_CHARS + "…(1,048,576 chars)"
    assert shorten("abcdef", 3) == "abc…(6 chars)"
