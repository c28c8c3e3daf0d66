"""The workload log: entries round-trip per table, the log stays within its bound keeping the
newest, a torn line is skipped and counted, a log that cannot be written never raises, and the
spread estimate of the evidence behaves at its ends."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pruner.advisor.evidence import sample, spread
from pruner.advisor.shapes import Operation, Shape
from pruner.advisor.workload import STATE_HOME_VARIABLE, WorkloadEntry, WorkloadLog, default_directory
from pruner.planner.result import PruneResult
from pruner.predicate.tuple_domain import TupleDomain
from pruner.table.table import LakeTable


def _entry(table: str, number: int) -> WorkloadEntry:
    return WorkloadEntry(
        f"2026-11-29T00:00:{number % 60:02d}.000+00:00",
        table,
        "trino",
        "20261129000000000",
        (Shape("customer", Operation.EQUAL, values=1),),
        40,
        number % 40,
        1_000 * number,
        ("idx_customer",),
        (("stats", "it ran and every file it was given may hold a match"),),
        1.5,
        number % 2,
    )


def test_entries_round_trip_per_table(tmp_path: Path) -> None:
    log = WorkloadLog(tmp_path / "w")
    for number in range(5):
        log.record(_entry("s3://lake/orders", number))
        log.record(_entry("s3://lake/lines", number))
    orders, unreadable = log.entries("s3://lake/orders")
    assert unreadable == 0
    assert orders == [_entry("s3://lake/orders", n) for n in range(5)]
    assert log.entries("s3://lake/unknown") == ([], 0)
    assert log.files("s3://lake/orders")[0] != log.files("s3://other/orders")[0]


def test_a_log_keeps_its_newest_entries_within_its_bound(tmp_path: Path) -> None:
    log = WorkloadLog(tmp_path, max_bytes=8_000)
    for number in range(200):
        log.record(_entry("/lake/t", number))
    current, previous = log.files("/lake/t")
    assert current.stat().st_size + previous.stat().st_size <= 8_000
    kept, _ = log.entries("/lake/t")
    assert 10 < len(kept) < 200
    assert kept == [_entry("/lake/t", n) for n in range(200 - len(kept), 200)]


def test_a_torn_line_is_skipped_and_counted(tmp_path: Path) -> None:
    log = WorkloadLog(tmp_path)
    log.record(_entry("/lake/t", 1))
    with open(log.files("/lake/t")[0], "ab") as out:
        out.write(b'{"at": "2026-11-29T00:00:0')
    log.record(_entry("/lake/t", 2))
    entries, unreadable = log.entries("/lake/t")
    assert unreadable == 1
    assert entries == [_entry("/lake/t", 1)]  # the torn line swallowed the next one's start


def test_a_log_that_cannot_be_written_never_raises(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    log = WorkloadLog(blocked / "w")
    with caplog.at_level(logging.WARNING, "pruner.advisor.workload"):
        log.record(_entry("/lake/t", 1))
        log.record(_entry("/lake/t", 2))
    assert [r.getMessage() for r in caplog.records if "not written" in r.getMessage()] != []
    assert len([r for r in caplog.records if "not written" in r.getMessage()]) == 1


class _Storage:
    uri = "/lake/broken"


class _BrokenTable:
    """A table whose index columns cannot be read (a bug, say)."""

    storage = _Storage()

    @property
    def virtual_columns(self) -> tuple[object, ...]:
        raise RuntimeError("boom")


def test_a_prune_whose_entry_cannot_be_made_is_logged_never_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = WorkloadLog(tmp_path)
    with caplog.at_level(logging.ERROR, "pruner.advisor.workload"):
        log.record_prune(
            cast(LakeTable, _BrokenTable()), "trino", TupleDomain.all(), PruneResult(None, "", 0, [])
        )
    assert "could not be made" in caplog.text
    assert log.entries("/lake/broken") == ([], 0)


def test_the_default_directory_follows_the_state_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(STATE_HOME_VARIABLE, str(tmp_path))
    assert default_directory() == tmp_path / "workload"
    monkeypatch.delenv(STATE_HOME_VARIABLE)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert default_directory() == tmp_path / "xdg" / "lakeprune" / "workload"
    assert os.environ.get(STATE_HOME_VARIABLE) is None


@given(st.integers(2, 64), st.floats(1.0, 64.0))
def test_the_spread_is_a_fraction_that_grows_with_the_sampled_files_a_value_is_in(
    sampled: int, mean: float
) -> None:
    x = spread(mean, sampled)
    assert 0.0 <= x <= 1.0
    assert spread(min(mean + 0.5, sampled), sampled) >= x - 1e-9


def test_the_spread_at_its_ends() -> None:
    assert spread(1.0, 16) == 0.0  # every value in one sampled file: one file of all
    assert spread(16.0, 16) == 1.0  # every value in every sampled file
    assert abs(spread(16 * 0.5 / (1 - 0.5**16), 16) - 0.5) < 1e-6


def test_a_sample_is_spread_over_the_files() -> None:
    assert sample(list(range(100)), 4) == [0, 25, 50, 75]
    assert sample([1, 2], 4) == [1, 2]
