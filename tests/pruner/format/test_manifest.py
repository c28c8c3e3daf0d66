"""pruner.format.manifest: the index files completed instants recorded writing, by partition and
instant range; unrecorded instants make readers list storage; malformed records are corruption."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pruner.errors import TableCorruptError
from pruner.format.layout import TIMELINE_DIR, IndexFileName
from pruner.format.manifest import IndexFileManifest, parse_record
from pruner.format.timeline import Action, Timeline, complete, mark_inflight, request
from pruner.storage import Storage

I1, I2, I3 = "20260101000000001", "20260101000000002", "20260101000000003"


def _log(bucket: int, instant: str) -> IndexFileName:
    return IndexFileName(bucket, "log", instant)


def _commit_record(instant: str, files: dict[str, list[int]]) -> dict[str, Any]:
    return {
        "index_files": [
            f".lakeprune/metadata/{partition}/{_log(b, instant)}"
            for partition, buckets in files.items()
            for b in buckets
        ]
    }


def test_a_commit_records_its_log_files_by_partition() -> None:
    record = parse_record(Action.COMMIT, I1, _commit_record(I1, {"files": [0, 2], "func_index_h": [1]}))
    assert record == {"files": (_log(0, I1), _log(2, I1)), "func_index_h": (_log(1, I1),)}


def test_a_compaction_records_a_base_per_bucket_and_a_clean_nothing() -> None:
    record = parse_record(Action.COMPACTION, I2, {"buckets": {"record_index": [3, 5]}})
    assert record == {"record_index": (IndexFileName(3, "base", I2), IndexFileName(5, "base", I2))}
    assert parse_record(Action.CLEAN, I3, {"earliest_retained": I1}) == {}


def test_names_of_other_instants_or_other_shapes_are_not_taken() -> None:
    content = {"index_files": [f".lakeprune/metadata/files/{_log(0, I2)}", "elsewhere/notes.txt"]}
    assert parse_record(Action.COMMIT, I1, content) == {}


def test_an_entry_without_a_record_is_unrecorded() -> None:
    assert parse_record(Action.COMMIT, I1, {"operation": "insert"}) is None
    assert parse_record(Action.COMPACTION, I1, {}) is None


@pytest.mark.parametrize(
    "content", [{"index_files": [7]}, {"buckets": {"files": ["x"]}}, {"buckets": {"files": 3}}]
)
def test_a_malformed_record_is_corruption(content: dict[str, Any]) -> None:
    with pytest.raises(TableCorruptError, match="malformed index files"):
        parse_record(Action.COMPACTION, I1, content)


def _run(storage: Storage, action: Action, content: dict[str, Any]) -> str:
    instant = request(storage, action, {})
    complete(storage, mark_inflight(storage, instant, {}), content)
    return instant.timestamp


def test_files_by_instant_range(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    first = _run(storage, Action.COMMIT, {"index_files": []})
    second = _run(storage, Action.COMMIT, {"index_files": []})
    # Re-record the two commits with files named after their own instants.
    for instant, buckets in ((first, [0, 1]), (second, [1])):
        record = json.dumps(_commit_record(instant, {"stats": buckets})).encode()
        storage.write_bytes(f"{TIMELINE_DIR}/{instant}.commit.completed", record)
    manifest = IndexFileManifest.of(Timeline.load(storage))
    assert manifest.files("stats", first, None) == [_log(0, first), _log(1, first)]
    assert manifest.files("stats", second, None) == [_log(0, first), _log(1, first), _log(1, second)]
    assert manifest.files("stats", second, after=first) == [_log(1, second)]
    assert manifest.files("other", second, None) == []


def test_an_unrecorded_instant_in_range_means_listing(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    old = _run(storage, Action.COMMIT, {"operation": "insert"})  # written before records existed
    new = _run(storage, Action.COMMIT, {"index_files": []})
    manifest = IndexFileManifest.of(Timeline.load(storage))
    assert manifest.files("files", new, None) is None
    assert manifest.files("files", new, after=old) == []
