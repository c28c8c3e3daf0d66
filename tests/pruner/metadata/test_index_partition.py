"""pruner.metadata.index_partition with the record_index and files specs: log writes, snapshot views,
bucket-limited lookups and compaction."""

from __future__ import annotations

import secrets
import threading
from collections import Counter
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from pruner import storage as storage_module
from pruner.errors import TableCorruptError
from pruner.format.keys import bucket_of
from pruner.format.layout import IndexFileName
from pruner.index import secondary
from pruner.metadata import files_index, index_partition, record_index
from pruner.metadata.cache import IndexCache
from pruner.metadata.files_index import DataFile
from pruner.metadata.index_partition import (
    BucketFiles,
    IndexPartitionView,
    _row_groups_with_keys,
    compact_bucket,
    list_index_files,
    select_bucket_files,
    write_base,
    write_logs,
)
from pruner.metadata.merge import with_op
from pruner.metadata.spec import OP_DELETE, OP_FIELD, OP_UPSERT, ROW_GROUP_ROWS
from pruner.storage import Storage
from pruner.storage_requests import StorageRequests, _CountedReads, counting, current
from pruner.types import parse_type
from tests.support_s3 import SeaweedS3

SPEC = record_index.spec(4)
I1, I2, I3, I4, I5, I6 = (f"2024010100000000{i}" for i in range(1, 7))

Entry = tuple[str, str]  # record key -> (partition, file group)


def _rows(entries: dict[str, Entry], op: int) -> pa.Table:
    table = pa.table(
        {
            "key": list(entries),
            "partition": [p for p, _ in entries.values()],
            "file_group": [g for _, g in entries.values()],
        },
        schema=record_index.SCHEMA,
    )
    return with_op(table, op)


def _commit(storage: Storage, instant: str, upserts: dict[str, Entry], deletes: list[str]) -> list[str]:
    rows = pa.concat_tables([_rows(upserts, OP_UPSERT), _rows({k: ("", "") for k in deletes}, OP_DELETE)])
    return write_logs(storage, SPEC, instant, rows)


def _as_dict(table: pa.Table) -> dict[str, Entry]:
    rows = table.to_pylist()
    assert len({r["key"] for r in rows}) == len(rows)
    return {r["key"]: (r["partition"], r["file_group"]) for r in rows}


def _view(storage: Storage, as_of: str | None, visible: set[str] | None = None) -> IndexPartitionView:
    completed = frozenset(visible if visible is not None else {I1, I2, I3, I4, I5, I6})
    return IndexPartitionView.load(storage, SPEC, visible=completed, as_of=as_of)


# The commits of the history fixture and the state after each.
COMMITS: list[tuple[str, dict[str, Entry], list[str]]] = [
    (I1, {f"k{i:02d}": ("p=a", "g1") for i in range(20)}, []),
    (I2, {"k05": ("p=a", "g2"), "k20": ("p=b", "g3")}, ["k00", "k19", "missing"]),
    (I3, {"k00": ("p=b", "g4")}, ["k01", "k02", "k03"]),
]


def _expected_states() -> dict[str, dict[str, Entry]]:
    state: dict[str, Entry] = {}
    states = {}
    for instant, upserts, deletes in COMMITS:
        for key in deletes:
            state.pop(key, None)
        state.update(upserts)
        states[instant] = dict(state)
    return states


@pytest.fixture
def history(tmp_path: Path) -> Storage:
    storage = Storage.from_uri(str(tmp_path))
    for instant, upserts, deletes in COMMITS:
        _commit(storage, instant, upserts, deletes)
    return storage


def test_view_as_of_each_instant(history: Storage) -> None:
    states = _expected_states()
    assert states[I3]["k05"] == ("p=a", "g2")
    assert "k00" in states[I3] and "k00" not in states[I2]
    for instant, expected in states.items():
        view = _view(history, instant)
        assert _as_dict(view.read_all()) == expected
        assert view.read_all().schema == SPEC.schema


def test_nothing_committed_yet(history: Storage) -> None:
    view = _view(history, None)
    assert view.buckets == {}
    assert view.read_all().num_rows == 0
    assert view.lookup(pa.array(["k05"])).num_rows == 0


