"""Index definitions (RFC-63 `.index_defs`): `.lakeprune/index_defs.json` lists every user-defined
index of a table with its name, type, source columns, options, state (`building` until its build
has caught up, then `ready`) and the instant it is complete up to. The `files` and `record_index`
partitions are built in and always present; they are not listed here.

Each data-skipping type exists at most once per table and owns the metadata partition named after
the type (`column_stats`, `partition_stats`, `bloom_filters`). Secondary indexes (RFC-77) cover one
to four columns each, or an expression (then `expression` is set and `columns` are the ones it
reads), any number per table, each in partition `secondary_index_<name>`. Functional
indexes (RFC-63, type `functional`) may be many too: each has an expression (a tree over one or more
columns, `pruner.functions`, in the text format `expression_format`), a kind (`column_stats`,
`value_list` or `bloom_filters`) and its own partition `func_index_<name>`. Text
indexes (RFC-51) may be many: each covers one string column, or `lower` / `upper` of it (its
expression), in partition `text_index_<name>`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from pruner.errors import IndexUnusableError, InvalidNameError, TableCorruptError
from pruner.format.layout import META_DIR
from pruner.functions.parsing import EXPRESSION_FORMAT
from pruner.identifiers import check_identifier
from pruner.storage import Storage

INDEX_DEFS = f"{META_DIR}/index_defs.json"
BUILT_IN = ("files", "record_index")
DEFAULT_BLOOM_FPP = 0.01


class IndexType(StrEnum):
    COLUMN_STATS = "column_stats"
    PARTITION_STATS = "partition_stats"
    BLOOM_FILTERS = "bloom_filters"
    SECONDARY_INDEX = "secondary_index"
    FUNCTIONAL = "functional"
    TEXT = "text"


class FunctionalKind(StrEnum):
    """How a functional index (RFC-63) stores its expression's values: min / max per file, value ->
    files, or a bloom filter per file."""

    COLUMN_STATS = "column_stats"
    VALUE_LIST = "value_list"
    BLOOM_FILTERS = "bloom_filters"


class IndexState(StrEnum):
    BUILDING = "building"
    READY = "ready"


@dataclass(frozen=True)
class IndexDefinition:
    name: str
    index_type: IndexType
    columns: tuple[str, ...]
    options: Mapping[str, str] = field(default_factory=dict)
    state: IndexState = IndexState.BUILDING
    complete_up_to: str | None = None
    expression: str | None = None  # an index over an expression: its canonical text, e.g. "hour(ts)"
    # How a functional index stores its expression's values (None for every other type, and read
    # as column stats by the functional kind).
    kind: FunctionalKind | None = None
    # The latest instant when the index was created (None: before the first). Files of its
    # partition written up to then belong to an earlier index of the same name, dropped since.
    created_after: str | None = None
    # False for a definition saved before `created_after` was recorded: its partition's files
    # are found by listing storage.
    generation_known: bool = True
    # The version of the expression's text (`pruner.functions.EXPRESSION_FORMAT`); definitions saved
    # before versions were recorded hold format 1 (one call over one column), which format 2 reads.
    expression_format: int = EXPRESSION_FORMAT

    @property
    def readable(self) -> bool:
        """Whether this lakeprune reads the definition's expression (not one of a newer format)."""
        return self.expression is None or self.expression_format <= EXPRESSION_FORMAT

    @property
    def usable(self) -> bool:
        """Whether the name follows the naming rule and the expression is readable (see
        `check_usable`)."""
        try:
            check_identifier(self.name, "index")
        except InvalidNameError:
            return False
        return self.readable

    def check_usable(self) -> None:
        """Raise unless the name follows the naming rule. `define` refuses such names; this catches
        a definition stored before the rule existed (a name too long for a directory name made every
        write fail), so that whatever would read or write its partition stops with the way out."""
        try:
            check_identifier(self.name, "index")
        except InvalidNameError as exc:
            raise IndexUnusableError(
                f"{exc}; this index cannot be used: drop it (DROP INDEX with its full name) "
                "and create it again under a valid name"
            ) from None
        if not self.readable:
            raise IndexUnusableError(
                f"index {self.name} is over an expression of format {self.expression_format}, which a "
                f"newer lakeprune wrote (this one reads up to {EXPRESSION_FORMAT}): upgrade lakeprune"
            )

    @property
    def fpp(self) -> float:
        return float(self.options.get("fpp", DEFAULT_BLOOM_FPP))

    def covers(self, instant: str | None) -> bool:
        """Whether the index holds the rows of every file live at snapshot `instant`: it is ready
        and its build had caught up by then (a ready index created before the first write covers
        every snapshot). Per-file indexes can do without this (a file without index rows is kept),
        but an index keyed by value (a secondary index) cannot tell an unindexed file from one
        without the value, so it may be used only at the snapshots it covers."""
        if self.state != IndexState.READY:
            return False
        return self.complete_up_to is None or (instant is not None and instant >= self.complete_up_to)

    def ready(self, instant: str) -> IndexDefinition:
        return replace(self, state=IndexState.READY, complete_up_to=instant)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "type": str(self.index_type),
            "columns": list(self.columns),
            "expression": self.expression,
            "options": dict(self.options),
            "state": str(self.state),
            "complete_up_to": self.complete_up_to,
        }
        if self.generation_known:
            data["created_after"] = self.created_after
        if self.expression is not None:
            data["expression_format"] = self.expression_format
            head = self.expression.partition("(")[0]
            if head.isidentifier():  # an index over a call: its outermost function
                data["function"] = head
        if self.kind is not None:  # RFC-63's name of a functional index's backing kind
            data["index_type"] = str(self.kind)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> IndexDefinition:
        return cls(
            str(data["name"]),
            IndexType(data["type"]),
            tuple(data["columns"]),
            dict(data.get("options") or {}),
            IndexState(data["state"]),
            data.get("complete_up_to"),
            data.get("expression"),
            FunctionalKind(data["index_type"]) if data.get("index_type") else None,
            data.get("created_after"),
            "created_after" in data,
            int(data.get("expression_format", 1)),
        )


def load_definitions(storage: Storage) -> list[IndexDefinition]:
    if not storage.exists(INDEX_DEFS):
        return []
    try:
        data = json.loads(storage.read_bytes(INDEX_DEFS))
        return [IndexDefinition.from_json(item) for item in data["indexes"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TableCorruptError(f"{storage.full_uri(INDEX_DEFS)} is corrupt: {exc}") from exc


def save_definitions(storage: Storage, definitions: list[IndexDefinition]) -> None:
    content = {"indexes": [d.to_json() for d in sorted(definitions, key=lambda d: d.name)]}
    storage.publish(INDEX_DEFS, json.dumps(content, indent=2).encode())
