"""The one function registry of functional indexes (RFC-63), shared by build and query: each
function has its argument kinds, result type, an Arrow implementation (query side, virtual column
values, and the index rows written by builder tasks), a Spark implementation (`--sort-by` and any
Spark-side evaluation; agreement with Arrow is property-tested) and what is known about its order."""

from pruner.functions.registry import (
    REGISTRY,
    BoundFunction,
    Function,
    Order,
    bind,
    parse_expression,
)

__all__ = ["REGISTRY", "BoundFunction", "Function", "Order", "bind", "parse_expression"]
