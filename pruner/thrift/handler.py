"""The Trino / Presto Thrift connector service over lakeprune tables: schemas are the configured
warehouses, tables the table directories under them (through `Catalog`, so no request names a
path). `get_splits` runs the engine's constraint through `prune` (what the constraint decoder drops
or widens goes with it as notes) and pages the pruned files as splits; `get_index_splits` locates
the key page's rows through the record or a secondary index (`index_joins`) and issues splits that
carry their keys; `get_rows` reads a split with pyarrow and encodes the page straight from Arrow
buffers. A listing is planned once and every page is a slice of that plan (`pruner.serving.plans`),
so index changes between pages never repeat or lose a split. Every split id and paging token is
sealed (`tokens`), so a tampered one is refused; the pinned snapshot and the plan travel in the
tokens: all pages of one query read the same snapshot and listing, even while writers commit."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAcceleratedFactory
from thrift.TSerialization import deserialize, serialize

from pruner.bounded import echo
from pruner.errors import InvalidInputError, LakepruneError, TableNotFoundError
from pruner.index.functional import VirtualColumn
from pruner.planner.prune import prune
from pruner.planner.result import PruneResult
from pruner.predicate.tuple_domain import TupleDomain
from pruner.serving.catalog import Catalog, TableName
from pruner.serving.config import Limits
from pruner.serving.plans import Plan, Plans, plan_key
from pruner.table.table import LakeTable, Snapshot
from pruner.thrift import blocks, connector_types, domains, idl
from pruner.thrift.dispatch import calling_engine
from pruner.thrift.index_joins import (
    IndexSplitItem,
    index_split_items,
    key_page,
    secondary_columns,
    typed_keys,
)
from pruner.thrift.split_reader import KeyFilter, PagePosition, SplitRead, SplitReader
from pruner.thrift.tokens import TokenSealer
from pruner.types import TableSchema

log = logging.getLogger(__name__)
T = TypeVar("T")
_PROTOCOL = TBinaryProtocolAcceleratedFactory()
# Room in a GetRows reply for the message header, the page's own fields, the paging token and
# each block's field headers and list headers; the rows get the rest of `maxBytes`.
_REPLY_OVERHEAD = 4096
_BLOCK_OVERHEAD = 64

# Called with (method, PruneResult) after each planned request, for metrics.
# Told of each prune: the method, the table, the TupleDomain pruned by, and the result.
PruneObserver = Callable[[str, LakeTable, TupleDomain, PruneResult], None]
RowsObserver = Callable[[int, int], None]


@dataclass(frozen=True)
class _Located:
    """A table as a request sees it: its name, the opened table and its schema."""

    name: TableName
    table: LakeTable

    @property
    def schema(self) -> TableSchema:
        """The table's columns and, after them, one hidden virtual column per functional index."""
        return self.table.query_schema

    @property
    def virtual(self) -> tuple[VirtualColumn, ...]:
        return self.table.virtual_columns


class LakepruneConnector:
    def __init__(
        self,
        catalog: Catalog,
        sealer: TokenSealer,
        hosts: Callable[[], list[idl.HostAddress]],
        on_prune: PruneObserver | None = None,
        on_rows: RowsObserver | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.catalog = catalog
        self.limits = limits or Limits()
        # Each listing is planned once and paged from its plan (see `pruner.serving.plans`).
        self.split_plans: Plans[str] = Plans(fingerprint=lambda path: path)
        self.index_plans: Plans[IndexSplitItem] = Plans(
            fingerprint=lambda item: json.dumps(item, sort_keys=True, default=str)
        )
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
        for column in secondary_columns(located.table):
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
        encoded = _encode_constraint(output_constraint)
        key = plan_key(located.table, "splits", snapshot.instant or "", encoded)

        def plan() -> list[str]:
            decoded = domains.decode_tuple_domain(output_constraint, located.schema)
            notes = [f"{d.column}: {d.reason}" for d in decoded.dropped]
            result = prune(
                located.table,
                decoded.tuple_domain,
                snapshot=snapshot.instant,
                limits=self.limits.prune_limits(),
                widened=notes,
            )
            if self.on_prune is not None:
                self.on_prune("getSplits", located.table, decoded.tuple_domain, result)
            return [_relative(located.table, s.path) for s in result.splits]

        listing = self._listing(self.split_plans, "splits", page, key, plan)
        return self._batch(
            listing,
            "splits",
            page,
            snapshot,
            max_split_count,
            lambda path: self._split(located, snapshot, path, encoded, None),
        )

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
        page = self._open_page("index_splits", next_token)
        snapshot = located.table.snapshot(page.get("instant"))
        encoded = _encode_constraint(output_constraint)
        keys_digest = hashlib.sha256(serialize(keys, _PROTOCOL)).hexdigest()
        request = ("index_splits", snapshot.instant or "", encoded, ",".join(index_column_names), keys_digest)
        key = plan_key(located.table, *request)

        def plan() -> list[IndexSplitItem]:
            key_fields = located.table.config.record_key
            indexed = secondary_columns(located.table)
            by_record_key = sorted(index_column_names) == sorted(key_fields)
            if not by_record_key and not (len(index_column_names) == 1 and index_column_names[0] in indexed):
                known = [list(key_fields), *([c] for c in indexed)]
                asked = ", ".join(echo(name) for name in index_column_names)
                raise InvalidInputError(f"table {located.name} is indexed on {known}, not on [{asked}]")
            rows = key_page(located.schema, index_column_names, keys)
            return index_split_items(snapshot, rows, by_record_key)

        listing = self._listing(self.index_plans, "index_splits", page, key, plan)
        return self._batch(
            listing,
            "index_splits",
            page,
            snapshot,
            max_split_count,
            lambda item: self._split(located, snapshot, item[0], encoded, item[1]),
        )

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
            keys = KeyFilter(typed_keys(located.schema, split["keys"]))
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

    def _listing(
        self, plans: Plans[T], kind: str, page: dict[str, Any], key: str, plan: Callable[[], list[T]]
    ) -> Plan[T]:
        """The one plan a page of a listing is cut from: planned for the first page; for a later
        page, the plan its token names, planned again only on an unchanged basis (`key`)."""
        if not page:
            return plans.first(key, plan)
        sealed = str(page.get("plan"))
        return plans.resume(sealed, str(page.get("digest")), plan if sealed == key else None)

    def _batch(
        self,
        listing: Plan[T],
        kind: str,
        page: dict[str, Any],
        snapshot: Snapshot,
        max_count: int,
        split: Callable[[T], idl.Split],
    ) -> idl.SplitBatch:
        if max_count <= 0:
            raise InvalidInputError(f"maxSplitCount must be positive, got {max_count}")
        items, following = listing.page(int(page.get("offset", 0)), max_count)
        token = None
        if following is not None:
            state = {
                "instant": snapshot.instant,
                "offset": following,
                "plan": listing.key,
                "digest": listing.digest,
            }
            token = idl.Id(self.sealer.seal(kind, state))
        return idl.SplitBatch([split(item) for item in items], token)


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


def _digest(split_id: bytes) -> str:
    return base64.b64encode(split_id[-16:]).decode("ascii")
