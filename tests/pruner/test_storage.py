"""pruner.storage on the local filesystem: path and file:// URIs, atomic publish, put-if-absent
(also on S3, Azure Blob and Cloud Storage, against the session's SeaweedFS, Azurite and
fake-gcs-server servers, with two processes racing on Azure and on GCS), listing (a path that
cannot exist lists as empty, other errors propagate), delete."""

from __future__ import annotations

import base64
import dataclasses
import datetime
import errno
import multiprocessing
import os
import urllib.parse
import uuid
from pathlib import Path
from typing import Any, cast

import google.auth
import google.oauth2.credentials
import pyarrow as pa
import pyarrow.fs as pafs
import pytest
from google.auth import impersonated_credentials
from google.auth.credentials import AnonymousCredentials

from pruner.errors import PutIfAbsentUnsupportedError
from pruner.object_store import GcsTarget
from pruner.storage import GCS_EMULATOR_VARIABLE, FileEntry, Storage, cannot_exist
from tests.support_azure import Azurite
from tests.support_gcs import FakeGcs


class _RecordingFileSystem:
    """Delegates to a real filesystem; records each `move` with the source's content at that moment,
    and can be told to fail the move."""

    def __init__(self, inner: pafs.FileSystem, fail_move: bool = False) -> None:
        self._inner = inner
        self._fail_move = fail_move
        self.moves: list[tuple[str, str, bytes]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def move(self, src: str, dest: str) -> None:
        with self._inner.open_input_stream(src) as stream:
            self.moves.append((src, dest, bytes(stream.read())))
        if self._fail_move:
            raise OSError("simulated rename failure")
        self._inner.move(src, dest)


def _recording(storage: Storage, fail_move: bool = False) -> tuple[Storage, _RecordingFileSystem]:
    fs = _RecordingFileSystem(storage.fs, fail_move)
    return dataclasses.replace(storage, fs=cast(pafs.FileSystem, fs)), fs


def _all_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_local_path(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path) + "/")
    assert storage.is_local
    assert storage.root == str(tmp_path)
    assert storage.uri == str(tmp_path)
    assert storage.path("a/b.txt") == f"{tmp_path}/a/b.txt"
    assert storage.path("") == str(tmp_path)
    assert storage.full_uri("a/b.txt") == f"{tmp_path}/a/b.txt"
    assert storage.full_uri("") == str(tmp_path)


def test_relative_path_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    storage = Storage.from_uri("lake/t1")
    assert storage.root == str(tmp_path / "lake" / "t1")
    storage.write_bytes("x", b"1")
    assert (tmp_path / "lake" / "t1" / "x").read_bytes() == b"1"


def test_file_uri_and_path_reach_the_same_files(tmp_path: Path) -> None:
    by_uri = Storage.from_uri(f"file://{tmp_path}")
    by_path = Storage.from_uri(str(tmp_path))
    assert by_uri.is_local
    assert by_uri.root == str(tmp_path)
    assert by_uri.full_uri("a/b") == f"file://{tmp_path}/a/b"
    by_uri.write_bytes("dir/f.bin", b"\x00\x01")
    assert by_path.read_bytes("dir/f.bin") == b"\x00\x01"
    assert by_path.list_files("dir") == by_uri.list_files("dir") == [FileEntry("dir/f.bin", 2)]
    hadoop = Storage.from_uri(f"file:{tmp_path}")  # Spark's catalog writes locations so
    assert hadoop.is_local and hadoop.root == str(tmp_path)
    assert hadoop.read_bytes("dir/f.bin") == b"\x00\x01"


