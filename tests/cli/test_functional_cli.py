"""`lakeprune prune --where` with functional predicates: the indexed expression, the index name,
and the explain record of the functional_index step."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import lakeprune
from tests.support_events import DAYS


def test_prune_where_on_the_expression(events_table: str) -> None:
    warehouse = str(Path(events_table).parent)
    for where in ["hour(ts) BETWEEN 12 AND 13", "hour_of_day BETWEEN 12 AND 13"]:
        out = json.loads(lakeprune("prune", "events", "-w", warehouse, "--where", where, "--json"))
        assert (out["files_total"], out["files_selected"]) == (24 * DAYS, 2 * DAYS)
        step = next(s for s in out["explain"] if s["step"] == "functional_index")
        assert step["files_out"] == 2 * DAYS and step["skipped"] is None
