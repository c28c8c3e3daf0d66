"""pruner.format.timeline and pruner.format.instant: state transitions (each a create that one writer
wins), loading, instant ordering."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pruner.errors import ConflictError, SnapshotNotFoundError, TableCorruptError
from pruner.format import timeline as timeline_module
from pruner.format.instant import format_instant, is_instant, next_instant, parse_instant
from pruner.format.layout import TIMELINE_DIR
from pruner.format.timeline import (
    PREVIOUS,
    Action,
    Instant,
    State,
    Timeline,
    complete,
    mark_inflight,
    remove_pending,
    request,
)
from pruner.storage import Storage

FIXED_NOW = datetime(2024, 5, 6, 7, 8, 9, 10_000, tzinfo=UTC)


@pytest.fixture
def storage(tmp_path: Path) -> Storage:
    return Storage.from_uri(str(tmp_path))


def _timeline_files(storage: Storage) -> list[str]:
    return [e.rel.rpartition("/")[2] for e in storage.list_files(TIMELINE_DIR)]


def test_instant_lifecycle(storage: Storage) -> None:
    requested = request(storage, Action.COMMIT, {"op": "insert"})
    assert requested.state == State.REQUESTED
    assert is_instant(requested.timestamp)
    assert Timeline.load(storage).instants == (requested,)

    inflight = mark_inflight(storage, requested, {"files": ["a"]})
    assert inflight == Instant(requested.timestamp, Action.COMMIT, State.INFLIGHT)
    assert Timeline.load(storage).instants == (inflight,)

    done = complete(storage, inflight, {"rows": 3})
    assert done.is_completed
    timeline = Timeline.load(storage)
    assert timeline.instants == (done,)
    # Earlier state files stay on storage; loading picks the latest state, whatever the listing order.
    assert sorted(_timeline_files(storage)) == sorted(done.file_name(s) for s in State)
    assert timeline.read(done) == {"rows": 3, PREVIOUS: None}, "the first completed instant follows none"
    assert timeline.read(done, State.INFLIGHT) == {"files": ["a"]}
    assert timeline.read(done, State.REQUESTED) == {"op": "insert"}


def test_remove_pending(storage: Storage) -> None:
    kept = complete(storage, request(storage, Action.COMMIT, {}), {})
    pending = mark_inflight(storage, request(storage, Action.CLEAN, {}), {})
    assert Timeline.load(storage).pending() == [pending]
    remove_pending(storage, pending)
    assert Timeline.load(storage).instants == (kept,)
    assert not [name for name in _timeline_files(storage) if name.startswith(pending.timestamp)]
    remove_pending(storage, pending)  # nothing left to remove is fine


def test_remove_pending_of_a_requested_only_instant(storage: Storage) -> None:
    pending = request(storage, Action.COMPACTION, {})
    remove_pending(storage, pending)
    assert Timeline.load(storage).instants == ()


def test_timeline_queries(storage: Storage) -> None:
    first = complete(storage, request(storage, Action.COMMIT, {}), {})
    compaction = complete(storage, request(storage, Action.COMPACTION, {}), {})
    second = complete(storage, request(storage, Action.COMMIT, {}), {})
    pending = request(storage, Action.COMMIT, {})
    timeline = Timeline.load(storage)
    assert timeline.instants == (first, compaction, second, pending)
    assert timeline.completed() == [first, compaction, second]
    assert timeline.commits() == [first, second]
    assert timeline.pending() == [pending]
    assert timeline.latest_completed() == second
    assert timeline.last_timestamp() == pending.timestamp
    assert timeline.completed_timestamps() == {first.timestamp, compaction.timestamp, second.timestamp}
    assert timeline.get(compaction.timestamp) == compaction
    with pytest.raises(SnapshotNotFoundError, match="20000101000000000"):
        timeline.get("20000101000000000")


def test_empty_timeline(storage: Storage) -> None:
    timeline = Timeline.load(storage)
    assert timeline.instants == ()
    assert timeline.latest_completed() is None
    assert timeline.last_timestamp() is None


def test_load_ignores_temporary_and_foreign_files(storage: Storage) -> None:
    done = complete(storage, request(storage, Action.COMMIT, {}), {})
    for name in [
        f".{done.timestamp}.commit.completed.0123456789abcdef.tmp",
        ".table.json.tmp",
        "notes.txt",
        "readme.commit.completed",
        f"{done.timestamp}.commit",
    ]:
        storage.write_bytes(f"{TIMELINE_DIR}/{name}", b"garbage")
    assert Timeline.load(storage).instants == (done,)


@pytest.mark.parametrize("name", ["20240101000000000.merge.completed", "20240101000000000.commit.done"])
def test_unrecognised_timeline_file_is_corrupt(storage: Storage, name: str) -> None:
    storage.write_bytes(f"{TIMELINE_DIR}/{name}", b"{}")
    with pytest.raises(TableCorruptError, match=name.replace(".", r"\.")):
        Timeline.load(storage)


@pytest.mark.parametrize(("content", "expected"), [(b"", {}), (b'{"a": 1}', {"a": 1})])
def test_read_content(storage: Storage, content: bytes, expected: dict[str, int]) -> None:
    instant = Instant("20240101000000000", Action.COMMIT, State.COMPLETED)
    storage.write_bytes(f"{TIMELINE_DIR}/{instant.file_name()}", content)
    assert Timeline.load(storage).read(instant) == expected


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b"\xff\xfe"])
def test_read_corrupt_content(storage: Storage, content: bytes) -> None:
    instant = Instant("20240101000000000", Action.COMMIT, State.COMPLETED)
    storage.write_bytes(f"{TIMELINE_DIR}/{instant.file_name()}", content)
    with pytest.raises(TableCorruptError, match=instant.file_name()):
        Timeline.load(storage).read(instant)


def test_read_missing_state_file(storage: Storage) -> None:
    done = complete(storage, request(storage, Action.COMMIT, {}), {})
    remove_pending(storage, done)
    with pytest.raises(TableCorruptError, match="cannot read timeline file"):
        Timeline.load(storage).read(done, State.REQUESTED)


def test_next_instant_with_a_clock_that_does_not_advance() -> None:
    instants: list[str] = []
    previous = None
    for _ in range(50):
        previous = next_instant(previous, now=FIXED_NOW)
        instants.append(previous)
    assert instants[0] == "20240506070809010"
    assert instants[1] == "20240506070809011"
    assert all(is_instant(i) for i in instants)
    assert all(a < b for a, b in itertools.pairwise(instants))


@pytest.mark.parametrize(
    ("after", "now", "expected"),
    [
        (None, FIXED_NOW, "20240506070809010"),
        ("20240506070809009", FIXED_NOW, "20240506070809010"),  # clock ahead: use it
        ("20240506070809010", FIXED_NOW, "20240506070809011"),  # same millisecond
        ("20250101000000000", FIXED_NOW, "20250101000000001"),  # clock behind
        ("20241231235959999", FIXED_NOW, "20250101000000000"),  # carries into the next year
    ],
)
def test_next_instant(after: str | None, now: datetime, expected: str) -> None:
    assert next_instant(after, now=now) == expected


def test_requests_are_strictly_increasing_when_the_clock_stands_still(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timeline_module, "next_instant", lambda after: next_instant(after, now=FIXED_NOW))
    instants = [request(storage, Action.COMMIT, {}) for _ in range(5)]
    timestamps = [i.timestamp for i in instants]
    assert timestamps == sorted(set(timestamps))
    assert timestamps[0] == format_instant(FIXED_NOW)
    assert Timeline.load(storage).instants == tuple(instants)


def test_requests_with_the_real_clock_are_strictly_increasing(storage: Storage) -> None:
    timestamps = [request(storage, Action.COMMIT, {}).timestamp for _ in range(10)]
    assert timestamps == sorted(set(timestamps))


@given(st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(9999, 12, 31)))
def test_format_and_parse_instant_round_trip(moment: datetime) -> None:
    moment = moment.replace(tzinfo=UTC, microsecond=moment.microsecond // 1000 * 1000)
    text = format_instant(moment)
    assert is_instant(text)
    assert parse_instant(text) == moment


def test_format_instant_converts_to_utc() -> None:
    amsterdam_summer = timezone(timedelta(hours=2))
    assert format_instant(datetime(2024, 5, 6, 9, 8, 9, 10_999, tzinfo=amsterdam_summer)) == (
        "20240506070809010"
    )
    assert not is_instant("2024050607080901")
    assert not is_instant("2024050607080901x")


def _digits_of(zero: str, text: str) -> str:
    """`text` with its ASCII digits written in another script whose zero is `zero`."""
    return "".join(chr(ord(zero) + int(c)) if c.isascii() and c.isdigit() else c for c in text)


# Full-width, Arabic-Indic and Devanagari digits: all `\d` in a Python regex, all read by int().
OTHER_ZEROS = ["\uff10", "\u0660", "\u0966"]


@pytest.mark.parametrize("zero", OTHER_ZEROS)
def test_instants_are_ascii_digits_only(zero: str) -> None:
    text = _digits_of(zero, "20260102030405006")
    assert len(text) == 17 and text.isdigit() and int(text) == 20260102030405006
    assert not is_instant(text)
    assert not is_instant("20260102030405006\n"), "matched whole: no trailing newline"


@pytest.mark.parametrize("zero", OTHER_ZEROS)
def test_load_ignores_timeline_files_named_with_other_digits(storage: Storage, zero: str) -> None:
    done = complete(storage, request(storage, Action.COMMIT, {}), {})
    storage.write_bytes(f"{TIMELINE_DIR}/{_digits_of(zero, done.timestamp)}.commit.completed", b"{}")
    assert Timeline.load(storage).instants == (done,)


def test_timeline_files_are_created_once(storage: Storage) -> None:
    """Every transition is a create: a second writer for the same state gets a conflict, and the
    first one's file is left as it was."""
    requested = request(storage, Action.COMMIT, {"op": "insert"})
    inflight = mark_inflight(storage, requested, {"files": ["a"]})
    with pytest.raises(ConflictError, match=f"took instant {requested.timestamp} of table {storage.uri}"):
        mark_inflight(storage, requested, {"files": ["b"]})
    done = complete(storage, inflight, {"rows": 3})
    with pytest.raises(ConflictError, match=r"\.commit\.completed exists"):
        complete(storage, inflight, {"rows": 4})
    timeline = Timeline.load(storage)
    assert timeline.instants == (done,)
    assert timeline.read(done) == {"rows": 3, PREVIOUS: None}
    assert timeline.read(done, State.INFLIGHT) == {"files": ["a"]}
    assert sorted(_timeline_files(storage)) == sorted(done.file_name(s) for s in State)


