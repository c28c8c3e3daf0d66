"""Bloom filters for point lookups (`col = literal`, `col IN (...)`), computed with vectorised
numpy so that Spark jobs (inside `mapInArrow`) and the query side share one implementation.

Algorithm: the Split Block Bloom Filter (SBBF) of the Apache Parquet specification
(parquet-format `BloomFilter.md`), with XXH64, seed 0, as the hash.

- A filter is `num_bytes / 32` blocks; a block is 256 bits, stored as eight 32-bit words, every word
  little-endian (so the serialised bitset is byte-for-byte the Parquet bitset).
- A 64-bit hash `h` selects block `((h >> 32) * num_blocks) >> 32` and, within it, one bit in each
  of the eight words: bit `(uint32(h) * SALT[i]) >> 27` of word `i` (32-bit wrapping multiply), with
  the eight odd salts of the specification. Insert sets the eight bits; a probe answers "might
  contain" only when all eight are set. There are no false negatives.
- Size: `-8 * ndv / ln(1 - fpp ** (1/8))` bits for `ndv` distinct values at false-positive
  probability `fpp`, rounded up to a power of two bytes and clamped to [32 B, 128 MiB].

Canonical value encoding (what is hashed), the same for every physical width of a column type:

- boolean and all integers: int64, little-endian (so `true` hashes like the integer 1);
- float and double: float64, little-endian, with -0.0 normalised to 0.0; NaN is never inserted and
  never probed (NaN equals nothing);
- decimal: the UTF-8 bytes of the value's plain string at the column's scale: the value quantized
  to the scale and printed without exponent (`format(value, "f")`, e.g. `"1.50"`, `"0.0000000000"`
  for zero at scale 10; `str(Decimal)` would print `0E-10`), a negative zero printed as zero;
- string: its UTF-8 bytes; binary: its raw bytes;
- date: int64 little-endian days since 1970-01-01;
- timestamp: int64 little-endian microseconds since 1970-01-01T00:00:00Z (UTC; naive values are
  read as UTC, other Arrow units are converted to microseconds first, nanoseconds truncated).

Every fixed-width encoding is exactly eight bytes, and XXH64 of eight bytes is a short fixed
sequence of 64-bit operations, so those types are hashed fully vectorised (`_xxh64_of_lanes`, checked
against the `xxhash` package in the tests); strings, binaries and decimals are hashed with `xxhash`
once per distinct value. Nulls are never inserted: a filter only answers for non-null values."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import date, datetime
from decimal import Context, Decimal
from enum import Enum, auto
from typing import Any, NamedTuple, assert_never

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.types as pat
import xxhash

from pruner.numeric import days_since_epoch, micros_since_epoch
from pruner.types import ColumnType, TypeKind

MIN_BYTES = 32
MAX_BYTES = 128 * 1024 * 1024
BLOCK_BYTES = 32
WORDS_PER_BLOCK = 8
# The eight salts of the Parquet SBBF specification.
SALT = np.array(
    [0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31],
    dtype=np.uint32,
)
_WORD_DTYPE = np.dtype("<u4")
_LANE = np.arange(WORDS_PER_BLOCK, dtype=np.int64)
# Upper bound on the (filter, hash, word) triples gathered at once by `might_contain_any`.
_GATHER_LIMIT = 1 << 22
# Bytes of filters joined into one array by `might_contain_each`.
_JOIN_BYTES = 64 * 1024 * 1024
# Hashes probed per round in `might_contain_any` before filters that answered are dropped.
_HASH_CHUNK = 1024

# XXH64 primes.
_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
# Seed 0 plus PRIME64_5 plus the input length (8), the accumulator before the single lane.
_SEED0_LEN8 = np.uint64((0x27D4EB2F165667C5 + 8) & 0xFFFFFFFFFFFFFFFF)

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_DECIMAL_CONTEXT = Context(prec=100)

U64Array = npt.NDArray[np.uint64]
BoolArray = npt.NDArray[np.bool_]


# ----------------------------------------------------------------------------------- hashing


def _rotl64(x: U64Array, r: int) -> U64Array:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _xxh64_of_lanes(lanes: U64Array) -> U64Array:
    """XXH64 (seed 0) of each value's eight little-endian bytes, for a whole array at once."""
    # uint64 array arithmetic wraps modulo 2**64, which is what XXH64 specifies.
    acc = _rotl64(lanes * _P2, 31) * _P1
    acc ^= _SEED0_LEN8
    acc = _rotl64(acc, 27) * _P1 + _P4
    acc ^= acc >> np.uint64(33)
    acc *= _P2
    acc ^= acc >> np.uint64(29)
    acc *= _P3
    acc ^= acc >> np.uint64(32)
    return acc


