"""Storage requests are counted where `Storage` makes them, per kind, into the totals and every
`counting()` scope open in the calling context: scopes nest, concurrent threads count only their
own requests, and a file keeps counting into the scopes it was opened in whichever thread reads it."""

from __future__ import annotations

import threading
from pathlib import Path

from pruner.storage import Storage
from pruner.storage_requests import TOTALS, StorageRequests, counting


def test_each_kind_is_counted_with_the_bytes_read(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    storage.write_bytes("d/a.bin", b"x" * 100)
    with counting() as requests:
        storage.list_files("d")
        assert storage.exists("d/a.bin")
        assert storage.read_bytes("d/a.bin") == b"x" * 100
        with storage.open_input_file("d/a.bin") as source:
            source.seek(90)
            assert source.read(10) == b"x" * 10
    assert requests.value() == StorageRequests(lists=1, heads=3, gets=2, bytes_read=110)


def test_scopes_nest_and_the_totals_see_everything(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    storage.write_bytes("a.bin", b"abc")
    before = TOTALS.value()
    with counting() as outer:
        storage.read_bytes("a.bin")
        with counting() as inner:
            storage.read_bytes("a.bin")
    assert inner.value() == StorageRequests(heads=1, gets=1, bytes_read=3)
    assert outer.value() == StorageRequests(heads=2, gets=2, bytes_read=6)
    after = TOTALS.value()
    assert after.gets - before.gets >= 2 and after.bytes_read - before.bytes_read >= 6


def test_concurrent_threads_count_only_their_own_requests(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    for n in range(4):
        storage.write_bytes(f"f{n}.bin", b"y" * (n + 1))
    counted: dict[int, StorageRequests] = {}
    start = threading.Barrier(4)

    def work(n: int) -> None:
        with counting() as requests:
            start.wait()
            for _ in range(50 * (n + 1)):
                storage.read_bytes(f"f{n}.bin")
            counted[n] = requests.value()

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for n in range(4):
        reads = 50 * (n + 1)
        assert counted[n] == StorageRequests(heads=reads, gets=reads, bytes_read=reads * (n + 1))


def test_a_file_counts_into_the_scope_it_was_opened_in_from_any_thread(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    storage.write_bytes("a.bin", b"z" * 10)
    with counting() as requests:
        source = storage.open_input_file("a.bin")
    reader = threading.Thread(target=lambda: source.read(4))
    reader.start()
    reader.join()
    source.close()
    assert requests.value() == StorageRequests(heads=1, gets=1, bytes_read=4)
