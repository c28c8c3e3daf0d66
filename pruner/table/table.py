"""`LakeTable` (a table's storage, config and timeline, loaded once) and `Snapshot` (the table as
of one completed instant). A snapshot's live data files come from the `files` index partition as of
that instant; its index partitions are read the same way. Time travel is asking for an older
completed instant; instants whose files a clean removed are refused with the earliest one kept."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property

import pyarrow as pa
import pyarrow.dataset as ds

from pruner.errors import InvalidInputError, SnapshotNotFoundError, TableCorruptError
from pruner.format.config import TableConfig, load_config
from pruner.format.instant import format_instant, is_instant
from pruner.format.layout import IndexFileName
from pruner.format.manifest import IndexFileManifest
from pruner.format.timeline import Action, Timeline
from pruner.identifiers import abbreviate
from pruner.index.definitions import IndexDefinition, load_definitions
from pruner.index.functional import VirtualColumn, virtual_columns, with_virtual
from pruner.index.kinds import partition_of
from pruner.index.specs import spec_for
from pruner.metadata import files_index, record_index
from pruner.metadata.files_index import DataFile
from pruner.metadata.index_partition import BucketCache, IndexPartitionView
from pruner.metadata.spec import IndexPartitionSpec
from pruner.storage import Storage
from pruner.table.data_files import read_data_file
from pruner.table.integrity import damaged, files_index_damage, require_intact
from pruner.types import TableSchema


def table_location(table: str, warehouse: str | None = None) -> str:
    """A table's location: `table` itself, or a table name under a warehouse root."""
    if warehouse is None:
        return table
    if not table or "/" in table or table.startswith("."):
        raise InvalidInputError(f"table name {table!r} is not a plain name under the warehouse")
    return f"{warehouse.rstrip('/')}/{table}" if "://" in warehouse else os.path.join(warehouse, table)


@dataclass(frozen=True)
class LakeTable:
    storage: Storage
    config: TableConfig
    timeline: Timeline
    definitions: tuple[IndexDefinition, ...] = ()
    # Shared by long-running readers (the sidecar) so that repeated prunes do not re-read storage.
    cache: BucketCache | None = field(default=None, compare=False)
    # With a cache, the partition views (index directory listings) of this loaded timeline, so that
    # repeated prunes do not list storage either; a new commit means a new timeline, a new table.
    _views: dict[tuple[str, str | None], IndexPartitionView] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def open(cls, location: str, cache: BucketCache | None = None, *, intact: bool = True) -> LakeTable:
        """The table at `location`. A damaged timeline raises `TableDamagedError` unless `intact`
        is False (for `lakeprune table check`, which reports the damage)."""
        storage = Storage.from_uri(location)
        config = load_config(storage)
        table = cls(storage, config, Timeline.load(storage), tuple(load_definitions(storage)), cache)
        if intact:
            require_intact(storage, table.timeline, table.manifest)
        return table

    def refresh(self) -> LakeTable:
        return LakeTable.open(self.storage.uri, self.cache)

    @cached_property
    def virtual_columns(self) -> tuple[VirtualColumn, ...]:
        """The hidden virtual columns of the table's functional indexes (RFC-63), computed once."""
        return tuple(virtual_columns(self.config.schema, self.definitions))

    @cached_property
    def query_schema(self) -> TableSchema:
        """The columns a predicate may name: the table's, then the virtual columns."""
        return with_virtual(self.config.schema, self.virtual_columns)

    @cached_property
    def indexed_calls(self) -> Mapping[str, str]:
        """Each indexed expression (`Expression.key()`) and the virtual column that stands for it."""
        return {v.expression.key(): v.name for v in self.virtual_columns}

    @cached_property
    def manifest(self) -> IndexFileManifest:
        """The index files this timeline's completed instants wrote (read on first use)."""
        return IndexFileManifest.of(self.timeline)

    def recorded_index_files(self, partition: str, as_of: str) -> list[IndexFileName] | None:
        """The files of index partition `partition` that completed instants up to `as_of` wrote
        for its current index (an index dropped and created again starts afresh); None when they
        are not all recorded, and storage must be listed."""
        definition = next((d for d in self.definitions if partition_of(d) == partition), None)
        if definition is not None and not definition.generation_known:
            return None
        after = definition.created_after if definition is not None else None
        return self.manifest.files(partition, as_of, after)

    @property
    def files_spec(self) -> IndexPartitionSpec:
        return files_index.spec(self.config.properties.index_files_buckets)

    @property
    def record_index_spec(self) -> IndexPartitionSpec:
        return record_index.spec(self.config.properties.index_record_index_buckets)

    def index_partition_specs(self) -> list[IndexPartitionSpec]:
        """Every index partition this table maintains: built-in ones, then the defined ones."""
        return [self.files_spec, self.record_index_spec, *(self.spec(d) for d in self.definitions)]

    def spec(self, definition: IndexDefinition) -> IndexPartitionSpec:
        return spec_for(definition, self.config.properties, self.config.schema)

    def definition(self, name: str) -> IndexDefinition:
        for definition in self.definitions:
            if definition.name == name:
                return definition
        names = ", ".join(abbreviate(d.name) for d in self.definitions) or "none"
        raise InvalidInputError(
            f"table {self.config.name} has no index {abbreviate(name)} (indexes: {names})"
        )

    def earliest_retained(self) -> str | None:
        """The oldest instant still readable after the latest clean (None: nothing cleaned)."""
        cleans = [i for i in self.timeline.completed() if i.action == Action.CLEAN]
        if not cleans:
            return None
        value = self.timeline.read(cleans[-1]).get("earliest_retained")
        return str(value) if value else None

    def snapshot(self, instant: str | None = None) -> Snapshot:
        """The latest snapshot, or the one at a completed instant."""
        if instant is None:
            latest = self.timeline.latest_completed()
            return Snapshot(self, latest.timestamp if latest else None)
        if not is_instant(instant):
            raise SnapshotNotFoundError(f"{instant!r} is not an instant (expected YYYYMMDDHHMMSSmmm)")
        if instant not in self.timeline.completed_timestamps():
            raise SnapshotNotFoundError(f"no completed instant {instant} in table {self.storage.uri}")
        earliest = self.earliest_retained()
        if earliest is not None and instant < earliest:
            raise SnapshotNotFoundError(
                f"snapshot {instant} has been cleaned; the earliest retained snapshot is {earliest}"
            )
        return Snapshot(self, instant)

    def snapshot_as_of(self, moment: datetime) -> Snapshot:
        """The latest snapshot committed at or before `moment` (an aware datetime): its instant is
        the greatest completed one not after it (an instant's timestamp is when its commit began,
        to the millisecond). A snapshot cleaned since cannot be read (`snapshot` says so)."""
        cutoff = format_instant(moment)
        completed = sorted(self.timeline.completed_timestamps())
        before = [t for t in completed if t <= cutoff]
        if not before:
            first = f"; its first is {completed[0]}" if completed else " (it has none)"
            raise SnapshotNotFoundError(
                f"table {self.storage.uri} has no snapshot committed at or before "
                f"{moment.astimezone(UTC).isoformat()}{first}"
            )
        return self.snapshot(before[-1])


