"""The `text` kind (RFC-51, issue 37): per (partition, file), a split-block bloom filter of the
terms of one string column's or string expression's text (`pruner.index.tokenizers`: n-grams or
lower-cased words, of the text as stored or of `lower` / `upper` of it,
`pruner.predicate.text_subjects`), sized for the definition's false-positive
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

import functools
from collections.abc import Callable, Mapping

import pyarrow as pa

from pruner.errors import IndexUnusableError, InvalidInputError
from pruner.format.config import TableConfig, TableProperties
from pruner.functions.expression import ColumnRef
from pruner.functions.parsing import parse_sql
from pruner.index import bloom
from pruner.index.definitions import IndexDefinition, IndexType
from pruner.index.kinds.base import Leftover, PerFileDefaults, fpp_option
from pruner.index.tokenizers import DEFAULT_N, MAX_N, MIN_N, Tokenizer, TokenizerName, case_forms
from pruner.metadata.spec import IndexPartitionSpec
from pruner.predicate.text import TextSubject
from pruner.predicate.text_subjects import BoundSubject, text_subject
from pruner.types import ColumnType, TableSchema, TypeKind

TEXT_SCHEMA = pa.schema(
    [
        pa.field("column", pa.string(), nullable=False),
        pa.field("partition", pa.string(), nullable=False),
        pa.field("file_name", pa.string(), nullable=False),
        pa.field("filter", pa.binary()),
        pa.field("terms", pa.int64()),
    ]
)


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


def subject_of(definition: IndexDefinition, schema: TableSchema) -> TextSubject:
    """The text the index of `definition` holds: its column, or the expression it is over
    (`pruner.predicate.text_subjects`). IndexUnusableError for an expression that does not bind to
    `schema` (a hand-edited definition, or a column since dropped)."""
    return _bound(definition, schema).subject


def _bound(definition: IndexDefinition, schema: TableSchema) -> BoundSubject:
    if definition.expression is None:
        column = definition.columns[0]
        return BoundSubject(TextSubject(column), ColumnRef(column, ColumnType(TypeKind.STRING)))
    try:
        return _bound_expression(definition.expression, schema)
    except InvalidInputError as exc:
        raise IndexUnusableError(
            f"text index {definition.name} is over {definition.expression!r}: {exc}"
        ) from None


@functools.lru_cache(maxsize=1024)
def _bound_expression(text: str, schema: TableSchema) -> BoundSubject:
    """An index's expression bound once per (text, schema), as functional indexes' are
    (`pruner.index.functional`): every file a write indexes and every prune would otherwise run
    sqlglot again (bound subjects are immutable, so they are shared)."""
    return text_subject(parse_sql(text), {c.name: c.type for c in schema.columns}, text)


def _column_key(definition: IndexDefinition) -> str:
    """The `column` key of the index's rows: its column, also under `lower` / `upper` (as before
    indexes over expressions), or else the index's name."""
    column = definition.columns[0]
    if definition.expression in (None, f"lower({column})", f"upper({column})"):
        return column
    return definition.name


class Text(PerFileDefaults):
    index_type = IndexType.TEXT
    many_per_table = True
    options: Mapping[str, Callable[[str], str]] = {"tokenizer": _tokenizer, "n": _n, "fpp": fpp_option}

    def bind_expression(self, config: TableConfig, expression: str) -> tuple[list[str], str]:
        types = {c.name: c.type for c in config.schema.columns}
        bound = text_subject(parse_sql(expression), types, expression)
        return sorted(bound.values.columns), bound.subject.sql()

    def check_options(self, options: Mapping[str, str]) -> None:
        if "n" in options and options.get("tokenizer", TokenizerName.NGRAM) != TokenizerName.NGRAM:
            raise InvalidInputError("option n is the gram length of tokenizer 'ngram'; 'words' takes none")

    def check_columns(self, config: TableConfig, columns: list[str], expression: str | None = None) -> None:
        if expression is not None:
            return  # `bind_expression` checked the expression's type and columns
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
        bound = _bound(definition, schema)
        terms = tokenizer_of(definition).terms(case_forms(bound.values.arrow(rows), bound.subject.case))
        data = bloom.build(terms, bloom.num_bytes_for(len(terms), definition.fpp))
        row = {
            "column": _column_key(definition),
            "partition": partition,
            "file_name": file_name,
            "filter": data,
            "terms": len(terms),
        }
        return pa.Table.from_pylist([row], schema=TEXT_SCHEMA)

    def column_keys(self, definition: IndexDefinition) -> tuple[str, ...]:
        return (_column_key(definition),)

    def leftover(self, definition: IndexDefinition) -> Leftover:
        return Leftover.TOMBSTONES

    def prunes_by(
        self, definition: IndexDefinition, schema: TableSchema, instant: str | None
    ) -> tuple[str, ...]:
        return ()  # it answers text conditions, never a TupleDomain (a dynamic filter)


KIND = Text()
