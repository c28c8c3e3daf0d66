"""The schema and small helpers shared by the tests of `pruner.predicate.sql`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pruner.errors import InvalidInputError
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.sql import Translation, translate
from pruner.predicate.tuple_domain import TupleDomain
from pruner.types import TableSchema

SCHEMA = TableSchema.parse(
    "id bigint, n int, x double, r float, price decimal(10,2), s string, d date, ts timestamp, b boolean"
)
TYPES = {c.name: str(c.type) for c in SCHEMA.columns}
NAN = float("nan")
INF = float("inf")


def tr(where: str) -> Translation:
    return translate(where, SCHEMA)


def dom(where: str) -> TupleDomain:
    return tr(where).domain


def td(**domains: Domain) -> TupleDomain:
    return TupleDomain.with_domains(domains)


def rs(*ranges: Range) -> Domain:
    return Domain(SortedRangeSet.of_ranges(*ranges), False)


def values(*items: Any) -> Domain:
    return Domain.multiple_values(items)


def error(where: str) -> str:
    with pytest.raises(InvalidInputError) as info:
        tr(where)
    message = str(info.value)
    assert "\n" not in message and message.strip() == message
    return message


NOT_NULL = Domain.not_null()
F32_01 = float(np.float32(0.1))
