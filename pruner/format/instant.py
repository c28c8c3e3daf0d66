"""Instants: UTC timestamps `YYYYMMDDHHMMSSmmm`, strictly increasing per table. An instant names a
commit, a compaction or a clean, and appears in the name of every file that action writes."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from pruner.errors import InvalidInputError

_INSTANT_RE = re.compile(r"[0-9]{17}")  # ASCII: `\d` also matches other scripts' digits
_FORMAT = "%Y%m%d%H%M%S"


def is_instant(text: str) -> bool:
    return bool(_INSTANT_RE.fullmatch(text))


def format_instant(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    return moment.strftime(_FORMAT) + f"{moment.microsecond // 1000:03d}"


def parse_instant(text: str) -> datetime:
    return datetime.strptime(text[:14], _FORMAT).replace(tzinfo=UTC, microsecond=int(text[14:]) * 1000)


def parse_time(text: str) -> datetime:
    """A point in time written as ISO 8601 (`2026-03-01 12:00:00`, `2026-03-01T12:00:00.250+02:00`,
    `...Z`), UTC unless it carries an offset: what a time-travel request names."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise InvalidInputError(
            f"{text!r} is not a point in time (expected ISO 8601, e.g. 2026-03-01T12:00:00Z)"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def next_instant(after: str | None, now: datetime | None = None) -> str:
    """The current UTC time as an instant, bumped past `after` if the clock is not ahead of it."""
    candidate = format_instant(now or datetime.now(UTC))
    if after is not None and candidate <= after:
        candidate = format_instant(parse_instant(after) + timedelta(milliseconds=1))
    return candidate
