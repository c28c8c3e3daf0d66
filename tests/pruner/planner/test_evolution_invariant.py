"""The invariant on a table whose partitioning evolved (`org_id/datestr`, then `org_id`): for
random predicates on `org_id`, on `datestr` (a partition column only old paths carry), on `ts`, on
the functional index `event_date` and on its expression, no file holding a matching row is pruned,
and the matching rows of the kept files are exactly those of a full scan. Checked on the table as
built, and after updates and deletes in old-layout file groups and an evolution back to
`org_id, datestr` (whose current partition column the `org_id` files' paths lack)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import strategies as st

from builder.write.writer import WriteResult
from pruner.table.table import LakeTable
from tests.pruner.planner.conftest import FunctionalOracle, assert_never_prunes_a_match, combined
from tests.support_evolution import BASE, day_text

days = st.integers(-1, 9)
orgs = st.integers(0, 4)
comparisons = st.sampled_from(["=", "<>", "<", "<=", ">", ">="])


def _ts(hours: int) -> str:
    return f"TIMESTAMP '{(BASE + timedelta(hours=hours)).strftime('%Y-%m-%d %H:%M:%S')}'"


atoms = st.one_of(
    st.builds(lambda o, op: f"org_id {op} {o}", orgs, comparisons),
    st.builds(lambda a, b: f"org_id IN ({a}, {b})", orgs, orgs),
    st.builds(lambda d, op: f"datestr {op} '{day_text(d)}'", days, comparisons),
    st.builds(lambda a, b: f"datestr BETWEEN '{day_text(a)}' AND '{day_text(b)}'", days, days),
    st.builds(lambda d, op: f"event_date {op} '{day_text(d)}'", days, comparisons),
    st.builds(lambda a, b: f"event_date BETWEEN '{day_text(a)}' AND '{day_text(b)}'", days, days),
    st.builds(lambda d, op: f"date_format(ts, '%Y-%m-%d') {op} '{day_text(d)}'", days, comparisons),
    st.builds(lambda h, op: f"ts {op} {_ts(h)}", st.integers(-6, 9 * 24), comparisons),
    st.builds(
        lambda h, n: f"ts >= {_ts(h)} AND ts < {_ts(h + n)}", st.integers(-6, 9 * 24), st.integers(1, 30)
    ),
    st.builds(lambda i: f"msg = 'm{i}v0'", st.integers(0, 9)),
)
predicates = combined(atoms)


@pytest.fixture(params=["as built", "after changes"])
def evolved(request: pytest.FixtureRequest) -> str:
    if request.param == "as built":
        location: str = request.getfixturevalue("evolved_events")
        return location
    changed: tuple[str, list[WriteResult]] = request.getfixturevalue("evolved_events_changed")
    return changed[0]


@pytest.mark.spark  # the tables are written with Spark (requested by name, not as a parameter)
def test_no_file_matching_a_predicate_is_pruned_after_evolution(evolved: str) -> None:
    assert_never_prunes_a_match(evolved, FunctionalOracle(LakeTable.open(evolved).snapshot()), predicates)
