"""pruner.index.bloom: Parquet split-block bloom filters, the canonical value encoding, and the
agreement of Arrow-array hashes with Python-literal hashes."""

from __future__ import annotations

import math
import struct
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any
from unittest import mock

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.index import bloom
from pruner.index.bloom import (
    MAX_BYTES,
    MIN_BYTES,
    build,
    filter_for,
    hash_python_values,
    hash_values,
    might_contain,
    might_contain_any,
    num_bytes_for,
    probe_any,
)
from pruner.types import ColumnType

# Copied from the specification, not from the module, so that the tests check the module against it.
SPEC_SALT = (
    0x47B6137B,
    0x44974D91,
    0x8824AD5B,
    0xA2B7289D,
    0x705495C7,
    0x2DF1424B,
    0x9EFC4947,
    0x5C6BFB31,
)
MASK32 = 0xFFFFFFFF

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


def _spec_filter(hashes: list[int], num_bytes: int) -> bytes:
    """A reference SBBF written straight from the specification with Python integers."""
    num_blocks = num_bytes // 32
    words = [0] * (num_blocks * 8)
    for h in hashes:
        block = ((h >> 32) * num_blocks) >> 32
        key = h & MASK32
        for i, salt in enumerate(SPEC_SALT):
            words[block * 8 + i] |= 1 << (((key * salt) & MASK32) >> 27)
    return struct.pack(f"<{len(words)}I", *words)


def _hash_set(hashes: npt.NDArray[np.uint64]) -> set[int]:
    return {int(h) for h in hashes}


def _xxh(data: bytes) -> int:
    return xxhash.xxh64_intdigest(data)


def _int64(value: int) -> bytes:
    return value.to_bytes(8, "little", signed=True)


# ------------------------------------------------------------------------- known answers


def test_xxh64_of_empty_input_is_the_published_value() -> None:
    assert xxhash.xxh64_intdigest(b"") == 0xEF46DB3751D8E999
    assert hash_python_values([""], ColumnType("string")).tolist() == [0xEF46DB3751D8E999]
    assert hash_values(pa.array([""])).tolist() == [0xEF46DB3751D8E999]
    assert hash_values(pa.array([b""], pa.binary())).tolist() == [0xEF46DB3751D8E999]


def test_one_block_computed_by_hand_from_the_spec() -> None:
    h = 0x9E3779B97F4A7C15
    num_blocks = 4
    # Block: ((h >> 32) * num_blocks) >> 32 = (0x9E3779B9 * 4) >> 32 = 10617743076 >> 32 = 2.
    block = ((h >> 32) * num_blocks) >> 32
    assert block == 2
    # Bit of word i: (uint32(h) * SALT[i] mod 2**32) >> 27, uint32(h) = 0x7F4A7C15.
    bits = [(((h & MASK32) * salt) & MASK32) >> 27 for salt in SPEC_SALT]
    assert bits == [23, 8, 6, 22, 6, 31, 20, 25]
    words = [0] * (num_blocks * 8)
    for i, bit in enumerate(bits):
        words[block * 8 + i] = 1 << bit
    expected = struct.pack("<32I", *words)

    built = build(np.array([h], dtype=np.uint64), num_blocks * 32)
    assert built == expected
    assert built[64:68] == (1 << 23).to_bytes(4, "little")  # word 0 of block 2, little-endian
    assert might_contain(built, np.array([h], dtype=np.uint64)).tolist() == [True]
    # A hash in the same block whose key sets other bits is not there.
    assert might_contain(built, np.array([h ^ 1], dtype=np.uint64)).tolist() == [False]


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(0, 2**64 - 1), max_size=300),
    st.sampled_from([32, 64, 96, 256, 4096]),
)
def test_build_equals_a_reference_written_from_the_spec(hashes: list[int], num_bytes: int) -> None:
    assert build(np.array(hashes, dtype=np.uint64), num_bytes) == _spec_filter(hashes, num_bytes)


