"""The timeline: one file per instant and state under `.lakeprune/timeline/`, named
`<instant>.<action>.<state>`. An instant moves requested -> inflight -> completed; the completed
file carries the action's metadata. Every timeline file is created once, with
`Storage.put_if_absent` (whole or not at all, and by one writer only), so readers either see a
whole commit or none of it, and of two writers racing for one instant exactly one gets it: the
other gets a `ConflictError` from `request` having written nothing, or from `mark_inflight` /
`complete`, when the instant it requested was taken from it, and must then leave that instant's
files alone. `Timeline` is an immutable view loaded once; the transition functions write the next
state and return nothing a reader could hold stale."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pruner.errors import ConflictError, SnapshotNotFoundError, TableCorruptError
from pruner.format.instant import is_instant, next_instant
from pruner.format.layout import TIMELINE_DIR
from pruner.storage import Storage


class Action(StrEnum):
    COMMIT = "commit"  # a data write: insert, upsert, delete or overwrite
    COMPACTION = "compaction"  # index partition compaction; table contents unchanged
    CLEAN = "clean"  # removal of files no retained snapshot needs


class State(StrEnum):
    REQUESTED = "requested"
    INFLIGHT = "inflight"
    COMPLETED = "completed"


_STATE_ORDER = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}


@dataclass(frozen=True, order=True)
class Instant:
    timestamp: str
    action: Action
    state: State

    def file_name(self, state: State | None = None) -> str:
        return f"{self.timestamp}.{self.action}.{state or self.state}"

    @property
    def is_completed(self) -> bool:
        return self.state == State.COMPLETED


@dataclass(frozen=True)
class Timeline:
    """All instants of a table at the moment it was loaded, oldest first, each in its latest state."""

    storage: Storage
    instants: tuple[Instant, ...]
    # The size of each timeline file, by name: completed entries never change, so readers may
    # cache what they parsed from one by its name and size.
    sizes: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def load(cls, storage: Storage) -> Timeline:
        latest: dict[str, Instant] = {}
        sizes: dict[str, int] = {}
        for entry in storage.list_files(TIMELINE_DIR):
            name = entry.rel.rpartition("/")[2]
            sizes[name] = entry.size
            parts = name.split(".")
            if len(parts) != 3 or not is_instant(parts[0]):
                continue  # temporary files of an in-progress publish
            try:
                instant = Instant(parts[0], Action(parts[1]), State(parts[2]))
            except ValueError:
                raise TableCorruptError(f"unrecognised timeline file {entry.rel}") from None
            current = latest.get(instant.timestamp)
            if current is None or _STATE_ORDER[instant.state] > _STATE_ORDER[current.state]:
                latest[instant.timestamp] = instant
        return cls(storage, tuple(sorted(latest.values())), sizes)

    def completed(self) -> list[Instant]:
        return [i for i in self.instants if i.is_completed]

    def completed_timestamps(self) -> frozenset[str]:
        return frozenset(i.timestamp for i in self.instants if i.is_completed)

    def pending(self) -> list[Instant]:
        return [i for i in self.instants if not i.is_completed]

    def tail(self) -> list[Instant]:
        """Incomplete instants newer than every completed one: what a writer that died mid-action
        leaves, and the only instants a rollback may touch."""
        latest = self.latest_completed()
        return [i for i in self.pending() if latest is None or i.timestamp > latest.timestamp]

    def holes(self) -> list[Instant]:
        """Incomplete instants older than a completed one. No writer leaves these (each instant
        is requested after every instant on the timeline, under the writer lock): a completion
        marker of the instant was deleted, and the table is damaged."""
        latest = self.latest_completed()
        return [i for i in self.pending() if latest is not None and i.timestamp < latest.timestamp]

    def commits(self) -> list[Instant]:
        """Completed data commits, oldest first."""
        return [i for i in self.completed() if i.action == Action.COMMIT]

    def latest_completed(self) -> Instant | None:
        done = self.completed()
        return done[-1] if done else None

    def last_timestamp(self) -> str | None:
        return self.instants[-1].timestamp if self.instants else None

    def get(self, timestamp: str) -> Instant:
        for instant in self.instants:
            if instant.timestamp == timestamp:
                return instant
        raise SnapshotNotFoundError(f"no instant {timestamp} on the timeline")

    def read(self, instant: Instant, state: State | None = None) -> dict[str, Any]:
        """The JSON content of an instant's file in the given (default: its latest) state."""
        rel = f"{TIMELINE_DIR}/{instant.file_name(state)}"
        try:
            content = json.loads(self.storage.read_bytes(rel) or b"{}")
        except (OSError, ValueError) as exc:
            raise TableCorruptError(f"cannot read timeline file {rel}: {exc}") from exc
        if not isinstance(content, dict):
            raise TableCorruptError(f"timeline file {rel} is not a JSON object")
        return content


