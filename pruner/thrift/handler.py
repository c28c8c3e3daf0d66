"""The Trino / Presto Thrift connector service over lakeprune tables: schemas are the configured
warehouses, tables the table directories under them (through `Catalog`, so no request names a
path). `get_splits` runs the engine's constraint through the planner and pages the pruned files as
splits; `get_index_splits` looks the key page up in the record index and issues splits that carry
their keys; `get_rows` reads a split with pyarrow and encodes the page straight from Arrow buffers.
Every split id and paging token is sealed (`tokens`), so a tampered one is refused. The pinned
snapshot travels in the tokens: all pages of one query read the same snapshot, even while writers
commit."""

from __future__ import annotations

import base64
import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAcceleratedFactory
from thrift.TSerialization import deserialize, serialize

from pruner.errors import InvalidInputError, LakepruneError, TableNotFoundError
from pruner.format.keys import encode_record_keys
from pruner.index.definitions import IndexState, IndexType
from pruner.index.functional import VirtualColumn, virtual_columns, with_virtual
from pruner.metadata.files_index import DataFile
from pruner.planner.planner import Planner, PruneResult
from pruner.serving.catalog import Catalog, TableName
from pruner.table.table import LakeTable, Snapshot
from pruner.thrift import blocks, connector_types, domains, idl
from pruner.thrift.split_reader import KeyFilter, PagePosition, SplitRead, SplitReader
from pruner.thrift.tokens import TokenSealer
from pruner.thrift.wire import calling_engine
from pruner.types import TableSchema

log = logging.getLogger(__name__)
_PROTOCOL = TBinaryProtocolAcceleratedFactory()
# Room in a GetRows reply for the message header, the page's own fields, the paging token and
# each block's field headers and list headers; the rows get the rest of `maxBytes`.
_REPLY_OVERHEAD = 4096
_BLOCK_OVERHEAD = 64

# Called with (method, PruneResult) after each planned request, for metrics.
PruneObserver = Callable[[str, PruneResult], None]
RowsObserver = Callable[[int, int], None]


@dataclass(frozen=True)
class _Located:
    """A table as a request sees it: its name, the opened table and its schema."""

    name: TableName
    table: LakeTable

    @property
    def schema(self) -> TableSchema:
        """The table's columns and, after them, one hidden virtual column per functional index."""
        return with_virtual(self.table.config.schema, self.virtual)

    @property
    def virtual(self) -> tuple[VirtualColumn, ...]:
        return tuple(virtual_columns(self.table.config.schema, self.table.definitions))