def test_a_requested_instant_is_taken_once(storage: Storage) -> None:
    stamp = format_instant(FIXED_NOW)
    first = request(storage, Action.COMMIT, {"op": "insert"}, timestamp=stamp)
    assert first == Instant(stamp, Action.COMMIT, State.REQUESTED)
    with pytest.raises(ConflictError, match=f"is not after its latest, {stamp}"):
        request(storage, Action.COMMIT, {"op": "upsert"}, timestamp=stamp)
    assert Timeline.load(storage).read(first) == {"op": "insert"}
    assert _timeline_files(storage) == [first.file_name()]


def test_a_request_that_loses_the_create_writes_nothing(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two writers that loaded the same timeline: the second one's create finds the first's file."""
    stamp = format_instant(FIXED_NOW)
    monkeypatch.setattr(Timeline, "load", classmethod(lambda cls, s: cls(s, ())))  # as loaded before
    first = request(storage, Action.COMMIT, {"op": "insert"}, timestamp=stamp)
    with pytest.raises(ConflictError, match="another writer took instant"):
        request(storage, Action.COMMIT, {"op": "upsert"}, timestamp=stamp)
    monkeypatch.undo()
    assert Timeline.load(storage).instants == (first,)
    assert Timeline.load(storage).read(first) == {"op": "insert"}


def test_requests_of_two_actions_for_one_timestamp_both_back_out(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A clean and a commit that picked the same timestamp: their file names differ, so both
    creates succeed; each then sees the other's file and withdraws its own."""
    stamp = format_instant(FIXED_NOW)
    rival = f"{TIMELINE_DIR}/{stamp}.clean.requested"
    storage.write_bytes(rival, b"{}")  # the clean's create, just before ours
    monkeypatch.setattr(Timeline, "load", classmethod(lambda cls, s: cls(s, ())))
    with pytest.raises(ConflictError, match=f"took instant {stamp}"):
        request(storage, Action.COMMIT, {"op": "insert"}, timestamp=stamp)
    assert _timeline_files(storage) == [rival.rpartition("/")[2]]


def test_a_completed_instant_names_the_one_it_follows(storage: Storage) -> None:
    first = complete(storage, request(storage, Action.COMMIT, {}), {})
    second = complete(storage, request(storage, Action.COMPACTION, {}), {})
    assert Timeline.load(storage).read(second)[PREVIOUS] == first.timestamp


def test_only_incomplete_instants_above_every_completed_one_are_the_tail(storage: Storage) -> None:
    below = request(storage, Action.COMMIT, {})
    done = complete(storage, request(storage, Action.COMMIT, {}), {})
    above = mark_inflight(storage, request(storage, Action.COMMIT, {}), {})
    timeline = Timeline.load(storage)
    assert timeline.latest_completed() == done
    assert timeline.tail() == [above]
    assert timeline.holes() == [below]
