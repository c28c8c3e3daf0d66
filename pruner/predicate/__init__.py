"""The predicate algebra of lakeprune, after Trino's SPI: a `TupleDomain` is an AND of per-column
`Domain`s, a `Domain` is a `SortedRangeSet` of `Range`s plus whether NULL is allowed, and literals
are made comparable by `normalize` for their column type. Everything is immutable, has one canonical
form (so `==` is set equality), and is closed under intersect, union and complement; operations that
widen (spans, column-wise unions) say so. Ranges never contain NaN (see `domain`). The algebra is
pure: it knows nothing of files, statistics or SQL text."""

from pruner.predicate.domain import Domain, SortedRangeSet, ValueSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import Value, format_value, is_nan, normalize

__all__ = [
    "Domain",
    "Range",
    "SortedRangeSet",
    "TupleDomain",
    "Value",
    "ValueSet",
    "format_value",
    "is_nan",
    "normalize",
]