class LakepruneConnector:
    def __init__(
        self,
        catalog: Catalog,
        sealer: TokenSealer,
        hosts: Callable[[], list[idl.HostAddress]],
        on_prune: PruneObserver | None = None,
        on_rows: RowsObserver | None = None,
    ) -> None:
        self.catalog = catalog
        self.sealer = sealer
        self.hosts = hosts
        self.on_prune = on_prune
        self.on_rows = on_rows
        self.reader = SplitReader()

    # Metadata --------------------------------------------------------------------------------

    def list_schema_names(self) -> list[str]:
        return self.catalog.schemas()

    def list_tables(self, schema_or_none: idl.NullableSchemaName) -> list[idl.SchemaTableName]:
        schema = schema_or_none.schemaName if schema_or_none is not None else None
        if schema is not None and schema not in self.catalog.schemas():
            return []
        schemas = [schema] if schema is not None else self.catalog.schemas()
        return [idl.SchemaTableName(s, t) for s in schemas for t in self.catalog.tables(s)]

    def get_table_metadata(self, name: idl.SchemaTableName) -> idl.NullableTableMetadata:
        try:
            located = self._locate(name)
        except TableNotFoundError:
            return idl.NullableTableMetadata(None)
        config = located.table.config
        hidden = {v.name for v in located.virtual}
        columns = [
            idl.ColumnMetadata(
                c.name,
                connector_types.sql_type(c.type, calling_engine.get()),
                connector_types.comment(c.type),
                c.name in hidden,
            )
            for c in located.schema.columns
        ]
        keys = config.record_key
        indexable = (
            [set(keys)] if all(connector_types.is_exact(located.schema.column(k).type) for k in keys) else []
        )
        # Each secondary-indexed column is an index of its own for index joins (RFC-77).
        for column in _secondary_columns(located.table):
            if connector_types.is_exact(located.schema.column(column).type) and {column} not in indexable:
                indexable.append({column})
        return idl.NullableTableMetadata(idl.TableMetadata(name, columns, None, indexable or None))

    # Splits ----------------------------------------------------------------------------------

    def get_splits(
        self,
        name: idl.SchemaTableName,
        desired_columns: idl.NullableColumnSet,
        output_constraint: idl.TupleDomain,
        max_split_count: int,
        next_token: idl.NullableToken,
    ) -> idl.SplitBatch:
        located = self._locate(name)
        page = self._open_page("splits", next_token)
        snapshot = located.table.snapshot(page.get("instant"))
        constraint = domains.decode_tuple_domain(output_constraint, located.schema).tuple_domain
        result = Planner(snapshot).prune(constraint)
        if page.get("offset", 0) == 0 and self.on_prune is not None:
            self.on_prune("getSplits", result)
        encoded = _encode_constraint(output_constraint)
        splits = [
            self._split(located, snapshot, _relative(located.table, s.path), encoded, None)
            for s in result.splits
        ]
        return self._batch(splits, "splits", page, snapshot, max_split_count)

    def get_index_splits(
        self,
        name: idl.SchemaTableName,
        index_column_names: list[str],
        output_column_names: list[str],
        keys: idl.PageResult,
        output_constraint: idl.TupleDomain,
        max_split_count: int,
        next_token: idl.NullableToken,
    ) -> idl.SplitBatch:
        located = self._locate(name)
        key_fields = located.table.config.record_key
        by_record_key = set(index_column_names) == set(key_fields) and len(index_column_names) == len(
            key_fields
        )
        secondary = len(index_column_names) == 1 and index_column_names[0] in _secondary_columns(
            located.table
        )
        if not by_record_key and not secondary:
            known = [list(key_fields), *([c] for c in _secondary_columns(located.table))]
            raise InvalidInputError(
                f"table {located.name} is indexed on {known}, not on {index_column_names}"
            )
        page = self._open_page("index_splits", next_token)
        snapshot = located.table.snapshot(page.get("instant"))
        key_page = _key_page(located.schema, index_column_names, keys)
        encoded = _encode_constraint(output_constraint)
        splits = []
        located_rows = (
            _locate_keys(snapshot, key_page) if by_record_key else _locate_values(snapshot, key_page)
        )
        for data_file, rows in sorted(located_rows.items(), key=lambda kv: kv[0].path):
            key_rows = key_page.take(pa.array(rows)).to_pydict()
            payload = {c: _jsonable(v) for c, v in key_rows.items()}
            splits.append(self._split(located, snapshot, data_file.path, encoded, payload))
        return self._batch(splits, "index_splits", page, snapshot, max_split_count)

    # Rows ------------------------------------------------------------------------------------

    def get_rows(
        self, split_id: idl.Id, columns: list[str], max_bytes: int, next_token: idl.NullableToken
    ) -> bytes:
        split = self.sealer.open("split", split_id.id)
        located = self._locate(idl.SchemaTableName(split["schema"], split["table"]))
        for column in columns:
            located.schema.column(column)  # raises for unknown columns
        start = self._open_page("rows", next_token, split_id.id)
        constraint = domains.decode_tuple_domain(
            _decode_constraint(split["constraint"]), located.schema
        ).tuple_domain
        keys = None
        if split["keys"] is not None:
            keys = KeyFilter(_typed_keys(located.schema, split["keys"]))
        read = SplitRead(
            split_id.id,
            located.table.storage,
            split["file"],
            located.schema,
            tuple(columns),
            constraint,
            keys,
            located.virtual,
        )
        position = PagePosition(start.get("row_group", 0), start.get("row", 0))
        types = [located.schema.column(c).type for c in columns]
        budget = max(max_bytes - _REPLY_OVERHEAD - _BLOCK_OVERHEAD * len(columns), 1)
        page = self.reader.page(read, position, budget, lambda t: blocks.encoded_row_sizes(t.columns, types))
        encoded = [
            blocks.encode_block(connector_types.to_connector_array(page.rows.column(i).combine_chunks(), t))
            for i, t in enumerate(types)
        ]
        token = None
        if page.next is not None:
            token = self.sealer.seal(
                "rows",
                {"split": _digest(split_id.id), "row_group": page.next.row_group, "row": page.next.row},
            )
        body = blocks.encode_page_result(encoded, page.row_count, token)
        if self.on_rows is not None:
            self.on_rows(page.row_count, len(body))
        return body

    # Helpers ---------------------------------------------------------------------------------

    def _locate(self, name: idl.SchemaTableName) -> _Located:
        table_name = TableName(name.schemaName, name.tableName)
        return _Located(table_name, self.catalog.table(table_name))

    def _split(
        self,
        located: _Located,
        snapshot: Snapshot,
        path: str,
        constraint: str,
        keys: dict[str, list[Any]] | None,
    ) -> idl.Split:
        """A sealed split of the data file at `path` (relative to the table's root)."""
        payload = {
            "schema": located.name.schema,
            "table": located.name.table,
            "instant": snapshot.instant,
            "file": path,
            "constraint": constraint,
            "keys": keys,
        }
        return idl.Split(idl.Id(self.sealer.seal("split", payload)), self.hosts())

    def _open_page(
        self, kind: str, token: idl.NullableToken | None, split_id: bytes | None = None
    ) -> dict[str, Any]:
        if token is None or token.token is None:
            return {}
        payload = self.sealer.open(kind, token.token.id)
        if split_id is not None and payload.get("split") != _digest(split_id):
            raise InvalidInputError("the rows token belongs to another split")
        return payload

    def _batch(
        self, splits: list[idl.Split], kind: str, page: dict[str, Any], snapshot: Snapshot, max_count: int
    ) -> idl.SplitBatch:
        if max_count <= 0:
            raise InvalidInputError(f"maxSplitCount must be positive, got {max_count}")
        offset = int(page.get("offset", 0))
        chunk = splits[offset : offset + max_count]
        token = None
        if offset + max_count < len(splits):
            sealed = self.sealer.seal(kind, {"instant": snapshot.instant, "offset": offset + max_count})
            token = idl.Id(sealed)
        return idl.SplitBatch(chunk, token)


