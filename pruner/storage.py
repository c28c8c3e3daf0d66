"""Storage access for one table (or warehouse) root through `pyarrow.fs`, so that local paths and
object-store URIs (s3://, gs://, hdfs://, abfs://) share one code path. Paths handed to `Storage`
methods are relative to the root and use `/`. Two writes make a file appear whole: `publish`
(replaces: temp + rename where rename is atomic, else one PUT) for files that are legitimately
rewritten, and `put_if_absent` (creates only; False when the file exists) for files that exactly
one writer may create (the writer lock, a new table's `table.json`, the timeline's state files):
a hard link of a hidden temp file on local disks, a conditional PUT (`pruner.object_store`) on
S3, Azure Blob and Google Cloud Storage, and a `PutIfAbsentUnsupportedError` on other backends
(HDFS), never a check-then-write. A `gs://` URI goes to the emulator that `STORAGE_EMULATOR_HOST`
names, signed in anonymously, when that variable is set (as Google's own clients do; pyarrow does
not read it). A path that cannot exist on the filesystem (`cannot_exist`: a name over the
file system's limit, a key over the object store's) does not exist and, as a directory, lists
nothing; a listing that raced with another writer's mkdir is made again. A location is opened,
and every storage error of a method is translated, by `pruner.storage_failures` (bounded waits for
endpoints that do not answer; an unknown scheme, an unreachable endpoint or a location that refuses
a change is a one-line lakeprune error); every other storage error propagates. A file whose content
cannot be opened is an `OSError` on every backend (Cloud Storage would hand back a closed file).

Every read made through a `Storage` (listings, file infos, opens, byte ranges read) is counted in
`pruner.storage_requests`, here and nowhere else: readers go through these methods (an opened file
counts its own reads), never through `fs` directly."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import urllib.parse
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.fs as pafs

from pruner.errors import PutIfAbsentUnsupportedError
from pruner.object_store import (
    AzureTarget,
    GcsTarget,
    azure_put_if_absent,
    gcs_put_if_absent,
    s3_put_if_absent,
)
from pruner.storage_failures import (
    bounded,
    open_filesystem,
    s3_endpoint_of,
    translate,
    uri_password,
    without_password,
)
from pruner.storage_requests import RequestKind, counted, record

# How often a listing that raced with another writer's mkdir / rmdir is made before giving up.
_LIST_ATTEMPTS = 3
# Filesystems whose `move` is an atomic rename of a single file.
_ATOMIC_RENAME = ("local", "hdfs")
# How storage layers without an errno say that a path is impossible (not merely absent): S3's error
# code for a key over 1,024 bytes, HDFS's exception for a component over its name limit.
_IMPOSSIBLE_PATH_MARKERS = ("KeyTooLongError", "PathComponentTooLongException")
# The variable with which Google's clients reach a Cloud Storage emulator: `[http://]HOST:PORT`.
GCS_EMULATOR_VARIABLE = "STORAGE_EMULATOR_HOST"
# The name of a temporary file of `publish` / `put_if_absent` (`Storage._write_hidden_temp`).
_HIDDEN_TEMP_RE = re.compile(r"\..+\.[0-9a-f]{32}\.tmp")


def cannot_exist(exc: OSError) -> bool:
    """Whether a storage error says the path itself can never exist (too long for the file system
    or the object store), as opposed to failing to reach or read something that may exist."""
    return exc.errno == errno.ENAMETOOLONG or any(m in str(exc) for m in _IMPOSSIBLE_PATH_MARKERS)


def _gcs_emulator(address: str) -> pafs.GcsFileSystem:
    """pyarrow's file system for the Cloud Storage emulator at `address` (`[SCHEME://]HOST:PORT`,
    plain HTTP when no scheme is given, as Google's clients take it), signed in anonymously."""
    scheme, _, endpoint = address.rpartition("://")
    return pafs.GcsFileSystem(anonymous=True, scheme=scheme or "http", endpoint_override=endpoint.rstrip("/"))