def _encode(content: dict[str, Any]) -> bytes:
    return json.dumps(content, indent=1, sort_keys=True).encode()


def request(
    storage: Storage, action: Action, content: dict[str, Any], timestamp: str | None = None
) -> Instant:
    """Start a new instant, later than every instant on the timeline: at `timestamp` if given,
    else at the next instant from the clock. `ConflictError` if that instant is not later than the
    timeline's latest, or another writer requested it first (for any action); nothing is written
    then."""
    last = Timeline.load(storage).last_timestamp()
    if timestamp is None:
        timestamp = next_instant(last)
    elif last is not None and timestamp <= last:
        raise ConflictError(f"instant {timestamp} of table {storage.uri} is not after its latest, {last}")
    instant = Instant(timestamp, action, State.REQUESTED)
    rel = f"{TIMELINE_DIR}/{instant.file_name()}"
    if not storage.put_if_absent(rel, _encode(content)):
        raise _taken(storage, instant)
    # The file names a timestamp and an action: a writer of another action may have created its
    # own file for the same timestamp meanwhile. Then both back out (neither can tell who came
    # first); at most one instant per timestamp ever goes on.
    rivals = [
        e.rel
        for e in storage.list_files(TIMELINE_DIR)
        if e.rel.rpartition("/")[2].startswith(f"{timestamp}.") and e.rel != rel
    ]
    if rivals:
        storage.delete(rel)
        raise _taken(storage, instant)
    return instant


def mark_inflight(storage: Storage, instant: Instant, content: dict[str, Any]) -> Instant:
    """Record what the instant is about to write (so that rollback can find it), then write it."""
    return _create(storage, Instant(instant.timestamp, instant.action, State.INFLIGHT), content)


# The key of a completed entry naming the completed instant before it (null for the first), so
# that an instant whose timeline files all went missing is noticed by the one after it.
PREVIOUS = "previous"


def complete(storage: Storage, instant: Instant, content: dict[str, Any]) -> Instant:
    """Create the completed state, whole or not at all: from here on readers see the instant. The
    entry names the latest completed instant before it (`PREVIOUS`): under the writer lock that is
    the one this instant follows."""
    before = [i.timestamp for i in Timeline.load(storage).completed() if i.timestamp < instant.timestamp]
    content = {**content, PREVIOUS: before[-1] if before else None}
    return _create(storage, Instant(instant.timestamp, instant.action, State.COMPLETED), content)


def _create(storage: Storage, instant: Instant, content: dict[str, Any]) -> Instant:
    if not storage.put_if_absent(f"{TIMELINE_DIR}/{instant.file_name()}", _encode(content)):
        raise _taken(storage, instant)
    return instant


def _taken(storage: Storage, instant: Instant) -> ConflictError:
    return ConflictError(
        f"another writer took instant {instant.timestamp} of table {storage.uri} first "
        f"({instant.file_name()} exists); nothing of this {instant.action} was committed"
    )


def remove_pending(storage: Storage, instant: Instant) -> None:
    """Delete an instant's requested / inflight files (inflight first, so a crash here leaves a
    requested instant, which rollback handles the same way)."""
    for state in (State.INFLIGHT, State.REQUESTED):
        storage.delete(f"{TIMELINE_DIR}/{instant.file_name(state)}")
