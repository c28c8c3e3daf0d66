"""Bounds on the text a caller can make lakeprune repeat, in one place. Names, values, method paths
and whole error messages come from requests, and a request can carry megabytes: a name or value
that goes into an error message, a log line or a warning is shown by `echo` (its repr) or
`shorten` (as it is), at most `ECHO_CHARS` characters, and every message a caller gets is
`shorten`ed to `MESSAGE_CHARS`. A longer text keeps its start and ends in `…(N chars)`, N the
original length, the marker within the bound: the cost of logging or answering a request never
grows with what the caller sent, and each bound holds whatever the text."""

from __future__ import annotations

ECHO_CHARS = 200
"""Characters at most of one caller-supplied name or value (names are at most 128: shown whole)."""

MESSAGE_CHARS = 500
"""Characters at most of an error message sent to a caller. Even at 4 UTF-8 bytes per character,
percent-encoded, that stays well under gRPC's 8 KiB metadata limit, so a long message can never
turn the real status into RESOURCE_EXHAUSTED."""


def shorten(text: object, limit: int = ECHO_CHARS) -> str:
    """`text` (or `str(text)`) as it is when it has at most `limit` characters, else its start
    followed by `…(N chars)`, N being the original length: `limit` characters in all."""
    shown = text if isinstance(text, str) else str(text)
    return _cut(shown, len(shown), limit)


def echo(value: object, limit: int = ECHO_CHARS) -> str:
    """`repr(value)` for a message, at most `limit` characters: a name or value from a caller,
    quoted. A longer one is cut as `shorten` cuts, N being the length of the str or bytes (of the
    repr, for other values); only the start of a long str or bytes is ever turned into text."""
    if isinstance(value, str | bytes):
        return _cut(repr(value[:limit]), len(value), limit)
    shown = repr(value)
    return _cut(shown, len(shown), limit)


def _cut(shown: str, length: int, limit: int) -> str:
    """`shown`, the text of something `length` characters long, within `limit` characters."""
    if len(shown) <= limit and length <= limit:
        return shown
    marker = f"…({length:,} chars)"
    return (shown[: max(limit - len(marker), 0)] + marker)[:limit]
