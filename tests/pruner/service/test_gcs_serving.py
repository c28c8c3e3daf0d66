"""The sidecar over a warehouse on Cloud Storage (the session's fake-gcs-server, reached through
`STORAGE_EMULATOR_HOST`): it lists the table, and a keyed prune through gRPC keeps the files the
same prune keeps in-process, reads index files with ranged GETs when cold and none when warm."""

from __future__ import annotations

import pytest

from pruner.client import PruningClient
from pruner.planner.prune import prune
from pruner.predicate.domain import Domain
from pruner.predicate.tuple_domain import TupleDomain
from pruner.storage_requests import StorageRequests
from pruner.table.table import LakeTable
from tests.pruner.planner.conftest import Oracle
from tests.pruner.service.conftest import SCHEMA, TABLE, StartSidecar, address
from tests.support_gcs import FakeGcs


def test_the_sidecar_prunes_a_table_on_cloud_storage(
    gcs_server: FakeGcs,
    indexed_gcs_table: tuple[str, Oracle],
    start_sidecar: StartSidecar,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gcs_server.point_environment_at(monkeypatch)
    location, oracle = indexed_gcs_table
    assert location.startswith("gs://") and location.endswith(f"/{TABLE}")
    keys = LakeTable.open(location).snapshot().read(columns=["id"]).column("id").to_pylist()[:2]
    predicate = TupleDomain.with_domains({"id": Domain.multiple_values(keys)})
    sidecar = start_sidecar(location.removesuffix(f"/{TABLE}"))
    with PruningClient(address(sidecar)) as client:
        assert str(client.get_table(SCHEMA, TABLE).name) == f"{SCHEMA}.{TABLE}"
        cold = client.prune(SCHEMA, TABLE, predicate)
        warm = client.prune(SCHEMA, TABLE, predicate)
    in_process = prune(LakeTable.open(location), predicate)
    assert [s.path for s in cold.splits] == [s.path for s in in_process.splits]
    assert all(s.path.startswith(f"{location}/") for s in cold.splits)
    assert 0 < cold.files_selected < cold.files_total
    assert oracle.files_matching(predicate) <= {s.path for s in cold.splits}
    assert cold.storage.gets > 0
    assert warm.splits == cold.splits and warm.storage == StorageRequests()