def test_write_read_exists_is_dir(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    assert not storage.exists("a/b/c.txt")
    storage.write_bytes("a/b/c.txt", b"hello")
    assert storage.read_bytes("a/b/c.txt") == b"hello"
    assert storage.exists("a/b/c.txt")
    assert not storage.is_dir("a/b/c.txt")
    assert storage.is_dir("a/b")
    assert not storage.is_dir("missing")
    storage.write_bytes("a/b/c.txt", b"hi")
    assert storage.read_bytes("a/b/c.txt") == b"hi"


def test_output_stream_and_input_file(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    with storage.open_output_stream("deep/er/f.bin") as sink:
        sink.write(b"0123456789")
    with storage.open_input_file("deep/er/f.bin") as source:
        assert source.size() == 10
        source.seek(4)
        assert source.read(3) == b"456"


@pytest.mark.parametrize("rel", ["top.json", "meta/timeline/20240101000000000.commit.completed"])
def test_publish_writes_a_temp_file_in_the_same_directory_then_renames(tmp_path: Path, rel: str) -> None:
    storage, fs = _recording(Storage.from_uri(str(tmp_path)))
    storage.publish(rel, b"first")
    storage.publish(rel, b"second")
    assert storage.read_bytes(rel) == b"second"
    assert len(fs.moves) == 2
    for (src, dest, content), expected in zip(fs.moves, [b"first", b"second"], strict=True):
        assert dest == storage.path(rel)
        assert content == expected  # complete before it becomes visible under its name
        assert os.path.dirname(src) == os.path.dirname(dest)
        assert os.path.basename(src).startswith(".")
    assert _all_files(tmp_path) == [rel]


def test_publish_failure_removes_the_temp_file_and_keeps_the_old_content(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    storage.publish("meta/state.json", b"old")
    failing, fs = _recording(storage, fail_move=True)
    with pytest.raises(OSError, match="simulated"):
        failing.publish("meta/state.json", b"new")
    assert len(fs.moves) == 1
    assert storage.read_bytes("meta/state.json") == b"old"
    assert _all_files(tmp_path) == ["meta/state.json"]


def test_list_files(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    for rel, data in [("d/b.txt", b"bb"), ("d/a.txt", b"a"), ("d/sub/c.txt", b"ccc"), ("top.txt", b"")]:
        storage.write_bytes(rel, data)
    (tmp_path / "d" / "emptydir").mkdir()
    assert storage.list_files("d") == [FileEntry("d/a.txt", 1), FileEntry("d/b.txt", 2)]
    assert storage.list_files("d", recursive=True) == [
        FileEntry("d/a.txt", 1),
        FileEntry("d/b.txt", 2),
        FileEntry("d/sub/c.txt", 3),
    ]
    assert storage.list_files("", recursive=True)[-1] == FileEntry("top.txt", 0)
    assert storage.list_files("missing") == []
    assert storage.list_files("missing/deeper", recursive=True) == []


def test_a_directory_that_cannot_exist_lists_as_empty(tmp_path: Path) -> None:
    """A 300-byte name is over the 255-byte name limit: no such directory can exist, so it holds
    no files (the file system says ENAMETOOLONG, not "not found")."""
    storage = Storage.from_uri(str(tmp_path))
    storage.write_bytes("d/f.txt", b"x")
    impossible = "d/" + "a" * 300
    with pytest.raises(OSError) as raised:
        storage.write_bytes(f"{impossible}/f.txt", b"x")
    assert raised.value.errno == errno.ENAMETOOLONG
    assert storage.list_files(impossible) == []
    assert storage.list_files(impossible, recursive=True) == []
    assert storage.list_files(f"{impossible}/deeper") == []
    assert storage.list_dirs(impossible) == []
    assert not storage.exists(impossible) and not storage.is_dir(impossible)
    assert not storage.exists(f"{impossible}/f.txt")
    assert storage.list_files("d") == [FileEntry("d/f.txt", 1)]


class _FailingListing:
    """Delegates to a real filesystem, but every listing fails with the given error."""

    def __init__(self, inner: pafs.FileSystem, error: OSError) -> None:
        self._inner = inner
        self._error = error

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def get_file_info(self, what: object) -> Any:
        if isinstance(what, pafs.FileSelector):
            raise self._error
        return self._inner.get_file_info(what)


class _FailingStat(_FailingListing):
    """... and so does every stat of a single path."""

    def get_file_info(self, what: object) -> Any:
        raise self._error


@pytest.mark.parametrize(
    "error",
    [
        OSError(errno.EACCES, "Permission denied"),
        OSError(errno.EIO, "Input/output error"),
        OSError("AWS Error NETWORK_CONNECTION during ListObjectsV2 operation: curlCode: 28, Timeout"),
    ],
)
def test_other_listing_errors_propagate(tmp_path: Path, error: OSError) -> None:
    """Only an impossible path lists as empty: a listing that failed may have missed files (an
    endpoint that did not answer is said so, `StorageUnreachableError`, an OSError too)."""
    storage = Storage.from_uri(str(tmp_path))
    failing = dataclasses.replace(storage, fs=cast(pafs.FileSystem, _FailingListing(storage.fs, error)))
    assert not cannot_exist(error)
    with pytest.raises(OSError) as raised:
        failing.list_files("d")
    assert error in (raised.value, raised.value.__cause__)
    with pytest.raises(OSError):
        failing.list_dirs("d")
    failing_stat = dataclasses.replace(storage, fs=cast(pafs.FileSystem, _FailingStat(storage.fs, error)))
    with pytest.raises(OSError):
        failing_stat.exists("d")


@pytest.mark.parametrize(
    "error",
    [
        OSError(errno.ENAMETOOLONG, "File name too long"),
        OSError("AWS Error UNKNOWN (HTTP status 400) during ListObjectsV2 operation: KeyTooLongError"),
        OSError(
            "HDFS list directory failed: org.apache.hadoop.hdfs.protocol.FSLimitException$"
            "PathComponentTooLongException: The maximum path component name limit"
        ),
    ],
)
def test_impossible_paths_as_each_storage_reports_them(tmp_path: Path, error: OSError) -> None:
    storage = Storage.from_uri(str(tmp_path))
    failing = dataclasses.replace(storage, fs=cast(pafs.FileSystem, _FailingListing(storage.fs, error)))
    assert cannot_exist(error)
    assert failing.list_files("d") == [] and failing.list_dirs("d") == []


class _ContentGoneOnOpen(_FailingListing):
    """... whose opened files come back closed, as Arrow's Cloud Storage file system returns a file
    whose object was removed between reading its metadata and opening its content."""

    def __init__(self, inner: pafs.FileSystem) -> None:
        super().__init__(inner, OSError("unused"))

    def get_file_info(self, what: object) -> Any:
        return self._inner.get_file_info(what)

    def open_input_file(self, path: str) -> pa.NativeFile:
        opened = self._inner.open_input_file(path)
        opened.close()
        return opened


def test_a_file_whose_content_cannot_be_opened_is_an_os_error(tmp_path: Path) -> None:
    """Not the `ValueError` a read of a closed file raises: callers retry `OSError`s (the writer
    lock's reader does), and storage errors are translated, never a closed file's."""
    storage = Storage.from_uri(str(tmp_path))
    storage.write_bytes("lock.json", b"{}")
    gone = dataclasses.replace(storage, fs=cast(pafs.FileSystem, _ContentGoneOnOpen(storage.fs)))
    with pytest.raises(OSError, match="content could not be opened") as raised:
        gone.read_bytes("lock.json")
    assert storage.full_uri("lock.json") in str(raised.value)


def test_delete(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    storage.write_bytes("x/1", b"1")
    storage.write_bytes("x/2", b"2")
    storage.delete("x/1")
    assert not storage.exists("x/1")
    storage.delete("x/1")  # already gone
    storage.delete("never/existed")
    assert storage.delete_many(["x/2", "x/3"]) == 2
    assert storage.list_files("x") == []


def test_child(tmp_path: Path) -> None:
    parent = Storage.from_uri(f"file://{tmp_path}")
    child = parent.child("a/b")
    assert child.root == f"{tmp_path}/a/b"
    assert child.uri == f"file://{tmp_path}/a/b"
    assert child.full_uri("f") == f"file://{tmp_path}/a/b/f"
    child.write_bytes("c/f.txt", b"x")
    assert parent.read_bytes("a/b/c/f.txt") == b"x"
    assert child.list_files("c") == [FileEntry("c/f.txt", 1)]
    assert parent.child("").root == parent.root


def test_put_if_absent_creates_once_and_keeps_the_first_content(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    assert storage.put_if_absent("meta/timeline/x.completed", b"first")
    assert not storage.put_if_absent("meta/timeline/x.completed", b"second")
    assert storage.read_bytes("meta/timeline/x.completed") == b"first"
    assert storage.put_if_absent("top.json", b"")
    assert storage.read_bytes("top.json") == b""
    assert _all_files(tmp_path) == ["meta/timeline/x.completed", "top.json"]  # no temp file left


def test_put_if_absent_does_not_replace_a_file_written_otherwise(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    storage.write_bytes("lock.json", b"theirs")
    assert not storage.put_if_absent("lock.json", b"mine")
    assert storage.read_bytes("lock.json") == b"theirs"
    assert _all_files(tmp_path) == ["lock.json"]


def test_put_if_absent_makes_the_file_appear_whole(tmp_path: Path) -> None:
    """The content is complete in a hidden temp file before the final name exists: a reader never
    sees a partial file (unlike an exclusive create that writes after creating)."""
    storage = Storage.from_uri(str(tmp_path))
    seen: list[tuple[str, bytes, bool]] = []
    real_link = os.link

    def recording_link(src: str, dest: str) -> None:
        with open(src, "rb") as handle:
            seen.append((os.path.basename(src), handle.read(), os.path.exists(dest)))
        real_link(src, dest)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "link", recording_link)
        assert storage.put_if_absent("d/f.json", b"payload")
    [(name, content, existed)] = seen
    assert name.startswith(".f.json.") and content == b"payload" and not existed
    assert _all_files(tmp_path) == ["d/f.json"]


def test_put_if_absent_is_refused_where_it_cannot_be_done(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    other = dataclasses.replace(storage, fs=cast(pafs.FileSystem, _NamedFileSystem(storage.fs, "hdfs")))
    with pytest.raises(PutIfAbsentUnsupportedError, match="cannot create a file only-if-absent on hdfs"):
        other.put_if_absent("lock.json", b"x")
    assert _all_files(tmp_path) == []


class _NamedFileSystem:
    """Delegates to a real filesystem but reports another type name."""

    def __init__(self, inner: pafs.FileSystem, type_name: str) -> None:
        self._inner = inner
        self.type_name = type_name

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _assert_put_if_absent_creates_once(storage: Storage) -> None:
    assert not storage.is_local
    assert storage.put_if_absent(".lakeprune/timeline/1.commit.completed", b"first")
    assert not storage.put_if_absent(".lakeprune/timeline/1.commit.completed", b"second")
    assert storage.read_bytes(".lakeprune/timeline/1.commit.completed") == b"first"
    storage.write_bytes("written.json", b"by pyarrow")
    assert not storage.put_if_absent("written.json", b"mine")
    assert storage.read_bytes("written.json") == b"by pyarrow"
    assert storage.list_files("", recursive=True) == [
        FileEntry(".lakeprune/timeline/1.commit.completed", 5),
        FileEntry("written.json", 10),
    ]


def test_put_if_absent_on_s3(s3_root: str) -> None:
    _assert_put_if_absent_creates_once(Storage.from_uri(s3_root))


def test_put_if_absent_on_azure(azure_storage: Storage) -> None:
    _assert_put_if_absent_creates_once(azure_storage)


def test_put_if_absent_on_gcs(gcs_storage: Storage) -> None:
    assert gcs_storage.fs.type_name == "gcs"
    _assert_put_if_absent_creates_once(gcs_storage)


def _contend(storage: Storage, rels: list[str], name: str, barrier: Any, results: Any) -> None:
    """In a child process: for each path, wait for the other contender, then try to create it."""
    wins = []
    for rel in rels:
        barrier.wait(timeout=60)
        if storage.put_if_absent(rel, name.encode()):
            wins.append(rel)
    results.put((name, wins))


@pytest.mark.parametrize(
    "store",
    [
        pytest.param("azure_storage", marks=pytest.mark.azure),
        pytest.param("gcs_storage", marks=pytest.mark.gcs),
    ],
)
def test_concurrent_put_if_absent_has_one_winner(store: str, request: pytest.FixtureRequest) -> None:
    """Two processes race for each of 10 paths, started together each time: exactly one creates
    each path, and the path holds the winner's content."""
    storage: Storage = request.getfixturevalue(store)
    rels = [f"meta/timeline/{i}.commit.completed" for i in range(10)]
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    results = ctx.Queue()
    processes = [
        ctx.Process(target=_contend, args=(storage, rels, name, barrier, results)) for name in ("a", "b")
    ]
    for process in processes:
        process.start()
    outcome = dict(results.get(timeout=120) for _ in processes)
    for process in processes:
        process.join(timeout=30)
        assert process.exitcode == 0
    assert sorted(outcome["a"] + outcome["b"]) == sorted(rels)  # each path won once, none twice
    for name, wins in outcome.items():
        for rel in wins:
            assert storage.read_bytes(rel) == name.encode()


def test_azure_errors_name_the_object_and_never_the_secret(azure_server: Azurite) -> None:
    storage = azure_server.storage("lakeprune-tests", uuid.uuid4().hex)
    wrong_key = base64.b64encode(b"x" * 32).decode()
    wrong = dataclasses.replace(storage, fs=azure_server.filesystem(key=wrong_key))
    with pytest.raises(OSError) as raised:
        wrong.put_if_absent("f.json", b"x")
    message = str(raised.value)
    assert message.startswith(f"conditional PUT of abfs://{storage.root}/f.json failed: ")
    assert "\n" not in message
    assert wrong_key not in message and azure_server.key not in message
    assert not storage.exists("f.json")


def test_azure_key_in_the_uri_reaches_the_conditional_put(azure_server: Azurite) -> None:
    """A file system pyarrow made from an `abfs://account:key@host:port/...` URI does not repeat
    the key in its options: the conditional PUT takes it from the URI; refusals never show it."""
    root = f"lakeprune-tests/{uuid.uuid4().hex}"
    key = urllib.parse.quote(azure_server.key, safe="")
    uri = f"abfs://{azure_server.account}:{key}@{azure_server.authority}/{root}?enable_tls=false"
    storage = Storage.from_uri(uri)
    assert storage.root == root
    assert storage.put_if_absent("lock.json", b"mine")
    assert not storage.put_if_absent("lock.json", b"theirs")
    assert azure_server.storage("lakeprune-tests", root.partition("/")[2]).read_bytes("lock.json") == b"mine"
    other = dataclasses.replace(storage, fs=cast(pafs.FileSystem, _NamedFileSystem(storage.fs, "hdfs")))
    with pytest.raises(PutIfAbsentUnsupportedError) as raised:
        other.put_if_absent("lock.json", b"x")
    assert str(raised.value).startswith(f"abfs://{azure_server.account}:***@{azure_server.authority}/")
    assert key not in str(raised.value) and azure_server.key not in str(raised.value)


def test_gcs_errors_name_the_object_and_never_the_token(gcs_server: FakeGcs) -> None:
    """A failed conditional create (here: no such bucket) is one line naming the object, without
    the access token the file system signs in with."""
    token = "ya29." + uuid.uuid4().hex
    fs = pafs.GcsFileSystem(
        access_token=token,
        credential_token_expiration=datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=1),
        scheme="http",
        endpoint_override=gcs_server.address.removeprefix("http://"),
    )
    storage = Storage(fs=fs, root="no-such-bucket/t", uri="gs://no-such-bucket/t")
    with pytest.raises(OSError) as raised:
        storage.put_if_absent("f.json", b"x")
    message = str(raised.value)
    assert message.startswith("conditional PUT of gs://no-such-bucket/t/f.json failed: NotFound: 404 ")
    assert "\n" not in message and token not in message


@pytest.mark.parametrize("address", ["http://127.0.0.1:4443", "127.0.0.1:4443", "https://gcs.test:8443/"])
def test_a_gcs_uri_goes_to_the_emulator_the_variable_names(
    address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As Google's own clients: `STORAGE_EMULATOR_HOST` (plain HTTP without a scheme) redirects
    `gs://` URIs, signed in anonymously; the conditional creates go where the file system goes."""
    monkeypatch.setenv(GCS_EMULATOR_VARIABLE, address)
    storage = Storage.from_uri("gs://bucket/table")
    assert (storage.root, storage.uri) == ("bucket/table", "gs://bucket/table")
    options = storage.fs.__reduce__()[1][0]
    scheme, endpoint = (
        ("https", "gcs.test:8443") if address.startswith("https") else ("http", "127.0.0.1:4443")
    )
    assert (options["scheme"], options["endpoint_override"], options["anonymous"]) == (scheme, endpoint, True)
    assert storage._gcs_target() == GcsTarget(scheme=scheme, endpoint=endpoint, anonymous=True)
    assert Storage.from_uri(str(Path("/tmp/x"))).is_local  # the variable touches gs:// URIs only


def test_gcs_credentials_follow_the_file_system(monkeypatch: pytest.MonkeyPatch) -> None:
    """The conditional creates sign in as pyarrow's GcsFileSystem would: anonymously, with its
    access token, impersonating its service account, or else with Application Default Credentials;
    the endpoint is always explicit (Google's unless the file system overrides it)."""
    assert isinstance(GcsTarget(anonymous=True).credentials(), AnonymousCredentials)
    token = GcsTarget(access_token="ya29.token").credentials()
    assert isinstance(token, google.oauth2.credentials.Credentials) and token.token == "ya29.token"
    assert "ya29.token" not in repr(GcsTarget(access_token="ya29.token"))
    source = AnonymousCredentials()
    monkeypatch.setattr(google.auth, "default", lambda scopes: (source, None))
    impersonated = GcsTarget(target_service_account="writer@p.iam.gserviceaccount.com").credentials()
    assert isinstance(impersonated, impersonated_credentials.Credentials)
    assert impersonated._target_principal == "writer@p.iam.gserviceaccount.com"
    assert isinstance(impersonated._source_credentials, AnonymousCredentials)  # a scoped copy of `source`
    assert GcsTarget().credentials() is None
    assert GcsTarget().api_endpoint == "https://storage.googleapis.com"
    assert GcsTarget(scheme="http", endpoint="127.0.0.1:1").api_endpoint == "http://127.0.0.1:1"


def test_s3_errors_name_the_object_and_never_the_secret(
    s3_root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = Storage.from_uri(s3_root)
    secret = "wrong-" + os.environ["AWS_SECRET_ACCESS_KEY"]
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    with pytest.raises(OSError) as raised:
        storage.put_if_absent("f.json", b"x")
    message = str(raised.value)
    assert message.startswith(f"conditional PUT of {s3_root}/f.json failed: PermissionDeniedError")
    assert "\n" not in message
    assert secret not in message and os.environ["AWS_ACCESS_KEY_ID"] not in message


class _ListingRacesWithMkdir(_FailingListing):
    """Delegates to a real filesystem, but the first `failures` listings raise FileNotFoundError,
    as pyarrow does for a directory another writer creates while it is being listed."""

    def __init__(self, inner: pafs.FileSystem, failures: int) -> None:
        super().__init__(inner, FileNotFoundError(errno.ENOENT, "Cannot list directory"))
        self.failures = failures

    def get_file_info(self, what: object) -> Any:
        if isinstance(what, pafs.FileSelector) and self.failures > 0:
            self.failures -= 1
            raise self._error
        return self._inner.get_file_info(what)


def test_a_listing_that_races_with_a_mkdir_is_made_again(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    storage.write_bytes("d/f.txt", b"x")
    racing = _ListingRacesWithMkdir(storage.fs, failures=2)
    flaky = dataclasses.replace(storage, fs=cast(pafs.FileSystem, racing))
    assert flaky.list_files("d") == [FileEntry("d/f.txt", 1)]
    assert racing.failures == 0
    always = dataclasses.replace(storage, fs=cast(pafs.FileSystem, _ListingRacesWithMkdir(storage.fs, 3)))
    with pytest.raises(FileNotFoundError):
        always.list_files("d")