def is_hidden_temp(name: str) -> bool:
    """Whether a file name is that of a temporary file `publish` or `put_if_absent` writes beside
    its target on local disks and HDFS. Both remove it before they return, but a process killed in
    between leaves it behind: the target complete or not there, and the temporary file an orphan
    that only whoever may write that directory can tell from one being written."""
    return _HIDDEN_TEMP_RE.fullmatch(name) is not None


@dataclass(frozen=True)
class FileEntry:
    """A file under the root: its relative path, size in bytes and, when the listing said, its
    modification time (nanoseconds since the epoch; object stores keep it to the second)."""

    rel: str
    size: int
    modified_ns: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Storage:
    """A filesystem plus a root directory inside it."""

    fs: pafs.FileSystem
    root: str
    uri: str

    @classmethod
    def from_uri(cls, uri: str) -> Storage:
        """Resolve a local path or a filesystem URI to a Storage rooted there. Hadoop's qualified
        local path `file:/abs/path` (how Spark's catalog names a table's LOCATION) is the local
        path `/abs/path`."""
        if uri.startswith("file:/") and not uri.startswith("file://"):
            uri = uri.removeprefix("file:")
        if "://" not in uri:
            uri = os.path.abspath(os.path.expanduser(uri))
        fs, root = open_filesystem(uri)
        emulator = os.environ.get(GCS_EMULATOR_VARIABLE)
        if emulator and fs.type_name == "gcs":
            fs = bounded(_gcs_emulator(emulator))
        return cls(fs=fs, root=root.rstrip("/") or "/", uri=uri.rstrip("/"))

    def child(self, rel: str) -> Storage:
        """A Storage rooted at a subdirectory."""
        return Storage(fs=self.fs, root=self.path(rel), uri=self.full_uri(rel))

    def path(self, rel: str) -> str:
        """The path of `rel` inside the filesystem."""
        return f"{self.root}/{rel}" if rel else self.root

    def full_uri(self, rel: str) -> str:
        """The URI (or absolute local path) of `rel`, for engines and users."""
        return f"{self.uri}/{rel}" if rel else self.uri

    @property
    def is_local(self) -> bool:
        return bool(self.fs.type_name == "local")

    def exists(self, rel: str) -> bool:
        """Whether `rel` exists; False for a path that cannot exist."""
        return bool(self._info(rel) != pafs.FileType.NotFound)

    def is_dir(self, rel: str) -> bool:
        return bool(self._info(rel) == pafs.FileType.Directory)

    def file_types(self, rels: list[str]) -> list[pafs.FileType]:
        """The type of each path in `rels` (NotFound for one that does not exist)."""
        for _ in rels:
            record(RequestKind.HEAD)
        with self._failing(rels[0] if rels else ""):
            return [info.type for info in self.fs.get_file_info([self.path(rel) for rel in rels])]

    def _info(self, rel: str) -> pafs.FileType:
        record(RequestKind.HEAD)
        with self._failing(rel):
            try:
                return self.fs.get_file_info(self.path(rel)).type
            except OSError as exc:
                if cannot_exist(exc):
                    return pafs.FileType.NotFound
                raise

    def read_bytes(self, rel: str) -> bytes:
        """The whole file: one open (its size) and one read."""
        with self._failing(rel), self.open_input_file(rel) as source:
            return bytes(source.read())

    def write_bytes(self, rel: str, data: bytes) -> None:
        """Write a file, creating parent directories. Not atomic: use `publish` for that."""
        with self._failing(rel, "write"):
            self._write(rel, data)

    def _write(self, rel: str, data: bytes) -> None:
        self._ensure_parent(rel)
        with self.fs.open_output_stream(self.path(rel)) as stream:
            stream.write(data)

    def publish(self, rel: str, data: bytes) -> None:
        """Make `rel` appear with `data` all at once.

        Local and HDFS: write a hidden temporary file and rename it. Object stores: a single PUT,
        which is visible whole or not at all."""
        with self._failing(rel, "write"):
            if self.fs.type_name not in _ATOMIC_RENAME:
                self._write(rel, data)
                return
            tmp = self._write_hidden_temp(rel, data)
            try:
                self.fs.move(self.path(tmp), self.path(rel))
            except BaseException:
                self.delete(tmp)
                raise

    def put_if_absent(self, rel: str, data: bytes) -> bool:
        """Create `rel` with `data` unless it exists: True when this call created it, False when
        the file was already there (another writer won; the file is left as it was). The file
        appears whole or not at all. Of any number of concurrent calls for one path, at most one
        returns True.

        Local disks: a hidden temporary file in the same directory, hard-linked to the final name
        (the link fails if the name exists), then unlinked. S3 and Azure Blob: one PUT with
        `If-None-Match: *`, through a client configured as `fs` is. Other backends raise
        `PutIfAbsentUnsupportedError`."""
        with self._failing(rel, "write"):
            if self.is_local:
                return self._link_if_absent(rel, data)
            bucket, _, key = self.path(rel).partition("/")
            if self.fs.type_name == "s3":
                region = str(getattr(self.fs, "region", "") or "")
                return s3_put_if_absent(bucket, key, data, region=region)
            if self.fs.type_name == "abfs":
                return azure_put_if_absent(self._azure_target(), bucket, key, data)
            if self.fs.type_name == "gcs":
                return gcs_put_if_absent(self._gcs_target(), bucket, key, data)
        raise PutIfAbsentUnsupportedError(
            f"{without_password(self.full_uri(rel))}: lakeprune cannot create a file only-if-absent "
            f"on {self.fs.type_name} storage yet (local disks, s3://, abfs:// and gs:// can), so it "
            "cannot commit there safely"
        )

    def _gcs_target(self) -> GcsTarget:
        """The endpoint and credentials of this `GcsFileSystem`, from its options."""
        options = self.fs.__reduce__()[1][0]
        return GcsTarget(
            scheme=options["scheme"] or "https",
            endpoint=options["endpoint_override"] or "",
            anonymous=bool(options["anonymous"]),
            access_token=options["access_token"] or "",
            target_service_account=options["target_service_account"] or "",
            project_id=options["project_id"] or "",
        )

    def _azure_target(self) -> AzureTarget:
        """The account, endpoint and key of this `AzureFileSystem`: from its options, and the key
        from the URI's password when pyarrow made the file system from such a URI (its options
        then do not repeat the key)."""
        options = self.fs.__reduce__()[1][0]
        return AzureTarget(
            account=options["account_name"],
            authority=options["blob_storage_authority"] or ".blob.core.windows.net",
            scheme=options["blob_storage_scheme"] or "https",
            account_key=options["account_key"] or urllib.parse.unquote(uri_password(self.uri)),
            sas_token=options["sas_token"],
            tenant_id=options["tenant_id"],
            client_id=options["client_id"],
            client_secret=options["client_secret"],
        )

    def _endpoint(self) -> str:
        """The service this storage's requests go to, for messages (never a credential)."""
        if self.fs.type_name == "s3":
            return s3_endpoint_of(self.fs.__reduce__()[1][0], self.root.partition("/")[0])
        if self.fs.type_name == "gcs":
            return self._gcs_target().api_endpoint
        if self.fs.type_name == "abfs":
            return self._azure_target().endpoint
        return without_password(self.uri)

    @contextlib.contextmanager
    def _failing(self, rel: str, change: str | None = None) -> Iterator[None]:
        """A storage error of the block, an operation on `rel`, becomes the lakeprune error that
        `storage_failures.translate` makes of it, if any; `change` is the operation's verb when it
        changes storage ("write", "move", "delete")."""
        try:
            yield
        except OSError as exc:
            failure = translate(exc, without_password(self.full_uri(rel)), self._endpoint, change)
            if failure is None:
                raise
            raise failure from exc

    def _link_if_absent(self, rel: str, data: bytes) -> bool:
        tmp = self._write_hidden_temp(rel, data)
        try:
            os.link(self.path(tmp), self.path(rel))
        except FileExistsError:
            return False
        finally:
            self.delete(tmp)
        return True

    def _write_hidden_temp(self, rel: str, data: bytes) -> str:
        """Write `data` to a uniquely named hidden file beside `rel`; return its relative path."""
        parent, _, name = rel.rpartition("/")
        hidden = f".{name}.{uuid.uuid4().hex}.tmp"
        tmp = f"{parent}/{hidden}" if parent else hidden
        self._write(tmp, data)
        return tmp

    def open_input_file(self, rel: str) -> pa.NativeFile:
        """A random-access file: opening it asks for its size (a HEAD on object stores), each read
        is one request (a ranged GET); both are counted."""
        record(RequestKind.HEAD)
        with self._failing(rel):
            opened = self.fs.open_input_file(self.path(rel))
            if opened.closed:
                # Cloud Storage: the object's metadata was read but its content stream did not
                # open (typically: the object was removed in between); a read would raise
                # ValueError. An OSError, like every other failed read, lets callers retry.
                raise OSError(errno.EIO, "the file's content could not be opened", self.full_uri(rel))
            return counted(opened)

    def open_output_stream(self, rel: str) -> pa.NativeFile:
        with self._failing(rel, "write"):
            self._ensure_parent(rel)
            return self.fs.open_output_stream(self.path(rel))

    def list_files(self, rel_dir: str, recursive: bool = False) -> list[FileEntry]:
        """Files (not directories) under `rel_dir`; empty when it does not or cannot exist."""
        prefix = self.root.rstrip("/") + "/"
        entries = []
        for info in self._list(rel_dir, recursive):
            if info.type == pafs.FileType.File:
                entries.append(FileEntry(info.path[len(prefix) :], int(info.size), info.mtime_ns))
        return sorted(entries, key=lambda e: e.rel)

    def list_dirs(self, rel_dir: str) -> list[str]:
        """Names of the directories directly under `rel_dir`, sorted; empty when it does not or
        cannot exist."""
        infos = self._list(rel_dir, recursive=False)
        return sorted(info.base_name for info in infos if info.type == pafs.FileType.Directory)

    def _list(self, rel_dir: str, recursive: bool) -> list[pafs.FileInfo]:
        """The listing; a directory absent throughout lists as empty. One that another writer
        creates (or a subdirectory it removes) while it is listed makes pyarrow raise
        FileNotFoundError instead: then the whole listing is made again."""
        selector = pafs.FileSelector(self.path(rel_dir), allow_not_found=True, recursive=recursive)
        attempt = 1
        with self._failing(rel_dir):
            while True:
                record(RequestKind.LIST)
                try:
                    return list(self.fs.get_file_info(selector))
                except FileNotFoundError:
                    if attempt == _LIST_ATTEMPTS:
                        raise
                    attempt += 1
                except OSError as exc:
                    if cannot_exist(exc):
                        return []
                    raise

    def delete(self, rel: str) -> None:
        """Delete a file; a file that is already gone is not an error."""
        with self._failing(rel, "delete"), contextlib.suppress(FileNotFoundError):
            self.fs.delete_file(self.path(rel))

    def delete_many(self, rels: Iterable[str]) -> int:
        count = 0
        for rel in rels:
            self.delete(rel)
            count += 1
        return count

    def move(self, source: str, target: str) -> None:
        """Move a file (a rename on a local disk, a copy and delete on object stores)."""
        with self._failing(target, "move"):
            self._ensure_parent(target)
            self.fs.move(self.path(source), self.path(target))

    def delete_tree(self, rel_dir: str) -> bool:
        """Delete a directory and everything under it; False when there was none."""
        if not self.is_dir(rel_dir):
            return False
        with self._failing(rel_dir, "delete"), contextlib.suppress(FileNotFoundError):
            self.fs.delete_dir(self.path(rel_dir))
        return True

    def _ensure_parent(self, rel: str) -> None:
        parent = rel.rpartition("/")[0]
        self.fs.create_dir(self.path(parent), recursive=True)
