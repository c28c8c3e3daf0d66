"""Evaluating a Domain against min / max / count statistics (of files or partitions), vectorised
with pyarrow.compute. The contract (as in DataFusion's PruningPredicate): True = might match,
False = proven not to match; unknown statistics mean True. Bounds are compared only after widening
(decimals outward to doubles, inexact conversions made inclusive), so the result never proves
something the exact values would not."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pruner.index.stats import FAMILY_TYPES, family
from pruner.predicate.domain import Domain
from pruner.predicate.values import Value
from pruner.types import ColumnType


def _bound(value: Value, column_type: ColumnType, upper: bool) -> tuple[pa.Scalar, bool]:
    """The bound as a scalar of the stats family, and whether the conversion was exact."""
    fam = family(column_type)
    exact = True
    converted: object = value
    if isinstance(value, bool):
        converted = int(value)
    elif isinstance(value, Decimal):
        approx = float(value)
        exact = Decimal(approx) == value
        if not exact:
            approx = float(np.nextafter(approx, np.inf if upper else -np.inf))
        converted = approx
    elif isinstance(value, float) and column_type.name == "float":
        # Engines disagree on `real_col <= 0.1` (Trino rounds the literal to 32 bits, Spark widens
        # the column to 64): widen the bound to the enclosing float32 so both answers are kept.
        single = np.float32(value)
        if float(single) != value:
            exact = False
            if (float(single) < value) == upper:
                single = np.nextafter(single, np.float32(np.inf if upper else -np.inf))
        converted = float(single)
    elif isinstance(value, datetime | date | str | bytes | int | float):
        converted = value
    return pa.scalar(converted, type=FAMILY_TYPES[fam]), exact


def might_match(domain: Domain, column_type: ColumnType, stats: pa.Table) -> npt.NDArray[np.bool_]:
    """For each stats row: could a row of that file / partition be in `domain`?"""
    n = stats.num_rows
    values = stats["value_count"].to_numpy(zero_copy_only=False)
    nulls = stats["null_count"].to_numpy(zero_copy_only=False)
    nans = stats["nan_count"].to_numpy(zero_copy_only=False)
    result = np.zeros(n, dtype=bool)
    if domain.is_null_allowed():
        result |= nulls > 0
    if domain.values.is_all():  # matches every non-null value, NaN included
        return np.asarray(result | (values - nulls > 0), dtype=bool)
    if domain.values.is_none():
        return result
    fam = family(column_type)
    low_stat, high_stat = stats[f"min_{fam}"], stats[f"max_{fam}"]
    ordinary = (values - nulls - nans) > 0
    for r in domain.values.ranges:
        ok = np.ones(n, dtype=bool)
        if r.high is not None:
            bound, exact = _bound(r.high, column_type, upper=True)
            compare = pc.less_equal if (r.high_inclusive or not exact) else pc.less
            ok &= pc.fill_null(compare(low_stat, bound), True).to_numpy(zero_copy_only=False)
        if r.low is not None:
            bound, exact = _bound(r.low, column_type, upper=False)
            compare = pc.greater_equal if (r.low_inclusive or not exact) else pc.greater
            ok &= pc.fill_null(compare(high_stat, bound), True).to_numpy(zero_copy_only=False)
        result |= ordinary & ok
    return result