def _xxh64_of_bytes(items: Sequence[bytes]) -> U64Array:
    return np.fromiter((xxhash.xxh64_intdigest(b) for b in items), dtype=np.uint64, count=len(items))


def _decimal_text(value: Decimal, scale: int) -> bytes:
    # The callers bound the value to fewer than 39 integer digits, so 100 digits never round.
    quantized = value.quantize(Decimal(1).scaleb(-scale), context=_DECIMAL_CONTEXT)
    if quantized.is_zero():
        quantized = quantized.copy_abs()
    return format(quantized, "f").encode()


def _int64_lanes(values: npt.NDArray[np.int64]) -> U64Array:
    return np.ascontiguousarray(values, dtype=np.int64).view(np.uint64)


def _float64_lanes(values: npt.NDArray[np.float64]) -> U64Array:
    floats = np.asarray(values, dtype=np.float64)
    floats = floats[~np.isnan(floats)] + 0.0  # x + 0.0 turns -0.0 into 0.0 and leaves the rest alone
    return np.ascontiguousarray(floats).view(np.uint64)


class _Encoding(Enum):
    """The canonical encodings of the module docstring, by which an Arrow type is hashed."""

    INT64 = auto()
    FLOAT64 = auto()
    DATE = auto()
    TIMESTAMP = auto()
    DECIMAL = auto()
    STRING = auto()
    BINARY = auto()


def _kind(dt: pa.DataType) -> _Encoding:
    """The canonical encoding an Arrow type is hashed with."""
    if pat.is_boolean(dt) or pat.is_signed_integer(dt):
        return _Encoding.INT64
    if pat.is_float32(dt) or pat.is_float64(dt):
        return _Encoding.FLOAT64
    if pat.is_date(dt):
        return _Encoding.DATE
    if pat.is_timestamp(dt):
        return _Encoding.TIMESTAMP
    if pat.is_decimal(dt):
        return _Encoding.DECIMAL
    if pat.is_string(dt) or pat.is_large_string(dt) or pat.is_string_view(dt):
        return _Encoding.STRING
    if pat.is_binary(dt) or pat.is_large_binary(dt) or pat.is_binary_view(dt) or pat.is_fixed_size_binary(dt):
        return _Encoding.BINARY
    raise TypeError(f"bloom filters do not support values of type {dt}")


def hash_values(values: pa.Array | pa.ChunkedArray) -> U64Array:
    """The hashes of the distinct non-null, non-NaN values of an Arrow array under the canonical
    encoding, one per distinct value in no particular order (nulls and NaN contribute nothing)."""
    dt = values.type
    if pat.is_dictionary(dt):
        dt = dt.value_type
        values = pc.cast(values, dt)
    kind = _kind(dt)
    # Normalise before deduplicating, so that equal canonical values are one distinct value.
    if kind is _Encoding.FLOAT64:
        values = pc.add(pc.cast(values, pa.float64()), 0.0)  # x + 0.0 turns -0.0 into 0.0
    elif kind is _Encoding.DATE:
        values = pc.cast(values, pa.date32(), safe=False)
    elif kind is _Encoding.TIMESTAMP:
        values = pc.cast(values, pa.timestamp("us", tz=dt.tz), safe=False)
    elif kind is _Encoding.STRING:
        values = pc.cast(values, pa.large_binary())  # same bytes, read as bytes
    elif kind is _Encoding.BINARY and pat.is_binary_view(dt):
        values = pc.cast(values, pa.large_binary())
    distinct = pc.drop_null(pc.unique(values))
    if isinstance(distinct, pa.ChunkedArray):
        distinct = distinct.combine_chunks()

    if kind is _Encoding.INT64:
        return _xxh64_of_lanes(_int64_lanes(_numpy(pc.cast(distinct, pa.int64()))))
    if kind is _Encoding.FLOAT64:
        return _xxh64_of_lanes(_float64_lanes(_numpy(distinct)))
    if kind is _Encoding.DATE:
        return _xxh64_of_lanes(_int64_lanes(_numpy(pc.cast(pc.cast(distinct, pa.int32()), pa.int64()))))
    if kind is _Encoding.TIMESTAMP:
        return _xxh64_of_lanes(_int64_lanes(_numpy(pc.cast(distinct, pa.int64()))))
    if kind is _Encoding.DECIMAL:
        scale = dt.scale
        return _xxh64_of_bytes([_decimal_text(d, scale) for d in distinct.to_pylist()])
    return _xxh64_of_bytes(distinct.to_pylist())


