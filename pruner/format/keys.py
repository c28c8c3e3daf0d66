"""Record keys, bucket hashing and partition paths, computed on Arrow data with vectorised
numpy / pyarrow.compute. This is the only implementation: Spark jobs call it inside `mapInArrow`
and the query side calls it directly, so a key is always encoded, hashed and placed the same way.

- Record key: a single key column is its value cast to string (dates `YYYY-MM-DD`, decimals with
  their scale). A composite key joins the components with U+001F after escaping `\\` and U+001F in
  each, so distinct key tuples never encode to the same string.
- Bucket: FNV-1a 64-bit over the UTF-8 bytes of a string, modulo the number of buckets. A value
  that is not a string (a secondary key) hashes its canonical text (`value_hashes`), the same text
  a single-column record key of that value would be. Cached index lookups search these hashes too
  (`pruner.metadata.lookup`), so a lookup hashes its keys once for the bucket and the search.
- Partition path: Hive style `col=value/...`, values cast to string and percent-escaped; null is
  `__HIVE_DEFAULT_PARTITION__`. An unpartitioned table has the empty path."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

KEY_SEPARATOR = "\x1f"
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_FNV_OFFSET_INT = int(_FNV_OFFSET)
_FNV_PRIME_INT = int(_FNV_PRIME)
_MASK64 = (1 << 64) - 1
# Up to this many strings, `fnv1a64` hashes in Python (see there).
_SCALAR_HASH_LIMIT = 8
# Characters escaped in partition values (Hive's set, minus the ones that are harmless in URIs).
_PARTITION_ESCAPES = [
    "%",
    "/",
    "=",
    "\\",
    ":",
    "#",
    "?",
    "*",
    '"',
    "'",
    "[",
    "]",
    "^",
    "{",
    "}",
    "\n",
    "\r",
    "\t",
    "\x01",
    "\x1f",
    " ",
]


def canonical_text(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Each value as the text keys are made of (timestamps as UTC ISO-8601 with six fraction
    digits, dates `YYYY-MM-DD`, decimals with their scale); NULL stays NULL."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if values.type == pa.string():
        return values
    if pa.types.is_timestamp(values.type):
        # Normalise the unit so that the same instant always prints the same six fraction digits.
        values = pc.cast(values, pa.timestamp("us", tz="UTC"))
        # Arrow's %S already prints the fraction (six digits for microseconds); %f is not a directive.
        values = pc.strftime(values, format="%Y-%m-%dT%H:%M:%SZ")
    return pc.cast(values, pa.string())


def encode_record_keys(table: pa.Table | pa.RecordBatch, key_fields: tuple[str, ...]) -> pa.Array:
    """The encoded record key of every row (a string array, null where a component is null)."""
    parts = [canonical_text(table.column(name)) for name in key_fields]
    if len(parts) == 1:
        return parts[0]
    joined = pc.binary_join_element_wise(
        *map(escape_component, parts), KEY_SEPARATOR, null_handling="emit_null"
    )
    return pc.cast(joined, pa.string())


def escape_component(text: pa.Array) -> pa.Array:
    """A composite key component's text with `\\` doubled and U+001F written `\\u001f`: then no
    component holds the separator, and every backslash of it is followed by another or by `u`."""
    return pc.replace_substring(pc.replace_substring(text, "\\", "\\\\"), KEY_SEPARATOR, "\\u001f")


def fnv1a64(strings: pa.Array | pa.ChunkedArray) -> npt.NDArray[np.uint64]:
    """FNV-1a 64-bit hash of each (non-null) string's UTF-8 bytes; nulls hash as empty strings.
    A few strings (a point lookup) are hashed byte by byte in Python, which is ~50x faster than
    setting up the vectorised pass; both give the same hashes (property-tested)."""
    if len(strings) <= _SCALAR_HASH_LIMIT:
        return _fnv1a64_scalar(strings)
    return _fnv1a64_vectorised(strings)


def _fnv1a64_scalar(strings: pa.Array | pa.ChunkedArray) -> npt.NDArray[np.uint64]:
    hashes = []
    for text in strings.to_pylist():
        h = _FNV_OFFSET_INT
        for byte in (text or "").encode("utf-8"):
            h = ((h ^ byte) * _FNV_PRIME_INT) & _MASK64
        hashes.append(h)
    return np.array(hashes, dtype=np.uint64)


def _fnv1a64_vectorised(strings: pa.Array | pa.ChunkedArray) -> npt.NDArray[np.uint64]:
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    strings = pc.cast(strings, pa.large_string())
    n = len(strings)
    hashes = np.full(n, _FNV_OFFSET, dtype=np.uint64)
    if n == 0:
        return hashes
    buffers = strings.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int64)[strings.offset : strings.offset + n + 1]
    data = (
        np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, dtype=np.uint8)
    )
    starts = offsets[:-1]
    lengths = np.diff(offsets)
    if strings.null_count:
        lengths = np.where(strings.is_null().to_numpy(zero_copy_only=False), 0, lengths)
    # Process positions j = 0, 1, ... over the rows whose string is longer than j. Ordering rows by
    # length lets each step work on a contiguous tail instead of a boolean mask.
    order = np.argsort(lengths, kind="stable")
    sorted_lengths = lengths[order]
    sorted_starts = starts[order]
    sorted_hashes = hashes[order]
    max_length = int(sorted_lengths[-1])
    first_active = 0
    with np.errstate(over="ignore"):
        for j in range(max_length):
            first_active = int(np.searchsorted(sorted_lengths, j, side="right"))
            active = slice(first_active, n)
            byte = data[sorted_starts[active] + j].astype(np.uint64)
            sorted_hashes[active] = (sorted_hashes[active] ^ byte) * _FNV_PRIME
    hashes[order] = sorted_hashes
    return hashes


def value_hashes(values: pa.Array | pa.ChunkedArray) -> npt.NDArray[np.uint64]:
    """The FNV-1a hash of each value's canonical text (NULL hashes as the empty string)."""
    return fnv1a64(canonical_text(values))


