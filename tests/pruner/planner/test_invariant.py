"""The invariant, property-tested: no file holding a row that matches the predicate is ever pruned.
Predicates are random TupleDomains over every column type, built from values in the table and
values outside it; the oracle scans every file."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pruner.planner.prune import prune
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import is_nan
from pruner.table.table import LakeTable
from tests.pruner.conftest import indexed_table_on
from tests.pruner.planner.conftest import COLUMNS, Oracle

EXTRA: dict[str, list[Any]] = {
    "id": [-1, 10**9],
    "seq": [-5, 99999],
    "hot": ["", "zzz"],
    "token": ["t", "u"],
    "region": ["eu", "zz"],
    "flag": [True, False],
}


def _pool(oracle: Oracle, column: str) -> list[Any]:
    values = {r[column] for rows in oracle.rows.values() for r in rows[:40]}
    clean = [v for v in values if v is not None and not is_nan(v)]
    return sorted(clean) + EXTRA.get(column, [])


@st.composite
def domains(draw: st.DrawFn, pool: list[Any], floating: bool = False) -> Domain:
    """A domain over `pool`'s values; on a `floating` column it may allow NaN besides them."""
    domain = draw(_domains(pool))
    if floating and draw(st.booleans()):
        return Domain(domain.values, domain.null_allowed, nan_allowed=True)
    return domain


@st.composite
def _domains(draw: st.DrawFn, pool: list[Any]) -> Domain:
    null_allowed = draw(st.booleans())
    kind = draw(st.sampled_from(["values", "range", "only_null", "not_null", "complement"]))
    if kind == "only_null":
        return Domain.only_null()
    if kind == "not_null":
        return Domain.not_null()
    if kind == "values":
        picked = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4))
        return Domain.multiple_values(picked, null_allowed=null_allowed)
    a, b = sorted(draw(st.lists(st.sampled_from(pool), min_size=2, max_size=2)))
    low_inclusive, high_inclusive = draw(st.booleans()), draw(st.booleans())
    low = None if draw(st.integers(0, 5)) == 0 else a
    high = None if draw(st.integers(0, 5)) == 0 else b
    built = (
        Range.between(low, low_inclusive and low is not None, high, high_inclusive and high is not None)
        if (low is not None or high is not None)
        else Range.all()
    )
    values = SortedRangeSet.of_ranges(built) if built is not None else SortedRangeSet.none()
    if kind == "complement":
        values = values.complement()
    return Domain.of(values, null_allowed)


def _check(location: str, oracle: Oracle, predicate: TupleDomain) -> None:
    result = prune(LakeTable.open(location), predicate)
    selected = {s.path for s in result.splits}
    missing = oracle.files_matching(predicate) - selected
    assert not missing, f"pruned {len(missing)} file(s) holding matches for {predicate}"


@pytest.mark.spark  # the tables are written with Spark (requested by name, not as a parameter)
@pytest.mark.parametrize(
    ("backend", "examples"),
    [
        pytest.param("local", 150, id="ci"),
        pytest.param("local", 300, id="large", marks=pytest.mark.slow),
        pytest.param("s3", 25, id="s3", marks=pytest.mark.s3),  # each prune reads from the S3 server
        pytest.param("gcs", 25, id="gcs", marks=pytest.mark.gcs),  # ... from the Cloud Storage server
    ],
)
def test_no_matching_file_is_ever_pruned(request: pytest.FixtureRequest, backend: str, examples: int) -> None:
    holds_for_random_predicates(*indexed_table_on(backend, request), examples)


def holds_for_random_predicates(location: str, oracle: Oracle, examples: int) -> None:
    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
    @given(random_predicates(oracle))
    def check(predicate: TupleDomain) -> None:
        _check(location, oracle, predicate)

    check()


def random_predicates(oracle: Oracle) -> st.SearchStrategy[TupleDomain]:
    """TupleDomains on one to three columns of the indexed table, over values its rows hold."""
    pools = {c: _pool(oracle, c) for c in COLUMNS}

    @st.composite
    def predicates(draw: st.DrawFn) -> TupleDomain:
        columns = draw(st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=3, unique=True))
        return TupleDomain.with_domains({c: draw(domains(pools[c], floating=c == "score")) for c in columns})

    return predicates()
