"""The sidecar's catalog: schema names are the configured warehouse roots, table names are the
table directories under them. It is the only way a request reaches storage: a request names a
schema and a table, never a path, and the name must be a plain directory name under a configured
root, of at most `MAX_NAME_CHARS` characters (longer names are NOT_FOUND before any storage access,
so that no caller can make a file system answer "file name too long"). Opened tables are kept and
reused while their timeline, index definitions and `table.json` are unchanged, and all tables
share one `IndexCache`, so a new commit is visible at the next call while repeated prunes of an
unchanged table read nothing from storage: each request lists the timeline and the `.lakeprune`
directory, nothing more. `CREATE INDEX`, `DROP INDEX`, an index becoming ready and a partition
evolution rewrite `index_defs.json` or `table.json` without adding an instant: their size and
modification time in the listing tell that they are unchanged, but only once that time lies
`SETTLED_SECONDS` in the past (object stores keep modification times to the second, so two
writes of one size within a second look alike; the margin also covers clock skew between the
sidecar and the store). Until then each request reads both files again and compares contents.
The catalog's `redact` (`redaction.Redactor`) turns its roots back into schema names in what
callers see."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass

from pruner.bounded import echo, shorten
from pruner.errors import TableNotFoundError
from pruner.format.config import load_config
from pruner.format.layout import META_DIR, TABLE_JSON
from pruner.format.timeline import Timeline
from pruner.index.definitions import INDEX_DEFS, load_definitions
from pruner.metadata.index_partition import BucketCache
from pruner.serving.config import MAX_NAME_CHARS
from pruner.serving.redaction import Redactor
from pruner.storage import Storage
from pruner.table.table import LakeTable, Snapshot, table_location

log = logging.getLogger(__name__)

# The files beside the timeline that change without a new instant.
DEFINITION_FILES = (TABLE_JSON, INDEX_DEFS)
# How long after its last modification a definition file's listing (size, time) is trusted to tell
# that it is unchanged.
SETTLED_SECONDS = 5.0

# Table names engines can address: Trino and Presto lower-case identifiers, so only such
# directories are listed (and only such names accepted).
TABLE_NAME = re.compile(r"[a-z][a-z0-9_]*")  # matched whole: `$` lets a final newline through


@dataclass(frozen=True)
class TableName:
    schema: str
    table: str

    def __str__(self) -> str:
        return f"{self.schema}.{self.table}"


@dataclass(frozen=True)
class _Definitions:
    """What a listing of `.lakeprune/` said about the definition files: each one's size and
    modification time (None: absent), and whether all those times were settled."""

    listed: tuple[tuple[int, int | None] | None, ...]
    settled: bool

    @classmethod
    def list(cls, storage: Storage) -> _Definitions:
        entries = {e.rel: e for e in storage.list_files(META_DIR)}
        found = [entries.get(rel) for rel in DEFINITION_FILES]
        listed = tuple(None if e is None else (e.size, e.modified_ns) for e in found)
        horizon = (time.time() - SETTLED_SECONDS) * 1e9
        settled = all(e is None or (e.modified_ns is not None and e.modified_ns < horizon) for e in found)
        return cls(listed, settled)


@dataclass(frozen=True)
class _Opened:
    table: LakeTable
    definitions: _Definitions  # listed before the table's definition files were read


class Catalog:
    def __init__(self, warehouses: Mapping[str, str], cache: BucketCache) -> None:
        self.warehouses = dict(warehouses)
        self.cache = cache
        self.redact = Redactor(self.warehouses)
        self._open: dict[TableName, _Opened] = {}
        self._lock = threading.Lock()

    def schemas(self) -> list[str]:
        return sorted(self.warehouses)

    def tables(self, schema: str) -> list[str]:
        """The lakeprune tables directly under the schema's warehouse root, sorted."""
        root = Storage.from_uri(self._root(schema))
        names = []
        for name in root.list_dirs(""):
            if TABLE_NAME.fullmatch(name) and root.exists(f"{name}/{TABLE_JSON}"):
                names.append(name)
        return sorted(names)

    def load(self) -> dict[str, list[str]]:
        """List every schema's tables; raises if a warehouse root is missing or cannot be listed.
        The sidecar reports SERVING only once this succeeded."""
        listed = {}
        for schema in self.schemas():
            root = Storage.from_uri(self.warehouses[schema])
            if not root.is_dir(""):
                raise FileNotFoundError(f"warehouse root {root.uri} of schema {schema} is not a directory")
            listed[schema] = self.tables(schema)
        return listed

    def table(self, name: TableName) -> LakeTable:
        """The table as of its latest timeline; reopened only when the timeline or a definition
        file changed."""
        location = self._location(name)
        with self._lock:
            cached = self._open.get(name)
        if cached is not None:
            storage = cached.table.storage
            timeline = Timeline.load(storage)
            definitions = _Definitions.list(storage)
            if timeline.instants != cached.table.timeline.instants:
                log.info("table %s changed (latest instant %s); reloading", name, timeline.last_timestamp())
            elif cached.definitions.settled and definitions == cached.definitions:
                return cached.table
            elif tuple(load_definitions(storage)) != cached.table.definitions:
                log.info("table %s: index definitions changed; reloading", name)
            elif load_config(storage) != cached.table.config:
                log.info("table %s: definition (partitioning) changed; reloading", name)
            else:
                with self._lock:
                    self._open[name] = _Opened(cached.table, definitions)
                return cached.table
        try:
            definitions = _Definitions.list(Storage.from_uri(location))
            table = LakeTable.open(location, self.cache)
        except TableNotFoundError as exc:
            # The caller gets the name it used; the server's paths stay in the server's log.
            log.info("table %s not found: %s", name, exc)
            raise TableNotFoundError(f"table {name} does not exist") from exc
        with self._lock:
            self._open[name] = _Opened(table, definitions)
        return table

    def snapshot(self, name: TableName, instant: str | None = None) -> Snapshot:
        return self.table(name).snapshot(instant)

    def _root(self, schema: str) -> str:
        root = self.warehouses.get(schema)
        if root is None:
            known = shorten(", ".join(self.schemas()))
            raise TableNotFoundError(f"schema {echo(schema)} does not exist (schemas: {known})")
        return root

    def _location(self, name: TableName) -> str:
        root = self._root(name.schema)
        if len(name.table) > MAX_NAME_CHARS:
            raise TableNotFoundError(
                f"table {shorten(name)} does not exist (table names have at most {MAX_NAME_CHARS} characters)"
            )
        if not TABLE_NAME.fullmatch(name.table):
            raise TableNotFoundError(
                f"table {shorten(name)} does not exist (table names match [a-z][a-z0-9_]*)"
            )
        return table_location(name.table, root)
