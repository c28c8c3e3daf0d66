"""pruner.index.bloom, one split-block bloom filter: `build` against a reference written from the
Parquet specification and a block computed by hand, no false negatives for any column type, a
measured false-positive rate close to the configured one, the sizing of `num_bytes_for`, and the
refusal of malformed sizes."""

from __future__ import annotations

import math
import struct

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
)
from tests.pruner.index.bloom_strategies import COLUMN_VALUES

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


# ------------------------------------------------------------ known answers from the spec


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
