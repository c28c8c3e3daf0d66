"""pruner.format.layout: data and index file names round-trip, and only names lakeprune writes parse:
ASCII digits, matched whole (no trailing newline), so rollback and clean never take another file
for one of an instant."""

from __future__ import annotations

import pytest

from pruner.format.layout import DataFileName, IndexFileName

DATA = DataFileName("0123456789abcdef0123456789abcdef", "3-17", "20260102030405006")
INDEX = IndexFileName(7, "log", "20260102030405006")


def test_names_round_trip() -> None:
    assert DataFileName.parse(str(DATA)) == DATA
    assert IndexFileName.parse(str(INDEX)) == INDEX


@pytest.mark.parametrize("zero", ["\uff10", "\u0660", "\u0966"])
def test_other_scripts_digits_do_not_parse(zero: str) -> None:
    fullwidth = str.maketrans({str(d): chr(ord(zero) + d) for d in range(10)})
    assert (
        DataFileName.parse(
            f"{DATA.file_group}_{DATA.write_token}_{DATA.instant.translate(fullwidth)}.parquet"
        )
        is None
    )
    assert IndexFileName.parse(f"b00007.log.{INDEX.instant.translate(fullwidth)}.parquet") is None
    assert IndexFileName.parse(f"b{'00007'.translate(fullwidth)}.log.{INDEX.instant}.parquet") is None


def test_names_are_matched_whole() -> None:
    assert DataFileName.parse(f"{DATA}\n") is None
    assert IndexFileName.parse(f"{INDEX}\n") is None
    assert IndexFileName.parse(f"x{INDEX}") is None
