"""Prune over gRPC returns exactly what the in-process planner returns, for the predicates of the
planner's oracle suites: random TupleDomains over every column type (encoded by the client, decoded
and bound by the server), and random SQL predicates translated on the client with the schema from
GetTable. Both sides prune the same snapshot."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pruner.client import PruningClient
from pruner.planner.prune import prune
from pruner.predicate.sql import translate
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import is_nan
from pruner.table.table import LakeTable
from tests.pruner.planner.conftest import COLUMNS, Oracle
from tests.pruner.planner.test_invariant import _pool, domains
from tests.pruner.planner.test_sql_invariant import predicates
from tests.pruner.service.conftest import SCHEMA, TABLE

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))


def test_tuple_domains(client: PruningClient, indexed_table: str, oracle: Oracle) -> None:
    snapshot = LakeTable.open(indexed_table).snapshot()
    pools = {c: _pool(oracle, c) for c in COLUMNS}

    @SETTINGS
    @given(st.data())
    def check(data: st.DataObject) -> None:
        columns = data.draw(st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=3, unique=True))
        predicate = TupleDomain.with_domains({c: data.draw(domains(pools[c])) for c in columns})
        local = prune(snapshot.table, predicate, snapshot=snapshot.instant)
        remote = client.prune(SCHEMA, TABLE, predicate, explain=True)
        assert remote.splits == local.splits, str(predicate)
        assert (remote.snapshot, remote.predicate, remote.files_total, remote.fallbacks) == (
            local.snapshot,
            local.predicate,
            local.files_total,
            local.fallbacks,
        )
        assert [(s.step, s.files_out) for s in remote.explain] == [
            (s.step, s.files_out) for s in local.explain
        ]

    check()


@pytest.mark.parametrize("stream", [False, True], ids=["Prune", "PruneStream"])
def test_sql_predicates(client: PruningClient, indexed_table: str, oracle: Oracle, stream: bool) -> None:
    snapshot = LakeTable.open(indexed_table).snapshot()
    schema = snapshot.table.config.schema
    pools: dict[str, list[Any]] = {
        c: sorted(
            {
                r[c]
                for rows in oracle.rows.values()
                for r in rows[:25]
                if r[c] is not None and not is_nan(r[c])
            }
        )
        for c in COLUMNS
    }

    @settings(SETTINGS, max_examples=60)
    @given(predicates(pools))
    def check(where: str) -> None:
        local = prune(snapshot.table, where, snapshot=snapshot.instant)
        remote = client.prune(SCHEMA, TABLE, where, stream=stream)
        assert client.bind(SCHEMA, TABLE, where).domain == translate(where, schema).domain
        assert remote.splits == local.splits, where
        assert remote.widened == local.widened, where

    check()