def _numpy(array: pa.Array) -> npt.NDArray[Any]:
    result: npt.NDArray[Any] = array.to_numpy(zero_copy_only=False)
    return result


def hash_python_values(values: Sequence[object], column_type: ColumnType) -> U64Array:
    """The hashes of already-normalised Python literals of `column_type` (int, float, Decimal, str,
    bytes, bool, date, datetime), equal to what `hash_values` gives for the same values in an Arrow
    array of that type. One hash per value in order, skipping None, NaN, and values that no column
    of the type can hold (integers outside int64, decimals beyond the column's precision). Raises
    TypeError for a value that is not a literal of the type."""
    kind = column_type.kind
    lanes: list[int] = []  # int64 encodings
    floats: list[float] = []
    blobs: list[bytes] = []
    for value in values:
        if value is None:
            continue
        match kind:
            case TypeKind.BOOLEAN | TypeKind.TINYINT | TypeKind.SMALLINT | TypeKind.INT | TypeKind.BIGINT:
                if not isinstance(value, int):
                    raise _literal_error(value, column_type)
                if _INT64_MIN <= value <= _INT64_MAX:
                    lanes.append(int(value))
            case TypeKind.FLOAT | TypeKind.DOUBLE:
                if not isinstance(value, int | float):
                    raise _literal_error(value, column_type)
                number = float(value)
                if not math.isnan(number):
                    floats.append(number)
            case TypeKind.DECIMAL:
                if not isinstance(value, Decimal | int) or isinstance(value, bool):
                    raise _literal_error(value, column_type)
                number_d = Decimal(value)
                if not number_d.is_finite():
                    raise _literal_error(value, column_type)
                integer_digits = column_type.precision - column_type.scale
                if number_d.is_zero() or number_d.adjusted() < integer_digits:
                    blobs.append(_decimal_text(number_d, column_type.scale))
            case TypeKind.STRING:
                if not isinstance(value, str):
                    raise _literal_error(value, column_type)
                blobs.append(value.encode("utf-8"))
            case TypeKind.BINARY:
                if not isinstance(value, bytes | bytearray | memoryview):
                    raise _literal_error(value, column_type)
                blobs.append(bytes(value))
            case TypeKind.DATE:
                if not isinstance(value, date) or isinstance(value, datetime):
                    raise _literal_error(value, column_type)
                lanes.append(days_since_epoch(value))
            case TypeKind.TIMESTAMP:
                if not isinstance(value, datetime):
                    raise _literal_error(value, column_type)
                lanes.append(micros_since_epoch(value))
            case unknown:
                assert_never(unknown)
    if blobs:
        return _xxh64_of_bytes(blobs)
    if floats:
        return _xxh64_of_lanes(_float64_lanes(np.array(floats, dtype=np.float64)))
    return _xxh64_of_lanes(_int64_lanes(np.array(lanes, dtype=np.int64)))


def _literal_error(value: object, column_type: ColumnType) -> TypeError:
    return TypeError(f"{value!r} ({type(value).__name__}) is not a literal of column type {column_type}")


# ------------------------------------------------------------------------------------ filters


def num_bytes_for(ndv: int, fpp: float) -> int:
    """Parquet's optimal filter size in bytes for `ndv` distinct values at false-positive
    probability `fpp`, rounded up to a power of two and clamped to [32 B, 128 MiB]."""
    if not 0.0 < fpp < 1.0:
        raise ValueError(f"false-positive probability must be in (0, 1), got {fpp}")
    if ndv < 0:
        raise ValueError(f"number of distinct values must be >= 0, got {ndv}")
    if ndv == 0:
        return MIN_BYTES
    bits = -8.0 * ndv / math.log1p(-(fpp**0.125))
    num_bytes = math.ceil(bits / 8)
    if num_bytes >= MAX_BYTES:
        return MAX_BYTES
    power_of_two = 1 << (num_bytes - 1).bit_length()
    return max(MIN_BYTES, power_of_two)


def _as_hashes(hashes: npt.ArrayLike) -> U64Array:
    return np.asarray(hashes, dtype=np.uint64).reshape(-1)