def test_files_of_instants_not_visible_are_ignored(history: Storage) -> None:
    # I4 failed or is still in flight: its files are on storage but not on the completed timeline.
    _commit(history, I4, {"k99": ("p=z", "gz")}, [f"k{i:02d}" for i in range(21)])
    states = _expected_states()
    assert _as_dict(_view(history, I4, visible={I1, I2, I3}).read_all()) == states[I3]
    assert _as_dict(_view(history, I4, visible={I1, I3}).read_all()) != states[I3]
    assert _as_dict(_view(history, I4).read_all()) == {"k99": ("p=z", "gz")}


def test_lookup_returns_only_matching_rows(history: Storage) -> None:
    view = _view(history, I3)
    found = view.lookup(pa.array(["k05", "k00", "k01", "nope", "k05", None], pa.string()))
    assert _as_dict(found) == {"k05": ("p=a", "g2"), "k00": ("p=b", "g4")}
    assert view.lookup(pa.array([], pa.string())).num_rows == 0
    assert _as_dict(view.lookup(pa.chunked_array([["k10"], ["k11"]]))) == {
        "k10": ("p=a", "g1"),
        "k11": ("p=a", "g1"),
    }


def test_lookup_reads_only_the_buckets_the_keys_hash_to(history: Storage) -> None:
    key = "k07"
    bucket = bucket_of(key, SPEC.num_buckets)
    view = _view(history, I3)
    other = [b for b in view.buckets if b != bucket]
    assert other, "the fixture should fill more than one bucket"
    for b in other:
        for name in view.buckets[b].names:
            history.write_bytes(view.rel(name), b"not parquet")
    assert _as_dict(view.lookup(pa.array([key]))) == {key: ("p=a", "g1")}
    with pytest.raises(TableCorruptError, match="cannot read index file"):
        view.read_all()


READS_OF_A_CORRUPT_BUCKET = {
    "cold lookup": lambda view, bucket: view.lookup(pa.array(["k07"])),
    "cached lookup": lambda view, bucket: IndexPartitionView.load(
        view.storage, view.spec, frozenset({I1, I2, I3}), I3, IndexCache(10**7)
    ).lookup(pa.array(["k07"])),
    "scan": lambda view, bucket: view.scan(pc.field("key") >= "k"),
    "estimate": lambda view, bucket: view.estimate_fraction(pc.field("key") >= "k"),
    "compaction": lambda view, bucket: compact_bucket(view, bucket, I4),
}


@pytest.mark.parametrize("read", list(READS_OF_A_CORRUPT_BUCKET), ids=list(READS_OF_A_CORRUPT_BUCKET))
def test_every_read_of_a_corrupt_index_file_names_the_file(history: Storage, read: str) -> None:
    view = _view(history, I3)
    bucket = bucket_of("k07", SPEC.num_buckets)
    corrupt = view.buckets[bucket].names[-1]
    history.write_bytes(view.rel(corrupt), b"not parquet")
    with pytest.raises(TableCorruptError, match=f"cannot read index file .*{corrupt}"):
        READS_OF_A_CORRUPT_BUCKET[read](view, bucket)


def test_a_corrupt_index_file_is_reported_in_one_printable_line(history: Storage) -> None:
    """A garbled page header makes Arrow quote the bad byte and break its message over lines; the
    error keeps the reason, in the one line the CLI prints."""
    view = _view(history, I3)
    rel = view.rel(view.buckets[bucket_of("k07", SPEC.num_buckets)].names[0])
    data = bytearray(history.read_bytes(rel))
    for i in range(4, 12):  # the first page header, just after the leading magic
        data[i] ^= 0x5A
    history.write_bytes(rel, bytes(data))
    with pytest.raises(TableCorruptError) as raised:
        view.read_all()
    assert "\n" in str(raised.value.__cause__)
    message = str(raised.value)
    assert message.isprintable() and "  " not in message
    assert "thrift" in message and message.endswith("Deserializing page header failed.")