def _relative(table: LakeTable, uri: str) -> str:
    """The table-relative path of a split's file (the planner's splits carry full URIs)."""
    prefix = table.storage.full_uri("") + "/"
    if not uri.startswith(prefix):
        raise LakepruneError(f"split {uri} lies outside table {table.storage.uri}")
    return uri[len(prefix) :]


def _encode_constraint(constraint: idl.TupleDomain) -> str:
    return base64.b64encode(serialize(constraint, _PROTOCOL)).decode("ascii")


def _decode_constraint(encoded: str) -> idl.TupleDomain:
    decoded: idl.TupleDomain = deserialize(idl.TupleDomain(), base64.b64decode(encoded), _PROTOCOL)
    return decoded


def _key_page(schema: TableSchema, names: list[str], keys: idl.PageResult) -> pa.Table:
    blocks_ = keys.columnBlocks or []
    if len(blocks_) != len(names):
        raise InvalidInputError(f"key page has {len(blocks_)} blocks for {len(names)} index columns")
    arrays = [
        connector_types.from_connector_array(
            blocks.decode_block(b, schema.column(n).type), schema.column(n).type
        )
        for b, n in zip(blocks_, names, strict=True)
    ]
    return pa.table(dict(zip(names, arrays, strict=True)))


def _locate_keys(snapshot: Snapshot, key_page: pa.Table) -> dict[DataFile, list[int]]:
    """Which live file holds each key row (rows of keys the table does not hold are dropped)."""
    key_fields = snapshot.table.config.record_key
    encoded = encode_record_keys(key_page.select(list(key_fields)), key_fields)
    found = snapshot.record_index().lookup(encoded)
    location = {
        k: (p, g)
        for k, p, g in zip(
            found["key"].to_pylist(),
            found["partition"].to_pylist(),
            found["file_group"].to_pylist(),
            strict=True,
        )
    }
    files = {(f.partition, f.file_group): f for f in snapshot.files()}
    rows: dict[DataFile, list[int]] = defaultdict(list)
    for index, key in enumerate(encoded.to_pylist()):
        where = location.get(key)
        if where is not None and where in files:
            rows[files[where]].append(index)
    return rows


def _secondary_columns(table: LakeTable) -> list[str]:
    return [d.columns[0] for d in table.definitions if d.index_type == IndexType.SECONDARY_INDEX]


def _locate_values(snapshot: Snapshot, key_page: pa.Table) -> dict[DataFile, list[int]]:
    """Which live files hold rows whose secondary-indexed column equals each key row's value:
    value -> record keys (secondary index) -> file groups (record index). The split's key filter
    then keeps exactly the rows with those values. While the index is still building, every
    live file gets every value (a scan, but still exact)."""
    column = key_page.column_names[0]
    table = snapshot.table
    definition = next(
        d for d in table.definitions if d.index_type == IndexType.SECONDARY_INDEX and d.columns[0] == column
    )
    values = key_page.column(0).combine_chunks()
    if definition.state != IndexState.READY:
        everything = [i for i, v in enumerate(values.to_pylist()) if v is not None]
        return {f: everything for f in snapshot.files()} if everything else {}
    pairs = snapshot.index_partition(table.spec(definition)).lookup(values.drop_null())
    found = snapshot.record_index().lookup(pairs["key"])
    places = zip(found["partition"].to_pylist(), found["file_group"].to_pylist(), strict=True)
    group_of = dict(zip(found["key"].to_pylist(), places, strict=True))
    files = {(f.partition, f.file_group): f for f in snapshot.files()}
    groups_of_value: dict[Any, set[tuple[str, str]]] = defaultdict(set)
    for value, key in zip(pairs["secondary_key"].to_pylist(), pairs["key"].to_pylist(), strict=True):
        where = group_of.get(key)
        if where is not None and where in files:
            groups_of_value[value].add(where)
    rows: dict[DataFile, list[int]] = defaultdict(list)
    for index, value in enumerate(values.cast(pairs.schema.field("secondary_key").type).to_pylist()):
        for where in sorted(groups_of_value.get(value, ())):
            rows[files[where]].append(index)
    return rows


def _jsonable(values: list[Any]) -> list[Any]:
    return [v.isoformat() if hasattr(v, "isoformat") else v for v in values]


def _typed_keys(schema: TableSchema, keys: dict[str, list[Any]]) -> pa.Table:
    arrays = {}
    for name, values in keys.items():
        arrow_type = schema.column(name).type.to_arrow()
        arrays[name] = pc.cast(pa.array(values), arrow_type) if values else pa.array([], arrow_type)
    return pa.table(arrays)


def _digest(split_id: bytes) -> str:
    return base64.b64encode(split_id[-16:]).decode("ascii")