def _block_of(hashes: U64Array, num_blocks: U64Array | np.uint64) -> U64Array:
    # (hash >> 32) < 2**32 and num_blocks <= 2**22, so the product cannot overflow 64 bits.
    return ((hashes >> np.uint64(32)) * num_blocks) >> np.uint64(32)


def _masks(hashes: U64Array) -> npt.NDArray[np.uint32]:
    """The eight one-bit words (n, 8) that each hash sets in its block."""
    key = (hashes & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    bit = (key[:, None] * SALT[None, :]) >> np.uint32(27)  # uint32 multiply wraps modulo 2**32
    masks: npt.NDArray[np.uint32] = np.left_shift(np.uint32(1), bit)
    return masks


def _check_num_bytes(num_bytes: int) -> None:
    if num_bytes < BLOCK_BYTES or num_bytes % BLOCK_BYTES or num_bytes > MAX_BYTES:
        raise ValueError(
            f"a bloom filter is a positive multiple of {BLOCK_BYTES} bytes up to {MAX_BYTES}, got {num_bytes}"
        )


def build(hashes: npt.ArrayLike, num_bytes: int) -> bytes:
    """A filter of `num_bytes` (a multiple of 32) with every hash inserted."""
    _check_num_bytes(num_bytes)
    h = _as_hashes(hashes)
    num_blocks = num_bytes // BLOCK_BYTES
    words = np.zeros((num_blocks, WORDS_PER_BLOCK), dtype=_WORD_DTYPE)
    if len(h):
        first_bit = _block_of(h, np.uint64(num_blocks)).astype(np.int64) * 32
        key = (h & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        # One word of every block at a time: scatter the bits into a bool array (one entry per bit)
        # and pack each block's 32 entries, least significant bit first, into its little-endian
        # word. Same result as OR-ing the masks in with np.bitwise_or.at, several times faster.
        lane_bits = np.empty(num_blocks * 32, dtype=np.bool_)
        for lane in range(WORDS_PER_BLOCK):
            lane_bits[:] = False
            lane_bits[first_bit + ((key * SALT[lane]) >> np.uint32(27))] = True
            packed = np.packbits(lane_bits.reshape(num_blocks, 32), axis=1, bitorder="little")
            words[:, lane] = packed.view(_WORD_DTYPE)[:, 0]
    return words.tobytes()


# The rows of an index of per-file filters: one filter of one column (or functional index) per file.
FILTER_ROWS_SCHEMA = pa.schema(
    [
        pa.field("column", pa.string(), nullable=False),
        pa.field("partition", pa.string(), nullable=False),
        pa.field("file_name", pa.string(), nullable=False),
        pa.field("filter", pa.binary()),
    ]
)


def filter_for(values: pa.Array | pa.ChunkedArray, fpp: float) -> bytes:
    """A filter holding the non-null values of an Arrow array, sized for their distinct count."""
    hashes = hash_values(values)
    return build(hashes, num_bytes_for(len(hashes), fpp))


def might_contain(filter_bytes: bytes, hashes: npt.ArrayLike) -> BoolArray:
    """For each hash, whether the filter might hold it (False means certainly not)."""
    _check_num_bytes(len(filter_bytes))
    words = np.frombuffer(filter_bytes, dtype=_WORD_DTYPE)
    h = _as_hashes(hashes)
    block = _block_of(h, np.uint64(len(filter_bytes) // BLOCK_BYTES)).astype(np.int64)
    index = block[:, None] * WORDS_PER_BLOCK + _LANE[None, :]
    result: BoolArray = ((words[index] & _masks(h)) != 0).all(axis=1)
    return result


def might_contain_each(filters: Sequence[bytes], hashes: npt.ArrayLike) -> BoolArray:
    """For each filter (a row) and each hash (a column), whether the filter might hold the hash:
    `might_contain` of every filter, gathered for a slice of filters at a time (at most
    `_GATHER_LIMIT` words gathered and `_JOIN_BYTES` of filters copied together)."""
    h = _as_hashes(hashes)
    result = np.zeros((len(filters), len(h)), dtype=np.bool_)
    if not len(filters) or not len(h):
        return result
    for part in filters:
        _check_num_bytes(len(part))
    masks = _masks(h)[None, :, :]  # (1, hashes, 8)
    most = max(1, _GATHER_LIMIT // (len(h) * WORDS_PER_BLOCK))
    ends = np.cumsum([len(f) for f in filters])
    start = 0
    while start < len(filters):
        # the filters from `start` whose bytes fit in one join, at least one, at most `most`
        fitting = int(np.searchsorted(ends, ends[start] - len(filters[start]) + _JOIN_BYTES, side="right"))
        step = min(most, max(1, fitting - start))
        parts = filters[start : start + step]
        words = np.frombuffer(b"".join(parts), dtype=_WORD_DTYPE)
        sizes = np.array([len(p) for p in parts], dtype=np.int64)
        word_offsets = np.concatenate(([0], np.cumsum(sizes // 4)[:-1]))
        num_blocks = (sizes // BLOCK_BYTES).astype(np.uint64)
        block = _block_of(h[None, :], num_blocks[:, None]).astype(np.int64)
        first_word = word_offsets[:, None] + block * WORDS_PER_BLOCK  # (filters, hashes)
        gathered = words[first_word[:, :, None] + _LANE[None, None, :]]
        result[start : start + len(parts)] = ((gathered & masks) != 0).all(axis=2)
        start += step
    return result


def might_contain_any(filters: Sequence[bytes | None], hashes: npt.ArrayLike) -> BoolArray:
    """For each filter, whether any of the hashes might be in it. A None filter (missing or
    unreadable) answers True; no hashes at all answer False for every filter."""
    return probe_any(filters, hashes, None)[0]


class Probed(NamedTuple):
    """What `probe_any` found: each filter's answer, how many filters answered True unchecked
    (the budget ran out before they were decided), and the (filter, hash) probes it made."""

    answers: BoolArray
    unchecked: int
    spent: int


def probe_any(
    filters: Sequence[bytes | None],
    hashes: npt.ArrayLike,
    budget: int | None,
    checkpoint: Callable[[], None] | None = None,
) -> Probed:
    """`might_contain_any` spending at most `budget` (filter, hash) probes (None: no limit). A
    filter still undecided when the budget would be exceeded answers True; their number and the
    probes made are returned with the answers. `checkpoint`, if given, is called before each chunk
    of hashes after the first; it may raise to abandon the probe (e.g. a caller's deadline)."""
    h = np.unique(_as_hashes(hashes))
    result = np.ones(len(filters), dtype=np.bool_)
    if len(h) == 0:
        result[:] = False
        return Probed(result, 0, 0)
    present = [i for i, f in enumerate(filters) if f is not None]
    parts = [f for f in filters if f is not None]
    if not parts:
        return Probed(result, 0, 0)
    for part in parts:
        _check_num_bytes(len(part))
    words = np.frombuffer(b"".join(parts), dtype=_WORD_DTYPE)
    sizes = np.array([len(p) for p in parts], dtype=np.int64)
    word_offsets = np.concatenate(([0], np.cumsum(sizes // 4)[:-1]))
    num_blocks = (sizes // BLOCK_BYTES).astype(np.uint64)
    # Probe the hashes a chunk at a time and drop every filter that has answered True: a file that
    # holds one of 100,000 wanted values usually answers within the first chunk, so only filters
    # that hold none of them meet every hash. Gathers of (filters, hashes, 8) words go in slices
    # of filters so that memory stays bounded.
    answers = np.zeros(len(parts), dtype=np.bool_)
    undecided = np.arange(len(parts))
    spent = 0
    for first in range(0, len(h), _HASH_CHUNK):
        if first and checkpoint is not None:
            checkpoint()
        chunk = h[first : first + _HASH_CHUNK]
        if budget is not None and spent + len(undecided) * len(chunk) > budget:
            answers[undecided] = True  # not proven absent: kept
            break
        spent += len(undecided) * len(chunk)
        masks = _masks(chunk)[None, :, :]  # (1, hashes, 8)
        step = max(1, _GATHER_LIMIT // (len(chunk) * WORDS_PER_BLOCK))
        for start in range(0, len(undecided), step):
            which = undecided[start : start + step]
            block = _block_of(chunk[None, :], num_blocks[which, None]).astype(np.int64)
            first_word = word_offsets[which, None] + block * WORDS_PER_BLOCK  # (filters, hashes)
            gathered = words[first_word[:, :, None] + _LANE[None, None, :]]
            answers[which] = ((gathered & masks) != 0).all(axis=2).any(axis=1)
        undecided = undecided[~answers[undecided]]
        if len(undecided) == 0:
            break
    else:
        undecided = undecided[:0]
    result[present] = answers
    return Probed(result, len(undecided), spent)
