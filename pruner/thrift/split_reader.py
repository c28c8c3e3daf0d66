"""Reading the rows of one split (a data file of a snapshot) page by page, for the Thrift `GetRows`
call. pyarrow reads only the needed columns of one row group at a time; rows are then filtered by
the engine's constraint (`pruner.predicate.arrow_filter`, exact for the constraint it is given)
and, for index splits, by the looked-up keys, and the page stops where the caller's size estimate
says the next row would pass `max_bytes`. A page position is (row group, row within the filtered
row group), so paging is stateless; a few decoded row groups are kept so that paging through a
large row group does not re-read it for every page."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pruner.errors import TableCorruptError
from pruner.format.path_columns import partition_of
from pruner.index.functional import VirtualColumn
from pruner.predicate.arrow_filter import row_filter
from pruner.predicate.tuple_domain import TupleDomain
from pruner.storage import Storage
from pruner.table.data_files import fill_columns
from pruner.types import TableSchema

# Encoded size of each row of a table, in bytes, as the wire encoder will produce it.
RowSizes = Callable[[pa.Table], np.ndarray]


@dataclass(frozen=True)
class PagePosition:
    row_group: int = 0
    row: int = 0


@dataclass(frozen=True)
class KeyFilter:
    """Rows whose `columns` equal one of the rows of `keys` (an index lookup's key page)."""

    keys: pa.Table

    @property
    def columns(self) -> list[str]:
        return list(self.keys.column_names)


@dataclass(frozen=True)
class Page:
    rows: pa.Table  # the requested columns; no columns at all for count(*)
    row_count: int
    next: PagePosition | None  # None: the split is exhausted


@dataclass(frozen=True)
class SplitRead:
    identity: bytes  # the split id: equal ids read equal rows, so it keys the row-group cache
    storage: Storage
    file: str  # relative to the table root; only ever taken from an authenticated split id
    schema: TableSchema
    columns: tuple[str, ...]
    constraint: TupleDomain
    keys: KeyFilter | None = None
    # Hidden virtual columns (functional indexes): computed from their source column with the
    # registry's Arrow implementation. `schema` includes them.
    virtual: tuple[VirtualColumn, ...] = ()

    @property
    def wanted(self) -> list[str]:
        """Columns the page and its filters look at, virtual ones included. With no requested
        columns (count(*)) the engine filters nothing, so the constraint is not applied either."""
        names = list(self.columns)
        if self.columns:
            names += [c for c in self.constraint.columns if c in self.schema.names]
        if self.keys is not None:
            names += self.keys.columns
        return list(dict.fromkeys(names))

    @property
    def needed(self) -> list[str]:
        """Columns to read from the file: the wanted ones, virtual ones replaced by their source."""
        sources = {v.name: sorted(v.expression.columns) for v in self.virtual}
        return list(dict.fromkeys(source for n in self.wanted for source in sources.get(n, [n])))


class SplitReader:
    def __init__(self, cached_row_groups: int = 8) -> None:
        self._cache: OrderedDict[tuple[object, ...], pa.Table] = OrderedDict()
        self._limit = cached_row_groups
        self._lock = threading.Lock()

    def page(self, read: SplitRead, start: PagePosition, max_bytes: int, row_sizes: RowSizes) -> Page:
        """Rows from `start` that fit in `max_bytes` (at least one row, so paging always moves on),
        and the position after them. Without columns, the remaining row count in one page."""
        try:
            parquet = pq.ParquetFile(read.storage.open_input_file(read.file))
        except (OSError, pa.ArrowInvalid) as exc:
            raise TableCorruptError(
                f"cannot read data file {read.storage.full_uri(read.file)}: {exc}"
            ) from exc
        if not read.columns:
            return self._count(read, parquet, start)
        pieces: list[pa.Table] = []
        budget = max_bytes
        position = start
        while position.row_group < parquet.num_row_groups:
            rows = self._row_group(read, parquet, position.row_group)
            rest = rows.slice(position.row)
            sizes = np.cumsum(row_sizes(rest))
            fits = int(np.searchsorted(sizes, budget, side="right"))
            if fits == 0 and not pieces and rest.num_rows:
                fits = 1  # one row larger than the budget still has to be sent
            pieces.append(rest.slice(0, fits))
            if fits < rest.num_rows:
                return _page(pieces, read, PagePosition(position.row_group, position.row + fits))
            budget -= int(sizes[-1]) if len(sizes) else 0
            position = PagePosition(position.row_group + 1, 0)
        return _page(pieces, read, None)

    def _count(self, read: SplitRead, parquet: pq.ParquetFile, start: PagePosition) -> Page:
        total = 0
        for index in range(start.row_group, parquet.num_row_groups):
            if read.keys is None:
                total += parquet.metadata.row_group(index).num_rows
            else:
                total += self._row_group(read, parquet, index).num_rows
        return Page(pa.table({}), total - start.row, None)

    def _row_group(self, read: SplitRead, parquet: pq.ParquetFile, index: int) -> pa.Table:
        key = (read.identity, index, read.columns)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
        rows = self._filtered(read, parquet, index)
        with self._lock:
            self._cache[key] = rows
            while len(self._cache) > self._limit:
                self._cache.popitem(last=False)
        return rows

    def _filtered(self, read: SplitRead, parquet: pq.ParquetFile, index: int) -> pa.Table:
        needed = read.needed
        arrow_schema = read.schema.to_arrow()
        stored = set(parquet.schema_arrow.names)
        try:
            rows = parquet.read_row_group(index, columns=[c for c in needed if c in stored])
        except (OSError, pa.ArrowInvalid, KeyError) as exc:
            raise TableCorruptError(
                f"cannot read row group {index} of {read.storage.full_uri(read.file)}: {exc}"
            ) from exc
        # An adopted file may keep its partition columns only in its path.
        rows = fill_columns(rows, partition_of(read.file), read.schema, needed)
        wanted = set(read.wanted)
        for column in read.virtual:
            if column.name in wanted:
                rows = rows.append_column(
                    arrow_schema.field(column.name),
                    column.expression.arrow(rows),
                )
        if read.columns:
            expression = row_filter(read.constraint, read.schema)
            if expression is not None:
                rows = rows.filter(expression)
        if read.keys is not None:
            rows = rows.filter(_key_mask(rows, read.keys))
        return rows.select(list(read.columns))


def _key_mask(rows: pa.Table, keys: KeyFilter) -> pa.Array:
    columns = keys.columns
    if len(columns) == 1:
        return pc.is_in(rows.column(columns[0]), keys.keys.column(0).cast(rows.schema.field(columns[0]).type))
    marked = keys.keys.cast(rows.select(columns).schema).append_column(
        "_lp_hit", pa.array(np.ones(keys.keys.num_rows, bool))
    )
    numbered = rows.select(columns).append_column("_lp_row", pa.array(np.arange(rows.num_rows)))
    joined = numbered.join(marked, columns, join_type="left outer")
    hits = joined.filter(pc.is_valid(joined.column("_lp_hit"))).column("_lp_row").to_numpy()
    mask = np.zeros(rows.num_rows, bool)
    mask[hits] = True
    return pa.array(mask)


def _page(pieces: list[pa.Table], read: SplitRead, after: PagePosition | None) -> Page:
    if not pieces:
        rows = read.schema.to_arrow().empty_table().select(list(read.columns))
    else:
        rows = pa.concat_tables(pieces) if len(pieces) > 1 else pieces[0]
    return Page(rows, rows.num_rows, after)
