"""The one naming rule of lakeprune, shared by tables, columns and indexes: lowercase ASCII letters,
digits and `_`, not starting with a digit, at most `MAX_IDENTIFIER_LENGTH` characters, and not
starting with the reserved prefix `_lp_` (lakeprune's own hidden columns). Names become parts of
paths (`secondary_index_<name>`, `func_index_<name>`, `<column>=<value>` partition directories)
and engine identifiers (Trino and Presto lowercase them), so the rule is ASCII-only on purpose:
`str.isidentifier()` and `\\w` accept Unicode look-alikes (a full-width or a Cyrillic letter), and a
name of 128 ASCII characters keeps every directory lakeprune derives from it far below the 255-byte
name limit of common file systems. Names are checked where they are defined; `abbreviate` keeps
messages about absurdly long names one readable line (`pruner.bounded.echo` with a shorter bound)."""

from __future__ import annotations

import re
import unicodedata

from pruner.bounded import echo
from pruner.errors import InvalidNameError

MAX_IDENTIFIER_LENGTH = 128
RESERVED_PREFIX = "_lp_"
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]*")
_SHOWN_CHARACTERS = 60


def abbreviate(name: str) -> str:
    """`repr(name)` in at most 60 characters, a longer name cut with its length said."""
    return echo(name, _SHOWN_CHARACTERS)


def check_identifier(name: str, kind: str) -> None:
    """Raise `InvalidNameError` unless `name` is a valid `kind` ("table", "column", "index") name."""
    shown = abbreviate(name)
    if not name:
        raise InvalidNameError(f"{kind} name must not be empty")
    if len(name) > MAX_IDENTIFIER_LENGTH:
        raise InvalidNameError(f"{kind} name {shown} is too long: at most {MAX_IDENTIFIER_LENGTH} characters")
    if not _IDENTIFIER.fullmatch(name):
        raise InvalidNameError(
            f"{kind} name {shown} is not allowed{_first_offender(name)}: use lowercase ASCII letters, "
            "digits and '_', not starting with a digit (Trino and Presto require lowercase names)"
        )
    if name.startswith(RESERVED_PREFIX):
        raise InvalidNameError(f"{kind} name {shown} uses the reserved prefix {RESERVED_PREFIX!r}")


def _first_offender(name: str) -> str:
    """Where a name first breaks the rule, naming non-ASCII characters (look-alikes) by code point."""
    for position, char in enumerate(name):
        allowed = char in "abcdefghijklmnopqrstuvwxyz_" or (position > 0 and char in "0123456789")
        if allowed:
            continue
        if char.isascii():
            return f" ({char!r} at position {position})"
        label = unicodedata.name(char, "unnamed character")
        return f" (non-ASCII {char!r}, U+{ord(char):04X} {label}, at position {position})"
    return ""  # pragma: no cover - only called for names the pattern refused
