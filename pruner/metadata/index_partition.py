"""Reading and writing one index partition. `IndexPartitionView` is the partition as of one snapshot: per
bucket, the newest visible base file and the log files after it. Visibility is decided by the
timeline (only files whose instant is completed and not after the snapshot count), so files of
failed or in-flight commits are never read; the files are those the completed instants recorded
writing (`pruner.format.manifest`), so one that has gone missing from storage fails its read with
`IndexFileMissingError` instead of silently leaving rows out of the index. Keyed reads (`lookup`)
read, cold, only the row groups whose footer min / max admit a key; with a cache, each merged
bucket is kept with a hash lookup on its hash field (`pruner.metadata.lookup.IndexedRows`), so a
cached lookup costs a binary search on integers per key instead of a pass over the bucket. Writers
add log files per commit and base files at compaction; both are named with their instant."""

from __future__ import annotations

import itertools
import logging
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from pruner.errors import IndexFileMissingError, TableCorruptError
from pruner.format.keys import value_hashes
from pruner.format.layout import IndexFileName
from pruner.format.parquet_encoding import dictionary_columns
from pruner.format.parquet_reads import iter_row_groups, read_in_memory, read_row_groups
from pruner.metadata.cache import IndexCache
from pruner.metadata.lookup import IndexedRows, admitted, lookup_keys
from pruner.metadata.merge import UnsortedRunError, last_of_each_key, merge, merge_runs
from pruner.metadata.spec import ROW_GROUP_ROWS, IndexPartitionSpec
from pruner.storage import Storage

log = logging.getLogger(__name__)

# Index files carry page checksums, verified whenever they are read: a garbled page fails its read
# (so the index falls back) instead of decoding into wrong keys or statistics.
_VERIFIED = ds.ParquetFileFormat(
    default_fragment_scan_options=ds.ParquetFragmentScanOptions(page_checksum_verification=True)
)

# How much of an index file's tail a keyed read takes first: its footer (each row group's min / max)
# is a few KiB, so one ranged read usually has all of it. A footer ends in its length and the magic.
_TAIL_BYTES = 16 * 1024
_MAGIC = b"PAR1"
_TRAILER = 4 + len(_MAGIC)

# The sidecar's cache: merged buckets with their lookup index, keyed by their files' names.
BucketCache = IndexCache[IndexedRows]


@dataclass(frozen=True)
class BucketFiles:
    base: IndexFileName | None = None
    logs: tuple[IndexFileName, ...] = ()

    @property
    def names(self) -> list[IndexFileName]:
        return ([self.base] if self.base else []) + list(self.logs)


