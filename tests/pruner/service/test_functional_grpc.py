"""Functional indexes over gRPC: `GetTable` lists each as a virtual column (name, type, expression,
source, monotonic); `Prune` accepts a domain on it; the client maps `hour(ts)` in a WHERE clause
to the index, so a remote prune equals the local one."""

from __future__ import annotations

from pathlib import Path

from builder import LakepruneTable
from pruner.client import PruningClient
from pruner.types import ColumnType
from tests.pruner.service.conftest import SCHEMA, StartSidecar, address
from tests.support_events import DAYS


def test_get_table_and_remote_prune(events_table: str, start_sidecar: StartSidecar) -> None:
    sidecar = start_sidecar(str(Path(events_table).parent))
    with PruningClient(address(sidecar)) as client:
        info = client.get_table(SCHEMA, "events")
        virtual = {v.name: v for v in info.virtual_columns}
        assert virtual["hour_of_day"].expression == "hour(ts)"
        assert virtual["hour_of_day"].type == ColumnType("bigint")
        assert not virtual["hour_of_day"].monotonic and virtual["datestr"].monotonic
        assert virtual["datestr"].source_column == "ts"
        local = LakepruneTable(events_table)
        for where in ["hour_of_day BETWEEN 12 AND 13", "hour(ts) BETWEEN 12 AND 13"]:
            remote = client.prune(SCHEMA, "events", where)
            assert remote.files_selected == 2 * DAYS
            assert {s.path for s in remote.splits} == {s.path for s in local.prune(where).splits}
