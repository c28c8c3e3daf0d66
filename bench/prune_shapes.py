"""The predicates the prune benchmarks time, in seven shapes over the prune benchmark's table
(`prune_latency.build`): a record-key point lookup and IN list, ranges on a clustered column and on
a timestamp, a bloom-filtered equality, a partition plus a range, and an unselective range. Only
`pruner.predicate` is imported, so benchmarks that compare code trees can use it with either."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import Value

REGIONS = 8


def _range(low: Value, high: Value) -> Domain:
    built = Range.between(low, True, high, True)
    assert built is not None
    return Domain.of(SortedRangeSet.of_ranges(built), False)


def predicate_shapes(rows: int) -> dict[str, Callable[[random.Random], TupleDomain]]:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    return {
        "key point lookup": lambda r: TupleDomain.with_domains(
            {"id": Domain.single_value(r.randrange(rows))}
        ),
        "key IN (20)": lambda r: TupleDomain.with_domains(
            {"id": Domain.multiple_values([r.randrange(rows) for _ in range(20)])}
        ),
        "clustered range": lambda r: TupleDomain.with_domains(
            {"seq": _range(x := r.randrange(rows), x + rows // 200)}
        ),
        "timestamp range": lambda r: TupleDomain.with_domains(
            {"ts": _range(t := start + timedelta(minutes=r.randrange(rows)), t + timedelta(hours=2))}
        ),
        "bloom equality": lambda r: TupleDomain.with_domains(
            {"sku": Domain.single_value(f"sku-{(r.randrange(rows) * 7919) % 1_000_003}")}
        ),
        "partition + range": lambda r: TupleDomain.with_domains(
            {"region": Domain.single_value(f"r{r.randrange(REGIONS)}"), "price": _range(10.0, 20.0)}
        ),
        "unselective": lambda r: TupleDomain.with_domains({"qty": _range(0, 1000)}),
    }
