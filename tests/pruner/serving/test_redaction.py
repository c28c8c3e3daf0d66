"""`Redactor`: every spelling of a warehouse root (as configured, absolute, through a symlink, a
URI and the path pyarrow's filesystem uses) becomes the schema name, only where it is a whole path,
and explain records are redacted while splits keep their paths."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pruner.planner.result import ExplainStep, IndexReport, PruneResult, Split
from pruner.serving.redaction import Redactor


def test_local_roots_in_every_spelling(tmp_path: Path) -> None:
    real = tmp_path / "real" / "wh"
    real.mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real)
    redact = Redactor({"lake": str(link)})
    for spelling in (str(link), f"{link}/", str(real), f"file://{real}"):
        assert "in table lake/events" in redact(
            f"no completed instant in table {spelling.rstrip('/')}/events"
        )
    assert redact(f"[Errno 36] File name too long: '{real}/events/x'") == (
        "[Errno 36] File name too long: 'lake/events/x'"
    )


def test_a_relative_root_is_redacted_as_configured_and_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    redact = Redactor({"demo": "./wh"})
    assert (
        redact(f"{tmp_path}/wh/t/table.json is corrupt and ./wh/t too")
        == "demo/t/table.json is corrupt and demo/t too"
    )


@pytest.mark.parametrize(
    ("root", "message", "expected"),
    [
        (
            "s3://bucket/lake",
            "cannot read index file s3://bucket/lake/t/x.parquet",
            "cannot read index file sales/t/x.parquet",
        ),
        (
            "s3://bucket/lake",
            "When reading 'bucket/lake/t/x.parquet': Access Denied",
            "When reading 'sales/t/x.parquet': Access Denied",
        ),
        ("hdfs://nn:8020/user/lake", "File does not exist: /user/lake/t/x", "File does not exist: sales/t/x"),
        (
            "abfs://box@acct.dfs.core.windows.net/lake",
            "Path 'box/lake/t' not found",
            "Path 'sales/t' not found",
        ),
    ],
)
def test_uris_and_filesystem_paths(root: str, message: str, expected: str) -> None:
    assert Redactor({"sales": root})(message) == expected


def test_only_whole_paths_and_the_longest_root_first() -> None:
    redact = Redactor({"a": "/srv/lake", "b": "/srv/lake/b_root"})
    assert redact("/srv/lake2/t /mnt/srv/lake/t") == "/srv/lake2/t /mnt/srv/lake/t"
    assert redact("/srv/lake/t and /srv/lake/b_root/t") == "a/t and b/t"
    assert Redactor({"root": "/"})("/etc/passwd") == "/etc/passwd"  # too short to tell apart


def test_explain_is_redacted_and_splits_are_not() -> None:
    split = Split("/srv/lake/t/f.parquet", "", {}, "g", 0, 10, 5, 10)
    result = PruneResult(
        snapshot="20260101000000000",
        predicate="id = 1",
        files_total=1,
        splits=[split],
        explain=[
            ExplainStep(
                "column_stats", "column_stats", ("id",), 1, 1, 1.0, fallback="cannot read /srv/lake/t/i"
            ),
            ExplainStep("bloom_filters", None, ("id",), 1, 1, 0.1, skipped="no bloom filter in /srv/lake/t"),
        ],
    )
    redacted = Redactor({"lake": "/srv/lake"}).prune_result(result)
    assert [s.fallback or s.skipped for s in redacted.explain] == [
        "cannot read lake/t/i",
        "no bloom filter in lake/t",
    ]
    assert redacted.splits == [split]  # engines read these files
    report = (IndexReport("stats", "column_stats", 0, "fell back, files kept: cannot read /srv/lake/t/i"),)
    redacted = Redactor({"lake": "/srv/lake"}).prune_result(dataclasses.replace(result, index_report=report))
    assert [e.why_not for e in redacted.index_report] == ["fell back, files kept: cannot read lake/t/i"]
