"""Index joins through the Thrift connector (`GetIndexSplits`): which live files hold the rows of a
page of index keys. On the record key, the keys are encoded as the writer encodes them and looked
up in the record index; on a secondary-indexed column (RFC-77), each value's record keys come from
the secondary index and their file groups from the record index. Each file becomes a split that
carries the key rows it may hold (as JSON), so that reading it keeps exactly those rows."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pruner.errors import InvalidInputError
from pruner.format.keys import encode_record_keys
from pruner.index.definitions import IndexDefinition, IndexType
from pruner.metadata.files_index import DataFile
from pruner.table.table import LakeTable, Snapshot
from pruner.thrift import blocks, connector_types, idl
from pruner.types import TableSchema

# A split of an index join: the data file's table-relative path and the key rows it may hold.
IndexSplitItem = tuple[str, dict[str, list[Any]]]


def index_split_items(snapshot: Snapshot, key_rows: pa.Table, by_record_key: bool) -> list[IndexSplitItem]:
    """The files holding rows of `key_rows` (the record key's columns, or one secondary-indexed
    column), in path order, each with the key rows it may hold."""
    located = _locate_keys(snapshot, key_rows) if by_record_key else _locate_values(snapshot, key_rows)
    items = []
    for data_file, rows in sorted(located.items(), key=lambda kv: kv[0].path):
        chosen = key_rows.take(pa.array(rows)).to_pydict()
        items.append((data_file.path, {c: _jsonable(v) for c, v in chosen.items()}))
    return items


def key_page(schema: TableSchema, names: list[str], keys: idl.PageResult) -> pa.Table:
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


def secondary_columns(table: LakeTable) -> list[str]:
    """The columns of the table's one-column secondary indexes (a composite one joins on no one
    column, one over an expression on no column)."""
    return [d.columns[0] for d in table.definitions if _on_column(d)]


def _on_column(definition: IndexDefinition) -> bool:
    """Whether `definition` is a secondary index on one column (not composite, not an expression)."""
    return (
        definition.index_type == IndexType.SECONDARY_INDEX
        and definition.expression is None
        and len(definition.columns) == 1
    )


def _locate_values(snapshot: Snapshot, key_page: pa.Table) -> dict[DataFile, list[int]]:
    """Which live files hold rows whose secondary-indexed column equals each key row's value:
    value -> record keys (secondary index) -> file groups (record index). The split's key filter
    then keeps exactly the rows with those values. While the index is still building, every
    live file gets every value (a scan, but still exact); so does a snapshot older than its build."""
    column = key_page.column_names[0]
    table = snapshot.table
    definition = next(d for d in table.definitions if _on_column(d) and d.columns == (column,))
    values = key_page.column(0).combine_chunks()
    if not definition.covers(snapshot.instant):  # building, or built after this snapshot
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


def typed_keys(schema: TableSchema, keys: dict[str, list[Any]]) -> pa.Table:
    arrays = {}
    for name, values in keys.items():
        arrow_type = schema.column(name).type.to_arrow()
        arrays[name] = pc.cast(pa.array(values), arrow_type) if values else pa.array([], arrow_type)
    return pa.table(arrays)