def buckets_of(strings: pa.Array | pa.ChunkedArray, num_buckets: int) -> npt.NDArray[np.int32]:
    """The bucket (0..num_buckets-1) of every string."""
    return (fnv1a64(strings) % np.uint64(num_buckets)).astype(np.int32)


def bucket_of(value: str, num_buckets: int) -> int:
    return int(buckets_of(pa.array([value], pa.string()), num_buckets)[0])


def escape_partition_value(values: pa.Array) -> pa.Array:
    for ch in _PARTITION_ESCAPES:
        values = pc.replace_substring(values, ch, f"%{ord(ch):02X}")
    return values


def partition_paths(table: pa.Table | pa.RecordBatch, partition_fields: tuple[str, ...]) -> pa.Array:
    """The Hive-style partition path of every row ('' for an unpartitioned table)."""
    n = table.num_rows
    if not partition_fields:
        return pa.array([""] * n, pa.string())
    segments = []
    for name in partition_fields:
        text = escape_partition_value(canonical_text(table.column(name)))
        text = pc.fill_null(text, NULL_PARTITION)
        segments.append(pc.binary_join_element_wise(f"{name}=", text, ""))
    return pc.cast(pc.binary_join_element_wise(*segments, "/"), pa.string())


def parse_partition_path(path: str) -> dict[str, str | None]:
    """The raw (unescaped, still string) partition values of a partition path."""
    values: dict[str, str | None] = {}
    if not path:
        return values
    for segment in path.split("/"):
        name, _, text = segment.partition("=")
        values[name] = None if text == NULL_PARTITION else _unescape(text)
    return values


def _unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i] == "%" and _is_hex(text[i + 1 : i + 3]):
            out.append(chr(int(text[i + 1 : i + 3], 16)))
            i += 3
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _is_hex(pair: str) -> bool:
    return len(pair) == 2 and all(c in "0123456789abcdefABCDEF" for c in pair)
