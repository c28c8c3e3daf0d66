"""Trino 476 and Presto 0.287 query lakeprune tables through the lakeprune catalog (their Thrift
connector against the sidecar), end to end, and answer exactly what DuckDB answers over the same
Parquet files. Each test runs once per engine and path (local process; container with Docker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pruner.sidecar import Sidecar
from tests.e2e.engines import Engine
from tests.e2e.queries import QUERIES, Query, check_paged_scan, check_query, check_types
from tests.e2e.warehouse import SCHEMA_NAME, TABLES

pytestmark = pytest.mark.slow


def test_catalog_lists_the_warehouse(running: tuple[Engine, Sidecar]) -> None:
    engine, _ = running
    assert [SCHEMA_NAME] in engine.query(f"SHOW SCHEMAS FROM {engine.catalog}")
    assert sorted(engine.query(f"SHOW TABLES FROM {engine.catalog}.{SCHEMA_NAME}")) == [[t] for t in TABLES]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_query_matches_duckdb(running: tuple[Engine, Sidecar], lake_warehouse: Path, query: Query) -> None:
    engine, sidecar = running
    check_query(engine, sidecar, lake_warehouse, query, engine.catalog)


def test_every_mapped_type_round_trips(running: tuple[Engine, Sidecar], lake_warehouse: Path) -> None:
    check_types(running[0], lake_warehouse)


def test_scan_larger_than_max_response_size_pages(
    running: tuple[Engine, Sidecar], lake_warehouse: Path
) -> None:
    check_paged_scan(running[0], running[1], lake_warehouse)
