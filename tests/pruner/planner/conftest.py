"""The indexed table of the planner tests: its schema and rows, and an oracle that scans its files
(`FunctionalOracle` also computes functional indexes' virtual columns; `assert_never_prunes_a_match`
runs random SQL predicates against an oracle).
The session fixtures that build it with Spark (`indexed_table`, `table_copy`, `oracle`) live in
`tests/pruner/conftest.py`, so that the service tests share the same table: 1,200 rows over 4
regions in ~40 small files, then updates (some move region, some set NaN), deletes and late
inserts. Columns cover every layout the planner must handle: `seq` clustered with the record key,
`hot` skewed, `token` high-cardinality and unclustered, `score` with NULL / NaN / infinities."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from pruner.index.functional import sql_context, virtual_columns
from pruner.planner.prune import prune
from pruner.predicate.sql import translate
from pruner.predicate.tuple_domain import TupleDomain
from pruner.table.table import LakeTable, Snapshot

SCHEMA = (
    "id bigint, region string, seq bigint, hot string, token string, score double, "
    "amount decimal(10,2), day date, ts timestamp, flag boolean"
)
COLUMNS = [c.split()[0] for c in SCHEMA.split(", ")]
REGIONS = ["eu", "us", "ap", "sa"]


def row(key: int, version: int = 0, region: str | None = None) -> tuple[Any, ...]:
    score: float | None = (key % 97) / 3 + version
    if key % 23 == 0:
        score = None
    elif key % 29 == 0:
        score = math.nan
    elif key % 101 == 0:
        score = math.inf if key % 2 else -math.inf
    return (
        key,
        region or REGIONS[key % 4],
        key,
        "a" if key % 5 else f"h{key % 13}",
        f"t{(key * 7919) % 100003}",
        score,
        None if key % 17 == 0 else Decimal(key % 1000) / 100,
        date(2026, 1, 1) + timedelta(days=key % 60),
        datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=key * 13),
        key % 3 == 0,
    )


class Oracle:
    """Scans every live file of a snapshot: which files hold a row matching a TupleDomain."""

    def __init__(self, snapshot: Snapshot) -> None:
        storage = snapshot.table.storage
        self.rows = {
            storage.full_uri(f.path): pq.read_table(storage.path(f.path), filesystem=storage.fs).to_pylist()
            for f in snapshot.files()
        }

    def files_matching(self, predicate: TupleDomain) -> set[str]:
        return {path for path, rows in self.rows.items() if any(predicate.matches(r) for r in rows)}

    def matching_keys(self, predicate: TupleDomain, paths: set[str] | None = None) -> list[int]:
        """The `id` of every matching row in the given files (default: all), sorted."""
        chosen = self.rows if paths is None else {p: self.rows[p] for p in paths}
        return sorted(r["id"] for rows in chosen.values() for r in rows if predicate.matches(r))


class FunctionalOracle(Oracle):
    """The oracle with every functional index's virtual column computed for every row, with the
    registry's Arrow implementation."""

    def __init__(self, snapshot: Snapshot) -> None:
        table = snapshot.table
        virtual = virtual_columns(table.config.schema, table.definitions)
        self.rows = {}
        for f in snapshot.files():
            data = pq.read_table(table.storage.path(f.path), filesystem=table.storage.fs)
            for v in virtual:
                data = data.append_column(v.name, v.expression.arrow(data))
            self.rows[table.storage.full_uri(f.path)] = data.to_pylist()


def combined(atoms: SearchStrategy[str]) -> SearchStrategy[str]:
    """SQL predicates of up to three atoms joined by AND / OR, each part possibly negated."""
    return st.recursive(
        atoms,
        lambda inner: (
            st.builds(lambda a, b, op: f"({a}) {op} ({b})", inner, inner, st.sampled_from(["AND", "OR"]))
            | st.builds(lambda a: f"NOT ({a})", inner)
        ),
        max_leaves=3,
    )


def assert_never_prunes_a_match(
    location: str, oracle: FunctionalOracle, predicates: SearchStrategy[str], examples: int = 300
) -> None:
    """For random SQL predicates (functional ones included): no file the oracle finds a match in
    is pruned, so the kept files' matching rows are a full scan's; no step falls back; and the
    indexes prune something in more than a quarter of the cases."""
    table = LakeTable.open(location)
    schema, expressions = sql_context(table.config.schema, table.definitions)
    pruned_something = []

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
    @given(predicates)
    def check(where: str) -> None:
        domain = translate(where, schema, expressions).domain  # the oracle's view of the predicate
        result = prune(table, where)  # the entry point binds the SQL itself
        selected = {s.path for s in result.splits}
        missing = oracle.files_matching(domain) - selected
        assert not missing, f"{where}: pruned {len(missing)} file(s) holding matches"
        assert oracle.matching_keys(domain, selected) == oracle.matching_keys(domain)
        assert result.fallbacks == 0, [s.fallback for s in result.explain if s.fallback]
        pruned_something.append(result.files_selected < result.files_total)

    check()
    assert sum(pruned_something) > len(pruned_something) // 4  # the indexes did real work
