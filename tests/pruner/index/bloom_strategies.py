"""Hypothesis strategies for the tests of `pruner.index.bloom`: `COLUMN_VALUES` holds, for every
column type a bloom index supports, its `ColumnType` and a strategy of Python values for it, shared
by the hashing tests (literals hash like arrays) and the filter tests (no false negatives)."""

from __future__ import annotations

from datetime import UTC
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

from pruner.types import ColumnType

COLUMN_VALUES: dict[str, tuple[ColumnType, st.SearchStrategy[Any]]] = {
    "boolean": (ColumnType("boolean"), st.booleans()),
    "tinyint": (ColumnType("tinyint"), st.integers(-(2**7), 2**7 - 1)),
    "smallint": (ColumnType("smallint"), st.integers(-(2**15), 2**15 - 1)),
    "int": (ColumnType("int"), st.integers(-(2**31), 2**31 - 1)),
    "bigint": (ColumnType("bigint"), st.integers(-(2**63), 2**63 - 1)),
    "float": (ColumnType("float"), st.floats(width=32)),
    "double": (ColumnType("double"), st.floats()),
    # Values with up to `scale` fraction digits, so that Arrow rescales some of them (1.5 -> 1.500).
    "decimal(10,3)": (
        ColumnType("decimal", 10, 3),
        st.builds(
            lambda n, places: Decimal(f"{n}E-{places}"),
            st.integers(-(10**7) + 1, 10**7 - 1),
            st.integers(0, 3),
        ),
    ),
    "decimal(38,10)": (
        ColumnType("decimal", 38, 10),
        st.builds(lambda n: Decimal(f"{n}E-10"), st.integers(-(10**38) + 1, 10**38 - 1)),
    ),
    "decimal(5,0)": (ColumnType("decimal", 5, 0), st.builds(Decimal, st.integers(-99999, 99999))),
    "string": (ColumnType("string"), st.text()),
    "binary": (ColumnType("binary"), st.binary()),
    "date": (ColumnType("date"), st.dates()),
    "timestamp": (ColumnType("timestamp"), st.datetimes(timezones=st.just(UTC))),
}