def test_canonical_encodings_hash_the_documented_bytes() -> None:
    def one(value: object, type_name: str) -> int:
        from pruner.types import parse_type

        (h,) = hash_python_values([value], parse_type(type_name)).tolist()
        return int(h)

    assert one(1, "bigint") == _xxh(_int64(1))
    assert one(-5, "tinyint") == _xxh(_int64(-5))
    assert one(True, "boolean") == _xxh(_int64(1))
    assert one(False, "boolean") == _xxh(_int64(0))
    assert one(1.5, "double") == _xxh(struct.pack("<d", 1.5))
    assert one(-0.0, "double") == _xxh(struct.pack("<d", 0.0))
    assert one(0.25, "float") == _xxh(struct.pack("<d", 0.25))
    assert one(Decimal("1.5"), "decimal(10,2)") == _xxh(b"1.50")
    assert one(Decimal("-0.00"), "decimal(10,2)") == _xxh(b"0.00")
    assert one(Decimal(0), "decimal(20,10)") == _xxh(b"0.0000000000")
    assert one(Decimal("-1E-7"), "decimal(20,10)") == _xxh(b"-0.0000001000")
    assert one(7, "decimal(5,0)") == _xxh(b"7")
    assert one("héllo ✓", "string") == _xxh("héllo ✓".encode())
    assert one(b"\x00\xff", "binary") == _xxh(b"\x00\xff")
    assert one(date(1970, 1, 2), "date") == _xxh(_int64(1))
    assert one(date(1969, 12, 31), "date") == _xxh(_int64(-1))
    assert one(datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC), "timestamp") == _xxh(_int64(1))
    assert one(datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), "timestamp") == _xxh(_int64(-1))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=50))
def test_vectorised_xxh64_of_int64_equals_the_xxhash_package(values: list[int]) -> None:
    expected = {_xxh(_int64(v)) for v in values}
    assert _hash_set(hash_values(pa.array(values, pa.int64()))) == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(allow_nan=False), max_size=50))
def test_vectorised_xxh64_of_float64_equals_the_xxhash_package(values: list[float]) -> None:
    expected = {_xxh(struct.pack("<d", v + 0.0)) for v in values}
    assert _hash_set(hash_values(pa.array(values, pa.float64()))) == expected


# ------------------------------------------------------- Python literals agree with arrays


@pytest.mark.parametrize("type_key", sorted(COLUMN_VALUES))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_python_literal_hashes_equal_array_hashes(type_key: str, data: st.DataObject) -> None:
    column_type, values = COLUMN_VALUES[type_key]
    literals = data.draw(st.lists(st.none() | values, max_size=30))
    array = pa.array(literals, type=column_type.to_arrow())
    from_array = hash_values(array)
    from_literals = hash_python_values(literals, column_type)
    assert _hash_set(from_array) == _hash_set(from_literals)
    assert len(from_array) == len(_hash_set(from_array))  # one hash per distinct value
    non_null = [v for v in literals if v is not None and not (isinstance(v, float) and math.isnan(v))]
    assert len(from_literals) == len(non_null)


def test_same_logical_value_hashes_alike_across_physical_types() -> None:
    five = _hash_set(hash_values(pa.array([5], pa.int64())))
    for dt in (pa.int8(), pa.int16(), pa.int32()):
        assert _hash_set(hash_values(pa.array([5], dt))) == five
    assert _hash_set(hash_values(pa.array([True], pa.bool_()))) == _hash_set(
        hash_values(pa.array([1], pa.int64()))
    )
    assert _hash_set(hash_values(pa.array([0.5], pa.float32()))) == _hash_set(
        hash_values(pa.array([0.5], pa.float64()))
    )
    text = _hash_set(hash_values(pa.array(["ü", "x"], pa.string())))
    assert _hash_set(hash_values(pa.array(["ü", "x"], pa.large_string()))) == text
    assert _hash_set(hash_values(pa.array(["ü".encode(), b"x"], pa.large_binary()))) == text
    assert _hash_set(hash_values(pa.array(["ü", "x"]).dictionary_encode())) == text
    assert _hash_set(hash_values(pa.chunked_array([["ü"], [], ["x", None]]))) == text
    scaled = _hash_set(hash_values(pa.array([Decimal("1.5")], pa.decimal128(10, 2))))
    assert scaled == _hash_set(hash_python_values([Decimal("1.50")], ColumnType("decimal", 10, 2)))
    assert scaled == _hash_set(hash_python_values([Decimal("1.5")], ColumnType("decimal", 10, 2)))
    assert scaled != _hash_set(hash_python_values([Decimal("1.5")], ColumnType("decimal", 10, 3)))