def test_write_logs_writes_one_file_per_touched_bucket(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    entries = {f"key{i}": ("", f"g{i}") for i in range(40)}
    written = _commit(storage, I1, entries, [])
    buckets = {bucket_of(k, SPEC.num_buckets) for k in entries}
    assert sorted(written) == sorted(f"{SPEC.directory}/{IndexFileName(b, 'log', I1)}" for b in buckets)
    for rel in written:
        log_rows = pq.read_table(storage.path(rel))
        assert log_rows.schema.names == SPEC.log_schema.names
        bucket = IndexFileName.parse(rel.rpartition("/")[2])
        assert bucket is not None
        assert {bucket_of(k, SPEC.num_buckets) for k in log_rows.column("key").to_pylist()} == {bucket.bucket}
    assert write_logs(storage, SPEC, I2, _rows({}, OP_UPSERT)) == []


@pytest.mark.parametrize("earlier_commit", [True, False])
def test_duplicate_keys_in_one_write_last_occurrence_wins(tmp_path: Path, earlier_commit: bool) -> None:
    storage = Storage.from_uri(str(tmp_path))
    if earlier_commit:
        _commit(storage, I1, {"a": ("p", "g0"), "b": ("p", "g0"), "c": ("p", "g0")}, [])
    rows = pa.concat_tables(
        [
            _rows({"a": ("p", "first"), "b": ("p", "g1"), "d": ("p", "first")}, OP_UPSERT),
            _rows({"a": ("", "")}, OP_DELETE),
            _rows({"a": ("p", "last"), "c": ("p", "again"), "d": ("p", "last")}, OP_UPSERT),
            _rows({"b": ("", ""), "c": ("", "")}, OP_DELETE),
        ]
    )
    written = write_logs(storage, SPEC, I2, rows)
    assert _as_dict(_view(storage, I2).read_all()) == {"a": ("p", "last"), "d": ("p", "last")}
    # Logs keep one row per key with its op, so deletes still hide older layers.
    log_rows = pa.concat_tables([pq.read_table(storage.path(rel)) for rel in written])
    pairs = sorted(
        zip(log_rows.column("key").to_pylist(), log_rows.column(OP_FIELD).to_pylist(), strict=True)
    )
    assert pairs == [("a", OP_UPSERT), ("b", OP_DELETE), ("c", OP_DELETE), ("d", OP_UPSERT)]


def test_compaction_keeps_the_view(history: Storage) -> None:
    before = _view(history, I3)
    assert any(files.logs for files in before.buckets.values())
    for bucket in before.buckets:
        rel = compact_bucket(before, bucket, I4)
        assert rel == f"{SPEC.directory}/{IndexFileName(bucket, 'base', I4)}"
    after = _view(history, I4)
    for files in after.buckets.values():
        assert files.base is not None and files.base.instant == I4
        assert files.logs == ()
    assert after.read_all().equals(before.read_all())
    assert after.log_counts() == dict.fromkeys(before.buckets, 0)
    # Snapshots before the compaction still read the logs.
    assert _as_dict(_view(history, I2).read_all()) == _expected_states()[I2]
    # A commit after the compaction is a log on top of the new base.
    _commit(history, I5, {"k50": ("p=c", "g5")}, ["k05"])
    latest = _as_dict(_view(history, I5).read_all())
    expected = {**_expected_states()[I3], "k50": ("p=c", "g5")}
    del expected["k05"]
    assert latest == expected


def test_compaction_of_a_large_bucket_streams_full_row_groups(tmp_path: Path) -> None:
    """Several row groups per file: the streamed base equals the in-memory merge and is cut into
    full row groups (the last one excepted). Logs and base encode the unique keys plain and the
    repeating partitions and file groups with a dictionary (`pruner.format.parquet_encoding`)."""
    storage = Storage.from_uri(str(tmp_path))
    spec = record_index.spec(1)
    keys = [f"k{i:05d}" for i in range(3 * ROW_GROUP_ROWS + 7)]
    (log,) = write_logs(storage, spec, I1, _rows(dict.fromkeys(keys, ("p=a", "g1")), OP_UPSERT))
    write_logs(storage, spec, I2, _rows(dict.fromkeys(keys[::3], ("", "")), OP_DELETE))
    write_logs(storage, spec, I3, _rows(dict.fromkeys(keys[::5], ("p=b", "g2")), OP_UPSERT))
    before = IndexPartitionView.load(storage, spec, visible=frozenset({I1, I2, I3, I4}), as_of=I3)
    rel = compact_bucket(before, 0, I4)
    after = IndexPartitionView.load(storage, spec, visible=frozenset({I1, I2, I3, I4}), as_of=I4)
    assert after.read_all().equals(before.read_all())
    metadata = pq.ParquetFile(storage.path(rel)).metadata
    sizes = [metadata.row_group(g).num_rows for g in range(metadata.num_row_groups)]
    assert sum(sizes) == before.read_all().num_rows and len(sizes) > 1
    assert all(size == ROW_GROUP_ROWS for size in sizes[:-1])
    for written in (log, rel):
        footer = pq.ParquetFile(storage.path(written)).metadata.row_group(0)
        columns = [footer.column(i) for i in range(footer.num_columns)]
        dictionary = {column.path_in_schema for column in columns if column.has_dictionary_page}
        assert dictionary == {"partition", "file_group", *([OP_FIELD] if written == log else [])}, written


@pytest.mark.parametrize("tail", [16 * 1024, 64], ids=["footer in one read", "footer in two reads"])
def test_a_cold_keyed_lookup_reads_the_footer_then_one_row_group(
    tmp_path: Path, tail: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Footer first, in one ranged read of the file's tail (two when the footer is larger than that
    read), then only the row group whose min / max admit the key: a small share of the file."""
    monkeypatch.setattr(index_partition, "_TAIL_BYTES", tail)
    storage = Storage.from_uri(str(tmp_path))
    spec = record_index.spec(1)
    names = [f"k{i:06d}{secrets.token_hex(16)}" for i in range(10 * ROW_GROUP_ROWS)]  # incompressible
    write_logs(storage, spec, I1, _rows(dict.fromkeys(names, ("p=a", "g1")), OP_UPSERT))
    (entry,) = storage.list_files(spec.directory)
    view = IndexPartitionView.load(storage, spec, visible=frozenset({I1}), as_of=I1)
    with counting() as requests:
        found = view.lookup(pa.array([names[len(names) // 2]]))
    assert found.column("key").to_pylist() == [names[len(names) // 2]]
    assert requests.value().gets == (1 if tail > 1024 else 2) + 1
    assert requests.value().bytes_read < entry.size / 5


def test_a_cold_keyed_lookup_on_s3_is_a_head_and_two_ranged_gets(s3_server: SeaweedS3, s3_root: str) -> None:
    """On a real S3 server: the size (HEAD), the footer (a GET of the tail), one row group (a GET),
    as the server counted them too (it counts a HEAD as a GET, and answers ranged GETs 206)."""
    storage = Storage.from_uri(s3_root)
    bucket = s3_root.removeprefix("s3://").partition("/")[0]
    spec = record_index.spec(1)
    names = [f"k{i:06d}{secrets.token_hex(16)}" for i in range(10 * ROW_GROUP_ROWS)]
    write_logs(storage, spec, I1, _rows(dict.fromkeys(names, ("p=a", "g1")), OP_UPSERT))
    (entry,) = storage.list_files(spec.directory)
    view = IndexPartitionView.load(storage, spec, visible=frozenset({I1}), as_of=I1)
    before = s3_server.request_counts(bucket)
    with counting() as requests:
        found = view.lookup(pa.array([names[7]]))
    served = Counter(s3_server.request_counts(bucket))
    served.subtract(before)
    assert found.column("key").to_pylist() == [names[7]]
    assert (requests.value().lists, requests.value().heads, requests.value().gets) == (0, 1, 2)
    # The server's GETs of the bucket (a LIST of another test's background work may land in between).
    assert {k: v for k, v in served.items() if k[0] == "GET" and v} == {("GET", "200"): 1, ("GET", "206"): 2}
    assert requests.value().bytes_read < entry.size / 5


def test_a_cold_keyed_lookup_of_a_small_file_reads_it_once(history: Storage) -> None:
    """A file no larger than the footer's read is read once, footer and row groups together."""
    view = _view(history, I1)
    with counting() as requests:
        found = view.lookup(pa.array(["k07"]))
    assert _as_dict(found) == {"k07": ("p=a", "g1")}
    (name,) = view.buckets[bucket_of("k07", SPEC.num_buckets)].names
    sizes = {entry.rel: entry.size for entry in history.list_files(SPEC.directory)}
    assert requests.value() == StorageRequests(heads=1, gets=1, bytes_read=sizes[view.rel(name)])


# Every kind of read of an index partition, on a bucket large enough that a keyed read reads the
# file past its tail (a `Storage` file handed to Arrow), not the tail's bytes.
READS_OF_A_LARGE_BUCKET = {
    "whole": lambda view, keys: view.read_all(),
    "cold lookup": lambda view, keys: view.lookup(pa.array([keys[len(keys) // 2]])),
    "scan": lambda view, keys: view.scan(pc.field("key") < keys[100]),
    "estimate": lambda view, keys: view.estimate_fraction(pc.field("key") < keys[100]),
    "compaction": lambda view, keys: compact_bucket(view, 0, I2),
}


@pytest.mark.parametrize("read", list(READS_OF_A_LARGE_BUCKET), ids=list(READS_OF_A_LARGE_BUCKET))
def test_arrow_threads_never_read_or_release_what_python_owns(
    tmp_path: Path, read: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Storage's files are Python objects and so are the bytes it reads whole: every read of them
    and every release of them happens on the thread that reads the index, never on one of Arrow's,
    which would need the GIL for it and, at the interpreter's exit, abort the process (issue 35)."""
    reader = threading.get_ident()
    threads: list[int] = []  # where each read of a file, and each release of a file or bytes, ran

    class Bytes(bytes):
        def __del__(self) -> None:
            threads.append(threading.get_ident())

    class Reads(_CountedReads):
        def read(self, nbytes: int | None = None) -> bytes:
            threads.append(threading.get_ident())
            return super().read(nbytes)

        def __del__(self) -> None:
            threads.append(threading.get_ident())

    storage = Storage.from_uri(str(tmp_path))
    spec = record_index.spec(1)
    keys = [f"k{i:06d}{secrets.token_hex(16)}" for i in range(3 * ROW_GROUP_ROWS)]
    write_logs(storage, spec, I1, _rows(dict.fromkeys(keys, ("p=a", "g1")), OP_UPSERT))
    view = IndexPartitionView.load(storage, spec, visible=frozenset({I1, I2}), as_of=I1)
    read_bytes = Storage.read_bytes
    monkeypatch.setattr(Storage, "read_bytes", lambda self, rel: Bytes(read_bytes(self, rel)))
    monkeypatch.setattr(storage_module, "counted", lambda inner: pa.PythonFile(Reads(inner, current()), "r"))
    for _ in range(30):  # a release is late only now and then
        READS_OF_A_LARGE_BUCKET[read](view, keys)
    assert threads and set(threads) == {reader}


def test_compaction_of_a_file_out_of_key_order_merges_in_memory(
    history: Storage, caplog: pytest.LogCaptureFixture
) -> None:
    before = _view(history, I3)
    bucket, files = next((b, f) for b, f in before.buckets.items() if f.names)
    path = history.path(before.rel(files.names[0]))
    pq.write_table(pq.read_table(path).sort_by([("key", "descending")]), path)
    expected = before.read_bucket(bucket)
    compact_bucket(before, bucket, I4)
    assert _view(history, I4).read_bucket(bucket).equals(expected)
    assert "merged in memory" in caplog.text


def test_compaction_of_an_invisible_instant_is_ignored(history: Storage) -> None:
    before = _view(history, I3)
    for bucket in before.buckets:
        compact_bucket(before, bucket, I4)
    view = _view(history, I4, visible={I1, I2, I3})
    assert all(files.base is None for files in view.buckets.values())
    assert view.read_all().equals(before.read_all())


def _name(kind: str, instant: str) -> IndexFileName:
    return IndexFileName(0, kind, instant)


def test_select_bucket_files() -> None:
    files = [_name("log", I5), _name("base", I2), _name("log", I1), _name("log", I3), _name("base", I4)]
    assert select_bucket_files(files) == BucketFiles(_name("base", I4), (_name("log", I5),))
    assert select_bucket_files([_name("log", I3), _name("log", I1)]) == BucketFiles(
        None, (_name("log", I1), _name("log", I3))
    )
    assert select_bucket_files([_name("base", I2)]) == BucketFiles(_name("base", I2), ())
    assert select_bucket_files([]) == BucketFiles()
    selected = select_bucket_files([_name("log", I6), _name("base", I2), _name("log", I3)])
    assert selected.names == [_name("base", I2), _name("log", I3), _name("log", I6)]


def test_list_index_files_skips_foreign_files(history: Storage) -> None:
    history.write_bytes(f"{SPEC.directory}/.b00001.log.{I4}.parquet.tmp", b"")
    history.write_bytes(f"{SPEC.directory}/notes.txt", b"")
    names = list_index_files(history, SPEC)
    assert names
    assert all(n.instant in {I1, I2, I3} for n in names)


def _data_file(partition: str, group: str, instant: str, size: int = 100) -> DataFile:
    return DataFile(partition, f"{group}_0-1-2_{instant}.parquet", group, instant, size, size // 10)


def test_files_index_changes_round_trip(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    spec = files_index.spec(2)
    g1, g2, g3 = ("0" * 31 + str(i) for i in range(1, 4))
    v1 = [_data_file("city=ams", g1, I1), _data_file("city=ber", g2, I1), _data_file("", g3, I1)]
    write_logs(storage, spec, I1, files_index.changes(v1, []))
    v2 = _data_file("city=ams", g1, I2, size=300)
    write_logs(storage, spec, I2, files_index.changes([v2], [v1[0], v1[2]]))

    def live(as_of: str) -> set[DataFile]:
        view = IndexPartitionView.load(storage, spec, visible=frozenset({I1, I2}), as_of=as_of)
        return set(files_index.from_rows(view.read_all()))

    assert live(I1) == set(v1)
    assert live(I2) == {v2, v1[1]}


def test_files_index_rows_and_json() -> None:
    files = [_data_file("city=ams", "a" * 32, I1), _data_file("", "b" * 32, I2)]
    assert files_index.from_rows(files_index.to_rows(files)) == files
    assert files[0].path == f"city=ams/{'a' * 32}_0-1-2_{I1}.parquet"
    assert files[1].path == files[1].file_name
    for f in files:
        assert DataFile.from_json(f.to_json()) == f
    rows = files_index.changes(files[:1], files[1:])
    assert rows.column(OP_FIELD).to_pylist() == [OP_UPSERT, OP_DELETE]
    assert files_index.from_rows(rows) == files


SECONDARY_TYPES = {
    "string": lambda i: f"v{i:05d}",
    "bigint": lambda i: i - 2000,
    "date": lambda i: date(2000, 1, 1) + timedelta(days=i),
    "decimal(12,2)": lambda i: Decimal(i - 2000).scaleb(-2),
}


@pytest.mark.parametrize("type_name", sorted(SECONDARY_TYPES))
def test_secondary_lookups_cold_and_cached_agree_and_skip_row_groups(tmp_path: Path, type_name: str) -> None:
    storage = Storage.from_uri(str(tmp_path))
    spec = secondary.spec("s", parse_type(type_name), 2)
    value_of = SECONDARY_TYPES[type_name]
    n = 3 * ROW_GROUP_ROWS  # several row groups per bucket, three record keys per value
    rows = pa.table(
        {"secondary_key": [value_of(i // 3) for i in range(n)], "key": [f"r{i}" for i in range(n)]},
        schema=spec.schema,
    )
    buckets = spec.buckets(rows)
    for bucket in (0, 1):
        write_base(storage, spec, bucket, I1, rows.filter(pa.array(buckets == bucket)))
    cold = IndexPartitionView.load(storage, spec, frozenset({I1}), I1)
    cached = IndexPartitionView.load(storage, spec, frozenset({I1}), I1, IndexCache(10**8))
    everything = cold.read_all()
    for values in (
        [value_of(7)],
        [value_of(i) for i in range(0, n // 3, 97)] + [value_of(7), value_of(10**5)],
    ):
        keys = pa.array(values, spec.schema.field("secondary_key").type)
        expected = everything.filter(pc.is_in(everything["secondary_key"], keys)).sort_by("key")
        assert cold.lookup(keys).sort_by("key").equals(expected)
        assert cached.lookup(keys).sort_by("key").equals(expected)
    one = pa.array([value_of(7)], spec.schema.field("secondary_key").type)
    bucket = int(spec.buckets(pa.table({"secondary_key": one}))[0])
    parquet = pq.ParquetFile(storage.path(cold.rel(cold.buckets[bucket].names[0])))
    assert parquet.metadata.num_row_groups > 1
    assert len(_row_groups_with_keys(parquet.metadata, "secondary_key", one)) == 1
    assert _row_groups_with_keys(parquet.metadata, "secondary_key", pa.array([None], one.type)) == []
