"""The one error map (`pruner.serving.errors.classify`) for a damaged table: FAILED_PRECONDITION,
not the UNAVAILABLE of other corruption (nobody should retry it), with the reason the Trino
connector turns into LAKEPRUNE_BAD_DATA (the Thrift catalog retries only UNAVAILABLE)."""

from __future__ import annotations

from pruner.errors import TableCorruptError, TableDamagedError
from pruner.serving.errors import TABLE_DAMAGED, Status, classify


def test_a_damaged_table_is_a_failed_precondition_with_its_reason() -> None:
    failure = classify(TableDamagedError("table t is damaged: instant 1 is missing"))
    assert failure.status == Status.FAILED_PRECONDITION
    assert failure.reason == TABLE_DAMAGED
    assert failure.message == "table t is damaged: instant 1 is missing"


def test_other_corruption_stays_unavailable_without_a_reason() -> None:
    failure = classify(TableCorruptError("cannot read timeline file x"))
    assert failure.status == Status.UNAVAILABLE
    assert failure.reason is None