@dataclass(frozen=True)
class Snapshot:
    table: LakeTable
    instant: str | None  # None: the table has no completed instant yet

    def index_partition(self, spec: IndexPartitionSpec) -> IndexPartitionView:
        key = (spec.directory, self.instant)
        view = self.table._views.get(key) if self.table.cache is not None else None
        if view is None:
            recorded = (
                self.table.recorded_index_files(spec.name, self.instant) if self.instant is not None else None
            )
            view = IndexPartitionView.load(
                self.table.storage,
                spec,
                self.table.timeline.completed_timestamps(),
                self.instant,
                self.table.cache,
                recorded,
            )
            if self.table.cache is not None:
                self.table._views[key] = view
        return view

    def files(self) -> list[DataFile]:
        files = files_index.from_rows(self.index_partition(self.table.files_spec).read_all())
        if self.instant is not None:
            stray = files_index_damage(files, self.table.timeline.completed_timestamps(), self.instant)
            if stray is not None:
                raise damaged(self.table.storage.uri, [stray])
        return files

    def record_index(self) -> IndexPartitionView:
        return self.index_partition(self.table.record_index_spec)

    def read(self, columns: list[str] | None = None, limit: int | None = None) -> pa.Table:
        """The snapshot's rows (pyarrow; no Spark), optionally only some columns or the first N."""
        schema = self.table.config.schema.to_arrow()
        if columns is not None:
            for name in columns:
                self.table.config.schema.column(name)  # raises for unknown columns
        files = self.files()
        paths = [self.table.storage.path(f.path) for f in files]
        if not paths:
            table = schema.empty_table()
            return table.select(columns) if columns is not None else table
        try:
            if not self.table.config.path_columns_in_files:
                return self._read_files(files, columns, limit)
            dataset = ds.dataset(paths, schema=schema, format="parquet", filesystem=self.table.storage.fs)
            if limit is not None:
                return dataset.head(limit, columns=columns)
            return dataset.to_table(columns=columns)
        except (OSError, pa.ArrowInvalid) as exc:
            raise TableCorruptError(f"cannot read snapshot {self.instant}: {exc}") from exc

    def _read_files(self, files: list[DataFile], columns: list[str] | None, limit: int | None) -> pa.Table:
        """File by file, filling the partition columns an adopted file keeps only in its path."""
        config = self.table.config
        wanted = columns if columns is not None else config.schema.names
        parts: list[pa.Table] = [config.schema.to_arrow().empty_table().select(wanted)]
        remaining = limit
        for data_file in files:
            if remaining is not None and remaining <= 0:
                break
            rows = read_data_file(self.table.storage, data_file.path, config.schema, wanted)
            if remaining is not None:
                rows = rows.slice(0, remaining)
                remaining -= rows.num_rows
            parts.append(rows)
        return pa.concat_tables(parts)
