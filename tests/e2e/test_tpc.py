"""TPC-H's 22 and TPC-DS's 99 queries at Trino's `tiny` scale answer alike through the native
`lakeprune` catalog and Trino's `hive` catalog over the very same Parquet files (the correctness
pass of `bench/tpc.py`, without its timing). The e2e suites' shared Trino (`dynamic_trino`),
given this suite's catalogs for the while, writes both lakes into a temporary directory, the tests'
shared Spark session adopts them, and the same Trino then answers every query on both catalogs."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
from pyspark.sql import SparkSession

from tests.e2e.engines import Engine, SharedTrino
from tests.e2e.native import native_plugin
from tests.e2e.tpc_lake import SUITES, Lake, adopt_tables, side_by_side
from tests.e2e.tpc_queries import EQUAL, TIES, check_answers, suite_queries

# Writing and adopting both suites takes minutes on a loaded 2-core machine.
pytestmark = [pytest.mark.slow, pytest.mark.engine, pytest.mark.timeout(2400)]

# Queries that fail alike on both catalogs at tiny scale: q90 divides by a count of web sales that
# is zero there.
EXPECTED_ERRORS = {("tpcds", "q90"): "DIVISION_BY_ZERO"}
# Queries at a time: at tiny scale a query mostly waits (planning, scheduling, the client's polls),
# so a few at once keep both cores busy.
CONCURRENCY = 4


@pytest.fixture(scope="module")
def tpc(
    tmp_path_factory: pytest.TempPathFactory, spark: SparkSession, request: pytest.FixtureRequest
) -> Iterator[tuple[Engine, list[Lake]]]:
    native_plugin()  # skips where this checkout has no connector to build
    dynamic_trino: SharedTrino = request.getfixturevalue("dynamic_trino")
    root = tmp_path_factory.mktemp("tpc")
    wanted = [(suite, "tiny", root / suite) for suite in SUITES]
    with side_by_side(wanted, partial(adopt_tables, spark), trino=dynamic_trino) as (engine, _, lakes):
        yield engine, lakes


@pytest.mark.parametrize("suite", SUITES)
def test_every_query_answers_alike(tpc: tuple[Engine, list[Lake]], suite: str) -> None:
    engine, lakes = tpc
    lake = next(lake for lake in lakes if lake.suite == suite)
    assert all(info["rows"] > 0 for info in lake.tables.values()), lake.tables
    verdicts = check_answers(engine, suite, suite_queries(suite), ("lakeprune", "hive"), CONCURRENCY)
    wrong = {
        name: v
        for name, v in verdicts.items()
        if v["verdict"] not in (EQUAL, TIES) and not _expected_error(suite, name, v)
    }
    assert not wrong, f"{len(wrong)} of {len(verdicts)} {suite} queries answer differently: {wrong}"
    assert sum(v["rows"] > 0 for v in verdicts.values()) > len(verdicts) // 2, "most queries return rows"


def _expected_error(suite: str, name: str, verdict: dict[str, Any]) -> bool:
    expected = EXPECTED_ERRORS.get((suite, name))
    errors = verdict.get("errors", {})
    return expected is not None and len(errors) == 2 and all(expected in e for e in errors.values())