def test_negative_zero_is_zero() -> None:
    zero = _hash_set(hash_python_values([0.0], ColumnType("double")))
    assert _hash_set(hash_python_values([-0.0], ColumnType("double"))) == zero
    assert _hash_set(hash_values(pa.array([-0.0], pa.float64()))) == zero
    assert _hash_set(hash_values(pa.array([-0.0], pa.float32()))) == zero
    assert len(hash_values(pa.array([-0.0, 0.0, -0.0], pa.float64()))) == 1
    decimal_zero = _hash_set(hash_values(pa.array([Decimal("0.00")], pa.decimal128(4, 2))))
    assert _hash_set(hash_python_values([Decimal("-0")], ColumnType("decimal", 4, 2))) == decimal_zero


def test_timestamps_of_every_unit_and_zone_are_utc_microseconds() -> None:
    instant = datetime(2024, 2, 29, 12, 30, 45, 123000, tzinfo=UTC)
    expected = _hash_set(hash_python_values([instant], ColumnType("timestamp")))
    micros = 1709209845123000
    assert expected == {_xxh(_int64(micros))}
    for unit, value in (("ms", micros // 1000), ("us", micros), ("ns", micros * 1000)):
        assert _hash_set(hash_values(pa.array([value], pa.timestamp(unit, tz="UTC")))) == expected
        assert _hash_set(hash_values(pa.array([value], pa.timestamp(unit)))) == expected
    seconds = _hash_set(hash_values(pa.array([micros // 10**6], pa.timestamp("s", tz="UTC"))))
    assert seconds == {_xxh(_int64(micros // 10**6 * 10**6))}
    # Nanoseconds below a microsecond are dropped.
    assert _hash_set(hash_values(pa.array([micros * 1000 + 999], pa.timestamp("ns", tz="UTC")))) == expected
    # The same instant given in another zone, or naive (read as UTC).
    plus_two = instant.astimezone(timezone(timedelta(hours=2)))
    assert _hash_set(hash_python_values([plus_two], ColumnType("timestamp"))) == expected
    naive = instant.replace(tzinfo=None)
    assert _hash_set(hash_python_values([naive], ColumnType("timestamp"))) == expected


def test_dates_are_days_since_epoch() -> None:
    days = [date(1970, 1, 1), date(2000, 3, 1), date(1, 1, 1), date(9999, 12, 31)]
    expected = {_xxh(_int64((d - date(1970, 1, 1)).days)) for d in days}
    assert _hash_set(hash_values(pa.array(days, pa.date32()))) == expected
    assert _hash_set(hash_values(pa.array(days, pa.date64()))) == expected
    assert _hash_set(hash_python_values(days, ColumnType("date"))) == expected


def test_nulls_and_nan_are_skipped() -> None:
    nan = float("nan")
    assert len(hash_values(pa.array([None, nan, 1.0, nan, None], pa.float64()))) == 1
    assert len(hash_values(pa.array([nan], pa.float32()))) == 0
    assert len(hash_values(pa.array([None, None], pa.string()))) == 0
    assert len(hash_values(pa.array([], pa.int32()))) == 0
    assert len(hash_values(pa.chunked_array([], pa.timestamp("us", tz="UTC")))) == 0
    assert len(hash_python_values([None, nan], ColumnType("double"))) == 0
    assert len(hash_python_values([None], ColumnType("string"))) == 0
    assert hash_values(pa.array([None], pa.int64())).dtype == np.uint64
    assert hash_python_values([], ColumnType("binary")).dtype == np.uint64
    empty_filter = filter_for(pa.array([None, nan], pa.float64()), 0.01)
    assert len(empty_filter) == MIN_BYTES
    assert not might_contain(empty_filter, hash_python_values([1.0, 0.0], ColumnType("double"))).any()


def test_literals_no_column_can_hold_are_skipped() -> None:
    assert len(hash_python_values([2**63, -(2**63) - 1, 5], ColumnType("bigint"))) == 1
    decimal = ColumnType("decimal", 5, 2)
    assert len(hash_python_values([Decimal("1000"), Decimal("1E+40"), Decimal("999.99")], decimal)) == 1


@pytest.mark.parametrize(
    ("value", "type_name"),
    [
        ("1", "bigint"),
        (1.0, "int"),
        (1, "string"),
        ("x", "binary"),
        (datetime(2020, 1, 1, tzinfo=UTC), "date"),
        (date(2020, 1, 1), "timestamp"),
        (1.5, "decimal(10,2)"),
        (Decimal("NaN"), "decimal(10,2)"),
        ("1.0", "double"),
    ],
)
def test_literals_of_the_wrong_type_are_refused(value: object, type_name: str) -> None:
    from pruner.types import parse_type

    with pytest.raises(TypeError):
        hash_python_values([value], parse_type(type_name))


def test_unsupported_arrow_types_are_refused() -> None:
    with pytest.raises(TypeError):
        hash_values(pa.array([[1]]))
    with pytest.raises(TypeError):
        hash_values(pa.array([1], pa.uint32()))


# ----------------------------------------------------------------------- filter behaviour


@pytest.mark.parametrize("type_key", sorted(COLUMN_VALUES))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_no_false_negatives(type_key: str, data: st.DataObject) -> None:
    column_type, values = COLUMN_VALUES[type_key]
    literals = data.draw(st.lists(st.none() | values, max_size=200))
    fpp = data.draw(st.sampled_from([0.3, 0.05, 0.001]))
    array = pa.array(literals, type=column_type.to_arrow())
    filter_bytes = filter_for(array, fpp)
    assert might_contain(filter_bytes, hash_python_values(literals, column_type)).all()
    assert might_contain(filter_bytes, hash_values(array)).all()
    # A filter far too small for the values is mostly ones, but still has no false negatives.
    small = build(hash_values(array), MIN_BYTES)
    assert might_contain(small, hash_values(array)).all()


def _largest_ndv_for(num_bytes: int, fpp: float) -> int:
    """The most distinct values that `num_bytes_for` still fits into `num_bytes`: the worst case."""
    ndv = int(num_bytes * -math.log1p(-(fpp**0.125)))
    while num_bytes_for(ndv + 1, fpp) <= num_bytes:
        ndv += 1
    while num_bytes_for(ndv, fpp) > num_bytes:
        ndv -= 1
    return ndv


def test_false_positive_rate_is_close_to_the_configured_one() -> None:
    fpp = 0.01
    num_bytes = 1 << 17
    ndv = _largest_ndv_for(num_bytes, fpp)
    assert num_bytes_for(ndv, fpp) == num_bytes < num_bytes_for(ndv + 1, fpp)
    inserted = np.arange(ndv, dtype=np.int64) * 7919
    filter_bytes = filter_for(pa.array(inserted), fpp)
    assert len(filter_bytes) == num_bytes
    assert might_contain(filter_bytes, hash_values(pa.array(inserted))).all()
    probes = hash_values(pa.array(np.arange(100_000, dtype=np.int64) * 7919 + 1))  # none inserted
    rate = float(might_contain(filter_bytes, probes).mean())
    # Parquet's sizing formula slightly underestimates the SBBF's rate; at the fullest point of a
    # size class the measured rate is about 1.5 x fpp, and lower everywhere else.
    assert fpp / 2 < rate < 2 * fpp, rate

    # Half way up the same size class, the power-of-two rounding leaves room to spare.
    half = filter_for(pa.array(inserted[: ndv * 3 // 4]), fpp)
    assert len(half) == num_bytes
    assert float(might_contain(half, probes).mean()) < fpp


@pytest.mark.parametrize("fpp", [0.1, 0.001])
def test_false_positive_rate_for_other_probabilities(fpp: float) -> None:
    num_bytes = 1 << 15
    ndv = _largest_ndv_for(num_bytes, fpp)
    rng = np.random.default_rng(7)
    filter_bytes = build(rng.integers(0, 2**64, size=ndv, dtype=np.uint64), num_bytes)
    rate = float(might_contain(filter_bytes, rng.integers(0, 2**64, size=100_000, dtype=np.uint64)).mean())
    assert fpp / 2 < rate < 2.5 * fpp, rate


def test_num_bytes_for() -> None:
    assert num_bytes_for(0, 0.01) == MIN_BYTES
    assert num_bytes_for(1, 0.01) == MIN_BYTES
    # The specification's example: one million values at 1% need about 1.2 MB, so 2 MiB.
    bits_per_value = -8 / math.log(1 - 0.01 ** (1 / 8))
    assert 9.5 < bits_per_value < 9.7
    assert num_bytes_for(1_000_000, 0.01) == 1 << 21
    assert num_bytes_for(10**12, 0.01) == MAX_BYTES == 128 * 1024 * 1024
    for bad_fpp in (0.0, 1.0, -0.1, 2.0):
        with pytest.raises(ValueError):
            num_bytes_for(10, bad_fpp)
    with pytest.raises(ValueError):
        num_bytes_for(-1, 0.01)


@given(st.integers(0, 10**9), st.floats(1e-6, 0.5))
def test_num_bytes_for_is_the_next_power_of_two_of_the_formula(ndv: int, fpp: float) -> None:
    size = num_bytes_for(ndv, fpp)
    assert size & (size - 1) == 0
    assert MIN_BYTES <= size <= MAX_BYTES
    needed_bits = -8 * ndv / math.log(1 - fpp ** (1 / 8))
    tolerance = 1e-9 * needed_bits + 8  # float rounding, and whole bytes
    if size < MAX_BYTES:
        assert size * 8 >= needed_bits - tolerance
    if size > MIN_BYTES:
        assert size // 2 * 8 < needed_bits + tolerance


def test_malformed_sizes_are_refused() -> None:
    one = np.array([1], dtype=np.uint64)
    for bad in (0, 16, 33, MAX_BYTES * 2):
        with pytest.raises(ValueError):
            build(one, bad)
    with pytest.raises(ValueError):
        might_contain(b"\x00" * 31, one)
    with pytest.raises(ValueError):
        might_contain_any([b"\x00" * 32, b"\x00" * 40], one)


# ------------------------------------------------------------------------ might_contain_any


def _random_filters(
    rng: np.random.Generator, count: int
) -> tuple[list[bytes | None], npt.NDArray[np.uint64]]:
    filters: list[bytes | None] = []
    inserted: list[npt.NDArray[np.uint64]] = []
    for _ in range(count):
        if rng.random() < 0.2:
            filters.append(None)
            continue
        hashes = rng.integers(0, 2**64, size=int(rng.integers(0, 300)), dtype=np.uint64)
        inserted.append(hashes)
        filters.append(build(hashes, int(32 * 2 ** rng.integers(0, 8))))
    pool = np.concatenate([*inserted, np.zeros(0, dtype=np.uint64)])
    return filters, pool


def _probes(rng: np.random.Generator, pool: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    fresh = rng.integers(0, 2**64, size=int(rng.integers(1, 6)), dtype=np.uint64)
    picked = rng.choice(pool, size=min(len(pool), int(rng.integers(0, 3)))) if len(pool) else fresh[:0]
    return np.concatenate([fresh, picked.astype(np.uint64)])


def _loop_reference(filters: list[bytes | None], hashes: npt.NDArray[np.uint64]) -> list[bool]:
    return [True if f is None else bool(might_contain(f, hashes).any()) for f in filters]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 16))
def test_might_contain_any_equals_a_loop_over_filters(seed: int, count: int) -> None:
    rng = np.random.default_rng(seed)
    filters, pool = _random_filters(rng, count)
    probes = _probes(rng, pool)
    assert might_contain_any(filters, probes).tolist() == _loop_reference(filters, probes)


def test_might_contain_any_in_bounded_slices_and_chunks_of_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bloom, "_GATHER_LIMIT", 40)
    monkeypatch.setattr(bloom, "_HASH_CHUNK", 2)  # filters that answered drop out between chunks
    seen: set[bool] = set()
    for seed in range(20):
        rng = np.random.default_rng(seed)
        filters, pool = _random_filters(rng, 25)
        probes = _probes(rng, pool)
        answers = might_contain_any(filters, probes).tolist()
        assert answers == _loop_reference(filters, probes)
        seen.update(a for a, f in zip(answers, filters, strict=True) if f is not None)
    assert seen == {True, False}


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 16), st.integers(0, 200))
def test_a_probe_budget_only_keeps_more_and_counts_what_it_kept_unchecked(
    seed: int, count: int, budget: int
) -> None:
    rng = np.random.default_rng(seed)
    filters, pool = _random_filters(rng, count)
    probes = _probes(rng, pool)
    exact = might_contain_any(filters, probes)
    assert probe_any(filters, probes, None)[0].tolist() == exact.tolist()
    with mock.patch.object(bloom, "_HASH_CHUNK", 2):
        answers, unchecked = probe_any(filters, probes, budget)
    assert np.all(answers | ~exact)  # never drops a filter that might hold a value
    assert int(np.sum(answers & ~exact)) <= unchecked <= sum(f is not None for f in filters)
    if budget >= len(probes) * count:
        assert answers.tolist() == exact.tolist() and unchecked == 0


def test_a_zero_budget_checks_nothing() -> None:
    hashes = hash_python_values(["a", "b"], ColumnType("string"))
    without = build(hash_python_values(["z"], ColumnType("string")), 1024)
    assert probe_any([without, None, without], hashes, 0)[0].tolist() == [True, True, True]
    assert probe_any([without, None, without], hashes, 0)[1] == 2
    assert probe_any([without], hashes, 2)[0].tolist() == [False]


def test_might_contain_any_edge_cases() -> None:
    hashes = hash_python_values(["a", "b"], ColumnType("string"))
    with_a = build(hashes[:1], 1024)
    without = build(hash_python_values(["z"], ColumnType("string")), 1024)
    assert might_contain_any([with_a, None, without], hashes).tolist() == [True, True, False]
    assert might_contain_any([with_a, None, without], np.zeros(0, dtype=np.uint64)).tolist() == [
        False,
        False,
        False,
    ]
    assert might_contain_any([None, None], hashes).tolist() == [True, True]
    assert might_contain_any([], hashes).tolist() == []
    assert might_contain_any([with_a], np.concatenate([hashes, hashes])).tolist() == [True]


def test_view_and_fixed_size_layouts_hash_like_the_plain_ones() -> None:
    text = _hash_set(hash_values(pa.array(["a", "bb", None], pa.string())))
    assert _hash_set(hash_values(pa.array(["a", "bb", None], pa.string_view()))) == text
    assert _hash_set(hash_values(pa.array([b"a", b"bb"], pa.binary_view()))) == text
    assert _hash_set(hash_values(pa.array([b"ab", b"cd"], pa.binary(2)))) == {_xxh(b"ab"), _xxh(b"cd")}
