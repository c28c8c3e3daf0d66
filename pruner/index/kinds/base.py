"""The members every index kind implements (`IndexKind`) and what a removed or rewritten data file
leaves behind in a kind's partition (`Leftover`). Kept apart from the registry in `__init__` so that
the kind modules and the registry import this module, never each other."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import Enum
from typing import Protocol

import pyarrow as pa

from pruner.errors import InvalidInputError
from pruner.format.config import TableConfig, TableProperties
from pruner.index.definitions import FunctionalKind, IndexDefinition, IndexType
from pruner.metadata.spec import IndexPartitionSpec
from pruner.types import TableSchema


class Leftover(Enum):
    """What a commit writes into an index partition for the data files it removes or rewrites."""

    # A delete of every (column, partition, file) key of the removed files, after the upserts.
    TOMBSTONES = "tombstones"
    # Rows keyed by value: the task of each bucket deletes the rows the removed files had before.
    PREVIOUS = "previous"
    # Nothing from the driver: the write tasks ship the pair changes of every file group.
    NOTHING = "nothing"
    # The partition's rows are re-aggregated for each touched partition after the commit.
    REAGGREGATE = "reaggregate"


def fpp_option(value: str) -> str:
    """The `fpp` option: a false-positive probability in (0, 0.5)."""
    try:
        fpp = float(value)
    except ValueError:
        raise InvalidInputError(f"option fpp must be a number, got {value!r}") from None
    if not 0.0 < fpp < 0.5:
        raise InvalidInputError(f"option fpp must be between 0 and 0.5, got {value}")
    return repr(fpp)


class IndexKind(Protocol):
    """One index type's behaviour. A kind takes definitions, data rows and the table's properties
    and schema: never a table or snapshot object, so that it imports nothing of `pruner.table`."""

    @property
    def index_type(self) -> IndexType:
        """The type this kind implements (the registry maps it back to the kind)."""
        ...

    @property
    def requires(self) -> tuple[IndexType, ...]:
        """The index types that must be defined, and ready, before this one can be built."""
        ...

    @property
    def many_per_table(self) -> bool:
        """Whether a table may define any number of indexes of this type (else at most one)."""
        ...

    @property
    def options(self) -> Mapping[str, Callable[[str], str]]:
        """The options `CREATE INDEX ... OPTIONS` accepts, each with its validator, which returns
        the normalised text or raises InvalidInputError."""
        ...

    def check_columns(self, config: TableConfig, columns: list[str], expression: str | None = None) -> None:
        """Raise InvalidInputError unless an index of this type can cover `columns` of the table
        (known and distinct already), the columns `expression` reads when it is over one (as
        `bind_expression` returned them)."""
        ...

    def check_options(self, options: Mapping[str, str]) -> None:
        """Raise InvalidInputError for options each valid alone (`options`) but not together."""
        ...

    def bind_expression(self, config: TableConfig, expression: str) -> tuple[list[str], str]:
        """For `CREATE INDEX ... USING type (expression)`: the columns the expression reads and its
        text as the definition stores it; InvalidInputError for a kind that covers columns only."""
        ...

    def partition_name(self, definition: IndexDefinition) -> str:
        """The metadata partition holding the index of `definition`."""
        ...

    def spec(
        self, definition: IndexDefinition, properties: TableProperties, schema: TableSchema
    ) -> IndexPartitionSpec:
        """The partition's key, hash field, schema and number of buckets."""
        ...

    def file_rows(
        self, rows: pa.Table, schema: TableSchema, definition: IndexDefinition, partition: str, file_name: str
    ) -> pa.Table | None:
        """The index rows one data file contributes (None: the kind has no per-file rows; they are
        derived from other rows, or shipped as pair changes by the write tasks)."""
        ...

    def leftover(self, definition: IndexDefinition) -> Leftover:
        """What a removed or rewritten data file leaves behind in the partition."""
        ...

    def reads(self, definition: IndexDefinition, record_key: tuple[str, ...]) -> tuple[str, ...]:
        """The data columns its rows are computed from."""
        ...

    def prunes_by(
        self, definition: IndexDefinition, schema: TableSchema, instant: str | None
    ) -> tuple[str, ...]:
        """The columns (and virtual columns) a predicate on that column alone can prune snapshot
        `instant` by through this ready index, as the kind's planner step would use it."""
        ...

    def column_keys(self, definition: IndexDefinition) -> tuple[str, ...]:
        """The values its rows carry in their `column` key field, which a removed file's tombstones
        name (`Leftover.TOMBSTONES`)."""
        ...

    def file_group_changes(
        self,
        old: pa.Table | None,
        new: pa.Table,
        definition: IndexDefinition,
        record_key: tuple[str, ...],
        spec: IndexPartitionSpec,
        full: bool,
    ) -> pa.Table | None:
        """For a kind keyed by value and record key (`Leftover.NOTHING`): the log rows, with op, of
        one file group rewritten from `old` (None: a new group) to `new`; with `full`, every row of
        `new` is upserted. None for a kind whose rows are per file."""
        ...


class PerFileDefaults:
    """What most kinds share, for a kind to inherit and override where it differs: no required
    kinds, one index per table, no options, any columns, rows computed from the indexed columns
    and keyed by their names, and no pair changes (its rows are per file)."""

    index_type: IndexType
    requires: tuple[IndexType, ...] = ()
    many_per_table = False
    options: Mapping[str, Callable[[str], str]] = {}

    def check_columns(self, config: TableConfig, columns: list[str], expression: str | None = None) -> None:
        return None

    def check_options(self, options: Mapping[str, str]) -> None:
        return None

    def bind_expression(self, config: TableConfig, expression: str) -> tuple[list[str], str]:
        kinds = " or ".join(FunctionalKind)
        raise InvalidInputError(
            f"a functional index is USING {kinds}; "
            f"a {self.index_type} index covers columns, not {expression!r}"
        )

    def reads(self, definition: IndexDefinition, record_key: tuple[str, ...]) -> tuple[str, ...]:
        return definition.columns

    def prunes_by(
        self, definition: IndexDefinition, schema: TableSchema, instant: str | None
    ) -> tuple[str, ...]:
        return definition.columns

    def column_keys(self, definition: IndexDefinition) -> tuple[str, ...]:
        return definition.columns

    def file_group_changes(
        self,
        old: pa.Table | None,
        new: pa.Table,
        definition: IndexDefinition,
        record_key: tuple[str, ...],
        spec: IndexPartitionSpec,
        full: bool,
    ) -> pa.Table | None:
        return None
