"""The sidecar's catalog: schema names are the configured warehouse roots, table names are the
table directories under them. It is the only way a request reaches storage: a request names a
schema and a table, never a path, and the name must be a plain directory name under a configured
root, of at most `MAX_NAME_CHARS` characters (longer names are NOT_FOUND before any storage access,
so that no caller can make a file system answer "file name too long"). Opened tables are kept and
reused while their timeline, index definitions and `table.json` are unchanged (a listing of the
timeline and reads of `index_defs.json` and `table.json` per request check that: `CREATE INDEX`,
`DROP INDEX`, an index becoming ready and a partition evolution change them without adding an
instant), and all tables share one `IndexCache`, so a new commit is visible at the next call while
repeated prunes of an unchanged table read no index data from storage (only directory listings).
The catalog's `redact` (`redaction.Redactor`) turns its roots back into schema names in what
callers see."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from pruner.errors import TableNotFoundError
from pruner.format.config import load_config
from pruner.format.layout import TABLE_JSON
from pruner.format.timeline import Timeline
from pruner.index.definitions import load_definitions
from pruner.metadata.index_partition import BucketCache
from pruner.serving.bounded import shorten
from pruner.serving.config import MAX_NAME_CHARS
from pruner.serving.redaction import Redactor
from pruner.storage import Storage
from pruner.table.table import LakeTable, Snapshot, table_location

log = logging.getLogger(__name__)

# Table names engines can address: Trino and Presto lower-case identifiers, so only such
# directories are listed (and only such names accepted).
TABLE_NAME = re.compile(r"[a-z][a-z0-9_]*")  # matched whole: `$` lets a final newline through


@dataclass(frozen=True)
class TableName:
    schema: str
    table: str

    def __str__(self) -> str:
        return f"{self.schema}.{self.table}"


class Catalog:
    def __init__(self, warehouses: Mapping[str, str], cache: BucketCache) -> None:
        self.warehouses = dict(warehouses)
        self.cache = cache
        self.redact = Redactor(self.warehouses)
        self._open: dict[TableName, LakeTable] = {}
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
        """The table as of its latest timeline; reopened only when the timeline changed."""
        location = self._location(name)
        with self._lock:
            cached = self._open.get(name)
        if cached is not None:
            timeline = Timeline.load(cached.storage)
            if timeline.instants != cached.timeline.instants:
                log.info("table %s changed (latest instant %s); reloading", name, timeline.last_timestamp())
            elif tuple(load_definitions(cached.storage)) != cached.definitions:
                log.info("table %s: index definitions changed; reloading", name)
            elif load_config(cached.storage) != cached.config:
                log.info("table %s: definition (partitioning) changed; reloading", name)
            else:
                return cached
        try:
            table = LakeTable.open(location, self.cache)
        except TableNotFoundError as exc:
            # The caller gets the name it used; the server's paths stay in the server's log.
            log.info("table %s not found: %s", name, exc)
            raise TableNotFoundError(f"table {name} does not exist") from exc
        with self._lock:
            self._open[name] = table
        return table

    def snapshot(self, name: TableName, instant: str | None = None) -> Snapshot:
        return self.table(name).snapshot(instant)

    def _root(self, schema: str) -> str:
        root = self.warehouses.get(schema)
        if root is None:
            known = shorten(", ".join(self.schemas()))
            raise TableNotFoundError(f"schema {shorten(schema)!r} does not exist (schemas: {known})")
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
