"""The `text` kind (RFC-51, issue 37): per (partition, file), a split-block bloom filter of the
terms of one string column's text (`pruner.index.tokenizers`: n-grams or lower-cased words, of the
column as stored or of `lower(col)` / `upper(col)`), sized for the definition's false-positive
probability, and the file's distinct term count, in partition `text_index_<name>`; any number per
table, one per subject. A per-file filter, as StarRocks' n-gram bloom filter index, rather than
postings keyed by term: its rows are per file and hash on the partition path like the other
per-file kinds, so a commit rewrites only the buckets of the partitions it touched and a removed
file's row is tombstoned (`Leftover.TOMBSTONES`) with nothing to diff; and a prune reads the rows
of the partitions in play once and probes each file's filter with the few terms of its pattern,
a cost per file in play, not per term (a common gram's postings would list most files). Its
price: a filter answers "may hold" for a term it lacks at the fpp, and the index holds no term
frequencies (a term in every file probed is reported as a stop-gram, it prunes nothing)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pyarrow as pa
from sqlglot import exp

from pruner.errors import IndexUnusableError, InvalidInputError
from pruner.format.config import TableConfig, TableProperties
from pruner.functions.parsing import parse_sql
from pruner.index import bloom
from pruner.index.definitions import IndexDefinition, IndexType
from pruner.index.kinds.base import Leftover, PerFileDefaults, fpp_option
from pruner.index.tokenizers import DEFAULT_N, MAX_N, MIN_N, Tokenizer, TokenizerName, case_forms
from pruner.metadata.spec import IndexPartitionSpec
from pruner.predicate.text import Case, TextSubject
from pruner.types import TableSchema, TypeKind

TEXT_SCHEMA = pa.schema(
    [
        pa.field("column", pa.string(), nullable=False),
        pa.field("partition", pa.string(), nullable=False),
        pa.field("file_name", pa.string(), nullable=False),
        pa.field("filter", pa.binary()),
        pa.field("terms", pa.int64()),
    ]
)
_CASES = {case.value: case for case in (Case.LOWER, Case.UPPER)}


def _tokenizer(value: str) -> str:
    try:
        return TokenizerName(value.lower()).value
    except ValueError:
        known = ", ".join(t.value for t in TokenizerName)
        raise InvalidInputError(f"option tokenizer must be one of {known}, got {value!r}") from None


def _n(value: str) -> str:
    try:
        n = int(value)
    except ValueError:
        raise InvalidInputError(f"option n must be an integer, got {value!r}") from None
    if not MIN_N <= n <= MAX_N:
        raise InvalidInputError(f"option n must be between {MIN_N} and {MAX_N}, got {n}")
    return str(n)


def tokenizer_of(definition: IndexDefinition) -> Tokenizer:
    """How the index of `definition` tokenises (its options; n-grams of 3 by default).
    IndexUnusableError for options `CREATE INDEX` would have refused (a hand-edited definition)."""
    try:
        name = TokenizerName(definition.options.get("tokenizer", TokenizerName.NGRAM))
        return Tokenizer(name, int(definition.options.get("n", DEFAULT_N)))
    except ValueError as exc:
        raise IndexUnusableError(f"text index {definition.name} has unusable options: {exc}") from None


def subject_of(definition: IndexDefinition) -> TextSubject:
    """The text the index of `definition` holds: its column, or `lower` / `upper` of it.
    IndexUnusableError for any other expression (a hand-edited definition)."""
    if definition.expression is None:
        return TextSubject(definition.columns[0])
    try:
        name, column = _case_call(definition.expression)
        return TextSubject(column, _CASES[name])
    except InvalidInputError:
        raise IndexUnusableError(
            f"text index {definition.name} is over {definition.expression!r}, not lower or upper of a column"
        ) from None


def _case_call(expression: str) -> tuple[str, str]:
    """(`lower` or `upper`, the column) of a text index's expression; InvalidInputError for others."""
    node = parse_sql(expression)
    arguments = node.expressions if isinstance(node, exp.Anonymous) else []
    column = arguments[0] if len(arguments) == 1 else None
    if node.name.lower() in _CASES and isinstance(column, exp.Column) and not column.table:
        return node.name.lower(), column.name.lower()
    raise InvalidInputError(
        f"a text index is on a column, lower(column) or upper(column), not {expression!r}"
    )


class Text(PerFileDefaults):
    index_type = IndexType.TEXT
    many_per_table = True
    options: Mapping[str, Callable[[str], str]] = {"tokenizer": _tokenizer, "n": _n, "fpp": fpp_option}

    def bind_expression(self, config: TableConfig, expression: str) -> tuple[list[str], str]:
        name, column = _case_call(expression)
        return [column], f"{name}({column})"

    def check_options(self, options: Mapping[str, str]) -> None:
        if "n" in options and options.get("tokenizer", TokenizerName.NGRAM) != TokenizerName.NGRAM:
            raise InvalidInputError("option n is the gram length of tokenizer 'ngram'; 'words' takes none")

    def check_columns(self, config: TableConfig, columns: list[str], expression: str | None = None) -> None:
        if len(columns) != 1:
            raise InvalidInputError("a text index covers exactly one column: USING text (col)")
        kind = config.schema.column(columns[0]).type.kind
        if kind is not TypeKind.STRING:
            raise InvalidInputError(f"a text index covers a string column; {columns[0]!r} is {kind}")

    def partition_name(self, definition: IndexDefinition) -> str:
        return f"text_index_{definition.name}"

    def spec(
        self, definition: IndexDefinition, properties: TableProperties, schema: TableSchema
    ) -> IndexPartitionSpec:
        keys = ("column", "partition", "file_name")
        return IndexPartitionSpec(
            self.partition_name(definition),
            keys,
            "partition",
            TEXT_SCHEMA,
            properties.index_bloom_filters_buckets,
        )

    def file_rows(
        self, rows: pa.Table, schema: TableSchema, definition: IndexDefinition, partition: str, file_name: str
    ) -> pa.Table | None:
        subject = subject_of(definition)
        terms = tokenizer_of(definition).terms(case_forms(rows.column(subject.column), subject.case))
        data = bloom.build(terms, bloom.num_bytes_for(len(terms), definition.fpp))
        row = {
            "column": subject.column,
            "partition": partition,
            "file_name": file_name,
            "filter": data,
            "terms": len(terms),
        }
        return pa.Table.from_pylist([row], schema=TEXT_SCHEMA)

    def leftover(self, definition: IndexDefinition) -> Leftover:
        return Leftover.TOMBSTONES

    def prunes_by(
        self, definition: IndexDefinition, schema: TableSchema, instant: str | None
    ) -> tuple[str, ...]:
        return ()  # it answers text conditions, never a TupleDomain (a dynamic filter)


KIND = Text()
