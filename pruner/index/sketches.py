"""Distinct-value sketches and data sizes of a data file's column, for engines' cost-based
optimizers (`distinct_values_count`, `data_size`).

A sketch is an Apache DataSketches HyperLogLog (HLL_4, `LG_K` = 10: 1,024 registers, a relative
standard error of about 3.3%), serialised compact: at most ~560 bytes when dense, a few bytes
per distinct value while the file has few. HLL rather than theta because optimizers need only the
union of files' sketches, never intersections or differences, and HLL is an order of magnitude
smaller than a theta sketch of the same accuracy: a stats row per column and file stays small.

So that sketches written by any writer merge, every value is fed to the sketch in one canonical
form per type family, independent of the Arrow width the writer happened to use: booleans and
integers as a 64-bit integer, floats as a double (DataSketches makes -0.0 and 0.0, and every NaN,
one value), decimals as the text of the normalised value (`1.50` and `1.5` are one value), strings
as UTF-8, binaries as their hex text, dates as days and timestamps as UTC microseconds since the
epoch. NULL is not a value: it never enters a sketch.

The data size is what Trino's `data_size` means: the bytes of the non-null values; only variable
width types have one (fixed width types' sizes follow from their type and the row count)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from decimal import Decimal

import datasketches as ds
import pyarrow as pa
import pyarrow.compute as pc

from pruner.types import ColumnType, TypeKind

LG_K = 10
_TYPE = ds.tgt_hll_type.HLL_4


def sketch(values: pa.Array, column_type: ColumnType) -> bytes:
    """The compact serialised HLL sketch of the distinct non-null values of a column."""
    hll = ds.hll_sketch(LG_K, _TYPE)
    deque(map(hll.update, _canonical(pc.unique(values.drop_null()), column_type)), maxlen=0)  # C speed
    return bytes(hll.serialize_compact())


def _canonical(unique: pa.Array, column_type: ColumnType) -> Iterable[int | float | str]:
    """The distinct values in the canonical form of their type family (module docstring)."""
    kind = column_type.kind
    if kind is TypeKind.DECIMAL:
        return (_decimal_text(v) for v in unique.to_pylist())
    if kind is TypeKind.BINARY:
        return (bytes(v).hex() for v in unique.to_pylist())
    if kind is TypeKind.STRING:
        return unique.to_pylist()  # type: ignore[no-any-return]
    if kind.is_floating:
        return pc.cast(unique, pa.float64()).to_pylist()  # type: ignore[no-any-return]
    if kind is TypeKind.TIMESTAMP:
        unique = pc.cast(unique, pa.timestamp("us", tz="UTC"))
    if kind is TypeKind.DATE:
        unique = pc.cast(unique, pa.date32()).cast(pa.int32())
    return pc.cast(unique, pa.int64()).to_pylist()  # type: ignore[no-any-return]


def _decimal_text(value: Decimal) -> str:
    return format(value.normalize(), "f") if value else "0"


def estimate(sketches: Iterable[bytes]) -> float:
    """The estimated number of distinct values of the union of the sketches' value sets."""
    union = ds.hll_union(LG_K)
    for data in sketches:
        union.update(ds.hll_sketch.deserialize(data))
    return float(union.get_estimate())


def relative_error(num_std_devs: int = 3) -> float:
    """The a-priori bound of `estimate`'s relative error at `num_std_devs` standard deviations
    (the larger of the upper and lower bound's, for a union)."""
    return float(max(ds.hll_sketch.get_rel_err(upper, True, LG_K, num_std_devs) for upper in (True, False)))


def data_size(values: pa.Array, column_type: ColumnType) -> int | None:
    """The bytes of the non-null values of a variable-width column; None for fixed-width ones."""
    if column_type.kind not in (TypeKind.STRING, TypeKind.BINARY):
        return None
    return int(pc.sum(pc.binary_length(values)).as_py() or 0)
