"""The functions and expressions of functional indexes (RFC-63), shared by build and query: the
registry (`registry`: each function's argument kinds, result type, Arrow and Spark implementations
and order), the typed expression trees built of them (`expression`) and their parser (`parsing`)."""

from pruner.functions.expression import Expression, Monotonicity
from pruner.functions.parsing import EXPRESSION_FORMAT, parse_expression
from pruner.functions.registry import REGISTRY, Function, Order

__all__ = [
    "EXPRESSION_FORMAT",
    "REGISTRY",
    "Expression",
    "Function",
    "Monotonicity",
    "Order",
    "parse_expression",
]