@dataclass(frozen=True)
class IndexPartitionView:
    storage: Storage
    spec: IndexPartitionSpec
    buckets: dict[int, BucketFiles] = field(default_factory=dict)
    cache: BucketCache | None = field(default=None, compare=False)
    # Each bucket's key in `cache`, computed on first use.
    _cache_keys: dict[int, tuple[str, tuple[str, ...]]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    @classmethod
    def load(
        cls,
        storage: Storage,
        spec: IndexPartitionSpec,
        visible: frozenset[str],
        as_of: str | None,
        cache: BucketCache | None = None,
        recorded: Iterable[IndexFileName] | None = None,
    ) -> IndexPartitionView:
        """The partition as of instant `as_of` (None: nothing committed yet). `recorded`: the files
        that completed instants up to `as_of` recorded writing into it; the view is made of exactly
        those, whether storage still holds them or not. Without it (a table written before instants
        recorded their files), storage is listed and files whose instant is in `visible` (the
        completed instants) and not after `as_of` count. With a `cache`, merged buckets are kept
        there between calls, each with its lookup index (see `pruner.metadata.cache`)."""
        if as_of is None:
            return cls(storage, spec, {}, cache)
        if recorded is None:
            recorded = (n for n in list_index_files(storage, spec) if n.instant in visible)
        by_bucket: dict[int, list[IndexFileName]] = defaultdict(list)
        for name in recorded:
            if name.instant <= as_of:
                by_bucket[name.bucket].append(name)
        return cls(storage, spec, {b: select_bucket_files(files) for b, files in by_bucket.items()}, cache)

    def rel(self, name: IndexFileName) -> str:
        return f"{self.spec.directory}/{name}"

    def file_paths(self) -> list[str]:
        return [self.rel(n) for files in self.buckets.values() for n in files.names]

    def read_bucket(self, bucket: int, keys: pa.Array | None = None) -> pa.Table:
        """Live rows of one bucket; with `keys`, only rows whose hash field is among them (a NULL
        key matches nothing)."""
        if keys is None:
            return self._bucket_rows(bucket, None, None)
        keys = lookup_keys(keys, self._hash_type)
        return self._bucket_rows(bucket, keys, value_hashes(keys))

    def read_all(self) -> pa.Table:
        tables = [self.read_bucket(b) for b in sorted(self.buckets)]
        return pa.concat_tables(tables) if tables else self.spec.schema.empty_table()

    def lookup(self, keys: pa.Array) -> pa.Table:
        """Live rows whose hash field equals one of `keys`; reads only the buckets they hash to.
        Each key is hashed once, for its bucket and for the search in a cached bucket."""
        keys = lookup_keys(keys, self._hash_type)
        hashes = value_hashes(keys)
        of = self.spec.buckets_of_hashes(hashes)
        wanted = sorted(set(of.tolist()))
        tables = []
        for bucket in wanted:
            if bucket not in self.buckets:
                continue
            if len(wanted) == 1:
                tables.append(self._bucket_rows(bucket, keys, hashes))
            else:
                chosen = of == bucket
                tables.append(self._bucket_rows(bucket, keys.filter(chosen), hashes[chosen]))
        if len(tables) == 1:
            return tables[0]
        return pa.concat_tables(tables) if tables else self.spec.schema.empty_table()

    @property
    def _hash_type(self) -> pa.DataType:
        return self.spec.hash_type

    def _bucket_rows(
        self, bucket: int, keys: pa.Array | None, hashes: npt.NDArray[np.uint64] | None
    ) -> pa.Table:
        """`read_bucket` for keys already normalised by `lookup_keys`, with their `value_hashes`."""
        files = self.buckets.get(bucket)
        if files is None:
            return self.spec.schema.empty_table()
        if self.cache is None:
            return self._read_merged(files, keys)
        key = self._cache_keys.get(bucket)
        if key is None:
            key = self._cache_keys[bucket] = (
                self.storage.full_uri(self.spec.directory),
                tuple(str(n) for n in files.names),
            )
        if keys is not None and self.cache.too_large(key):
            # Never kept, so never loaded whole again: read only row groups that may hold a key.
            return self._read_merged(files, keys)
        indexed = self.cache.get_or_load(
            key, lambda: IndexedRows.build(self._read_merged(files, None), self.spec.hash_field)
        )
        return indexed.rows if keys is None else indexed.find(keys, hashes)

    def scan(self, expression: ds.Expression) -> pa.Table:
        """Live rows satisfying `expression` (on key fields only, so that a tombstone is read
        whenever the row it hides is), from every bucket; row groups are skipped by their footer
        statistics, which for the leading sort key makes a narrow range cheap. Read on the calling
        thread (`pruner.format.parquet_reads`), not by a dataset scan, which reads on Arrow's pools."""
        tables = []
        for bucket in sorted(self.buckets):
            layers = []
            for name in self.buckets[bucket].names:
                with self.reading(name) as rel, self.storage.open_input_file(rel) as source:
                    fragment = _VERIFIED.make_fragment(source)
                    groups = [
                        g.id
                        for piece in fragment.split_by_row_group(filter=expression)
                        for g in piece.row_groups
                    ]
                    rows = read_row_groups(source, fragment.metadata, groups, verify_checksums=True)
                    layers.append(rows.filter(expression))
            tables.append(merge(self.spec, layers))
        return pa.concat_tables(tables) if tables else self.spec.schema.empty_table()

    def estimate_fraction(self, expression: ds.Expression) -> float:
        """The share of row groups (over every file of every bucket) whose footer statistics admit
        `expression`: a cheap estimate, from footers only, of how much of the partition a scan
        reads."""
        total = kept = 0
        for bucket in self.buckets.values():
            for name in bucket.names:
                with self.reading(name) as rel, self.storage.open_input_file(rel) as source:
                    fragment = _VERIFIED.make_fragment(source)
                    total += fragment.metadata.num_row_groups
                    kept += len(fragment.split_by_row_group(filter=expression))
        return kept / total if total else 0.0

    def log_counts(self) -> dict[int, int]:
        return {b: len(files.logs) for b, files in self.buckets.items()}

    def missing(self) -> list[str]:
        """The table-relative paths of the view's files that storage does not hold (one metadata
        request for all of them)."""
        rels = self.file_paths()
        types = self.storage.file_types(rels)
        return [rel for rel, kind in zip(rels, types, strict=True) if kind == pafs.FileType.NotFound]

    def _read_merged(self, files: BucketFiles, keys: pa.Array | None) -> pa.Table:
        return merge(self.spec, [self._read_file(name, keys) for name in files.names])

    @contextmanager
    def reading(self, name: IndexFileName) -> Iterator[str]:
        """The table-relative path of index file `name`; failing to read it inside the block
        raises `TableCorruptError` naming the file, with Arrow's reason on the same line (some of
        its messages span lines; the CLI reports an error in one)."""
        try:
            yield self.rel(name)
        except FileNotFoundError as exc:
            raise IndexFileMissingError(
                f"index file {self.storage.full_uri(self.rel(name))} is missing "
                f"(written by completed instant {name.instant})"
            ) from exc
        except (OSError, pa.ArrowInvalid) as exc:
            raise TableCorruptError(
                f"cannot read index file {self.storage.full_uri(self.rel(name))}: {_one_line(str(exc))}"
            ) from exc

    def _read_file(self, name: IndexFileName, keys: pa.Array | None) -> pa.Table:
        with self.reading(name) as rel:
            if keys is None:  # every row group: the whole file in one read
                return read_in_memory(self.storage.read_bytes(rel), verify_checksums=True)
            with self.storage.open_input_file(rel) as source:
                # The footer first (one ranged read of the file's tail), then only the row groups
                # whose min / max admit a key (from the tail already read, if it is the whole file).
                metadata, tail = _footer(source)
                whole = len(tail) == source.size()
                groups = _row_groups_with_keys(metadata, self.spec.hash_field, keys)
                rows = read_row_groups(
                    pa.BufferReader(tail) if whole else source, metadata, groups, verify_checksums=True
                )
            return rows.filter(
                pc.is_in(
                    rows.column(self.spec.hash_field), keys.cast(rows.schema.field(self.spec.hash_field).type)
                )
            )


def _one_line(text: str) -> str:
    """`text` with its line breaks, control characters (Arrow quotes damaged bytes as they are) and
    runs of spaces each made one space."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


def _footer(source: pa.NativeFile) -> tuple[pq.FileMetaData, bytes]:
    """A Parquet file's footer and the tail of the file read for it: one read of the last
    `_TAIL_BYTES` (a second read fetches the rest of a larger footer). Arrow's own footer read
    takes the last 64 KiB, which for most index files is the whole file, read again with the row
    groups."""
    size = source.size()
    tail_size = min(size, _TAIL_BYTES)
    source.seek(size - tail_size)
    tail = source.read(tail_size)
    if size < _TRAILER + len(_MAGIC) or tail[-len(_MAGIC) :] != _MAGIC:
        raise pa.ArrowInvalid("not a Parquet file (no footer)")
    footer = int.from_bytes(tail[-_TRAILER : -len(_MAGIC)], "little") + _TRAILER
    if footer > size - len(_MAGIC):
        raise pa.ArrowInvalid(f"Parquet footer of {footer} bytes does not fit in a file of {size}")
    if footer > tail_size:
        source.seek(size - footer)
        tail = source.read(footer - tail_size) + tail
    return pq.read_metadata(pa.BufferReader(tail[-footer:])), tail


def _row_groups_with_keys(metadata: pq.FileMetaData, field_name: str, keys: pa.Array) -> list[int]:
    """Row groups whose footer min / max of `field_name` admits at least one of `keys` (a row group
    without statistics always does; all row groups when the statistics cannot be compared with the
    keys). Files are sorted by their key, so for a few keys most row groups are skipped; the footers
    are read in Python, the comparison with the keys is two vectorised binary searches."""
    schema = metadata.schema.to_arrow_schema()
    everything = list(range(metadata.num_row_groups))
    column = schema.get_field_index(field_name)
    if column < 0:
        return everything
    bounds: tuple[list[object], list[object]] = ([], [])
    for group in everything:
        stats = metadata.row_group(group).column(column).statistics
        known = stats is not None and stats.has_min_max
        bounds[0].append(stats.min if known else None)
        bounds[1].append(stats.max if known else None)
    value_type = schema.field(column).type
    try:
        keep = admitted(pa.array(bounds[0], value_type), pa.array(bounds[1], value_type), keys)
    except (TypeError, ValueError, NotImplementedError):  # statistics Arrow cannot compare with the keys
        return everything
    return [int(group) for group in np.flatnonzero(keep)]


def list_index_files(storage: Storage, spec: IndexPartitionSpec) -> list[IndexFileName]:
    names = []
    for entry in storage.list_files(spec.directory):
        parsed = IndexFileName.parse(entry.rel.rpartition("/")[2])
        if parsed is not None:
            names.append(parsed)
    return names


def select_bucket_files(files: Iterable[IndexFileName]) -> BucketFiles:
    """The newest base and the logs written after it (a log and a base of the same instant cannot
    both exist: compaction runs as an instant of its own)."""
    ordered = sorted(files, key=lambda f: f.instant)
    bases = [f for f in ordered if f.kind == "base"]
    base = bases[-1] if bases else None
    logs = tuple(f for f in ordered if f.kind == "log" and (base is None or f.instant > base.instant))
    return BucketFiles(base, logs)


def _write(storage: Storage, spec: IndexPartitionSpec, name: IndexFileName, rows: pa.Table) -> str:
    rel = f"{spec.directory}/{name}"
    with storage.open_output_stream(rel) as sink:
        pq.write_table(
            rows,
            sink,
            row_group_size=ROW_GROUP_ROWS,
            compression="zstd",
            use_dictionary=dictionary_columns(rows),
            write_page_checksum=True,
        )
    return rel


def write_logs(storage: Storage, spec: IndexPartitionSpec, instant: str, rows: pa.Table) -> list[str]:
    """Write one log file per bucket touched by `rows` (which carry the op column); if a key occurs
    more than once, its last occurrence wins. Returns the relative paths written."""
    if rows.num_rows == 0:
        return []
    rows = rows.select(spec.log_schema.names).cast(spec.log_schema)
    buckets = spec.buckets(rows)
    return [
        write_bucket_log(storage, spec, instant, int(bucket), rows.filter(pa.array(buckets == bucket)))
        for bucket in np.unique(buckets)
    ]


def write_bucket_log(
    storage: Storage, spec: IndexPartitionSpec, instant: str, bucket: int, rows: pa.Table
) -> str:
    """Write the log file of one bucket from rows (in the log schema, with the op column) that all
    hash to it, as the caller knows without hashing them again; if a key occurs more than once, its
    last occurrence wins. Returns the relative path written."""
    return _write(storage, spec, IndexFileName(bucket, "log", instant), _dedupe_keep_last(spec, rows))


def _dedupe_keep_last(spec: IndexPartitionSpec, rows: pa.Table) -> pa.Table:
    # Sort by key and keep the last row of each key run; unlike merge(), ops survive. Arrow's sort is
    # stable (`sort_indices`), so rows of one key keep their order.
    ordered = rows.sort_by(spec.sort_keys())
    return ordered.filter(last_of_each_key(ordered, spec.key_fields))


def write_base(storage: Storage, spec: IndexPartitionSpec, bucket: int, instant: str, rows: pa.Table) -> str:
    rows = rows.select(spec.schema.names).cast(spec.schema).sort_by(spec.sort_keys())
    return _write(storage, spec, IndexFileName(bucket, "base", instant), rows)


def compact_bucket(view: IndexPartitionView, bucket: int, instant: str) -> str:
    """Fold a bucket's base and logs into a new base file named with `instant`, streaming: the
    files are merged as sorted runs (`merge_runs`) and written row group by row group, so memory
    does not grow with the bucket. A file out of key order (not written by this code) is merged in
    memory instead, with a warning."""
    files = view.buckets.get(bucket, BucketFiles())
    name = IndexFileName(bucket, "base", instant)
    try:
        merged = merge_runs(view.spec, [_file_chunks(view, n) for n in files.names])
        return _write_chunks(view.storage, view.spec, name, merged)
    except UnsortedRunError as exc:
        log.warning("index bucket %s/%d merged in memory: %s", view.spec.name, bucket, exc)
        return write_base(view.storage, view.spec, bucket, instant, view.read_bucket(bucket))


def _file_chunks(view: IndexPartitionView, name: IndexFileName) -> Iterator[pa.Table]:
    """One index file, a row group at a time, read on the calling thread."""
    with view.reading(name) as rel, view.storage.open_input_file(rel) as source:
        metadata, _ = _footer(source)
        yield from iter_row_groups(source, metadata, verify_checksums=True)


def _write_chunks(
    storage: Storage, spec: IndexPartitionSpec, name: IndexFileName, chunks: Iterable[pa.Table]
) -> str:
    """Write chunks (sorted, in the partition's schema) as one file of full row groups; the columns'
    encodings are chosen from the first row groups' rows."""
    rel = f"{spec.directory}/{name}"
    groups = _full_row_groups(chunks, spec.schema)
    first = next(groups, spec.schema.empty_table())
    with (
        storage.open_output_stream(rel) as sink,
        pq.ParquetWriter(
            sink,
            spec.schema,
            compression="zstd",
            use_dictionary=dictionary_columns(first),
            write_page_checksum=True,
        ) as out,
    ):
        for rows in itertools.chain([first], groups):
            if rows.num_rows:  # an empty bucket is still a valid file, of no row group
                out.write_table(rows, row_group_size=ROW_GROUP_ROWS)
    return rel


def _full_row_groups(chunks: Iterable[pa.Table], schema: pa.Schema) -> Iterator[pa.Table]:
    """The chunks' rows (cast to `schema`) regrouped into tables of whole row groups, the last
    table holding the rest."""
    pending: list[pa.Table] = []
    for chunk in chunks:
        pending.append(chunk.cast(schema))
        if sum(t.num_rows for t in pending) >= ROW_GROUP_ROWS:
            rows = pa.concat_tables(pending)
            full = rows.num_rows - rows.num_rows % ROW_GROUP_ROWS
            yield rows.slice(0, full)
            pending = [rows.slice(full)]
    if pending:
        yield pa.concat_tables(pending)
