"""The `text` kind: what `CREATE INDEX ... USING text` accepts (a string column or expression, or
lower / upper of one, the tokenizer options), the errors it gives, and the row it writes per data
file (a bloom filter holding every term of the file's text, and the term count)."""

from __future__ import annotations

from dataclasses import replace

import pyarrow as pa
import pytest

from pruner.errors import IndexUnusableError, InvalidInputError
from pruner.format.config import TableConfig
from pruner.index import bloom
from pruner.index.defining import define
from pruner.index.definitions import IndexDefinition, IndexType
from pruner.index.kinds import kind_of
from pruner.index.kinds.text import TEXT_SCHEMA, subject_of, tokenizer_of
from pruner.index.sql import CreateIndex, parse_statement
from pruner.index.tokenizers import Tokenizer, TokenizerName
from pruner.predicate.text import Case, Fragment, TextSubject
from pruner.types import TableSchema

CONFIG = TableConfig("t", TableSchema.parse("id bigint, msg string, n bigint, day date"), ("id",))
SCHEMA = CONFIG.schema


def _create(sql: str, existing: list[IndexDefinition] | None = None) -> IndexDefinition:
    statement = parse_statement(sql)
    assert isinstance(statement, CreateIndex)
    return define(
        CONFIG,
        existing or [],
        statement.name,
        statement.index_type,
        list(statement.columns),
        statement.options,
        statement.expression,
    )


def test_a_text_index_is_trigrams_of_a_column_by_default() -> None:
    definition = _create("CREATE INDEX msg_text ON t USING text (msg)")
    assert (definition.index_type, definition.columns, definition.expression) == (
        IndexType.TEXT,
        ("msg",),
        None,
    )
    assert tokenizer_of(definition) == Tokenizer(TokenizerName.NGRAM, 3)
    assert subject_of(definition, SCHEMA) == TextSubject("msg")


def test_options_choose_the_tokenizer_and_fpp() -> None:
    grams = _create(
        "CREATE INDEX g ON t USING text (msg) OPTIONS (tokenizer = 'NGRAM', n = '4', fpp = '0.05')"
    )
    assert grams.options == {"tokenizer": "ngram", "n": "4", "fpp": "0.05"}
    assert tokenizer_of(grams) == Tokenizer(TokenizerName.NGRAM, 4) and grams.fpp == 0.05
    words = _create("CREATE INDEX w ON t USING text (msg) OPTIONS (tokenizer = 'words')")
    assert tokenizer_of(words).name is TokenizerName.WORDS


@pytest.mark.parametrize(("expression", "case"), [("lower(msg)", Case.LOWER), ("UPPER( msg )", Case.UPPER)])
def test_a_text_index_over_lower_or_upper_of_a_column(expression: str, case: Case) -> None:
    definition = _create(f"CREATE INDEX x ON t USING text ({expression})")
    assert definition.columns == ("msg",) and definition.expression == f"{case.value}(msg)"
    assert subject_of(definition, SCHEMA) == TextSubject("msg", case)
    assert IndexDefinition.from_json(definition.to_json()) == definition
    assert "index_type" not in definition.to_json()  # the functional indexes' backing kind


def test_many_text_indexes_per_table() -> None:
    first = _create("CREATE INDEX a ON t USING text (msg)")
    second = _create("CREATE INDEX b ON t USING text (lower(msg)) OPTIONS (tokenizer = 'words')", [first])
    assert kind_of(IndexType.TEXT).partition_name(second) == "text_index_b"


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        ("CREATE INDEX x ON t USING text (n)", "a text index covers a string column; 'n' is bigint"),
        ("CREATE INDEX x ON t USING text (msg, id)", "exactly one column"),
        ("CREATE INDEX x ON t USING text (nope)", "unknown column"),
        ("CREATE INDEX x ON t USING text (length(msg))", "is bigint, not a string"),
        ("CREATE INDEX x ON t USING text (substring(lower(msg), 1, 3))", "cases text inside an expression"),
        ("CREATE INDEX x ON t USING text (lower(n))", "lower takes a value of type string, not bigint"),
        ("CREATE INDEX x ON t USING text (lower(nope))", "unknown column"),
        ("CREATE INDEX x ON t USING text (msg) OPTIONS (tokenizer = 'lucene')", "one of ngram, words"),
        ("CREATE INDEX x ON t USING text (msg) OPTIONS (n = '6')", "option n must be between 2 and 5, got 6"),
        ("CREATE INDEX x ON t USING text (msg) OPTIONS (n = 'three')", "option n must be an integer"),
        ("CREATE INDEX x ON t USING text (msg) OPTIONS (fpp = '0.7')", "option fpp must be between"),
        (
            "CREATE INDEX x ON t USING text (msg) OPTIONS (tokenizer = 'words', n = '2')",
            "option n is the gram length of tokenizer 'ngram'",
        ),
        (
            "CREATE INDEX x ON t USING text (msg) OPTIONS (stemmer = 'en')",
            "unknown option 'stemmer' for text",
        ),
        ("CREATE INDEX x ON t USING partition_stats (lower(msg))", "partition_stats index covers columns"),
    ],
)
def test_mistakes_are_one_line_errors(sql: str, error: str) -> None:
    with pytest.raises(InvalidInputError, match=error) as raised:
        _create(sql)
    assert "\n" not in str(raised.value)


def test_functional_indexes_are_still_defined_by_an_expression() -> None:
    assert _create("CREATE INDEX h ON t (length(msg))").index_type == IndexType.FUNCTIONAL
    assert _create("CREATE INDEX h ON t USING value_list (lower(msg))").index_type == IndexType.FUNCTIONAL


def _filter_row(definition: IndexDefinition, values: list[str | None]) -> dict[str, object]:
    rows = pa.table({"id": pa.array(range(len(values)), pa.int64()), "msg": pa.array(values, pa.string())})
    built = kind_of(IndexType.TEXT).file_rows(rows, CONFIG.schema, definition, "p=1", "f.parquet")
    assert built is not None and built.schema == TEXT_SCHEMA and built.num_rows == 1
    row: dict[str, object] = built.to_pylist()[0]
    return row


def _holds(row: dict[str, object], terms: bloom.U64Array) -> bool:
    data = row["filter"]
    assert isinstance(data, bytes)
    return bool(bloom.might_contain(data, terms).all())


def test_a_files_row_holds_every_term_of_its_text() -> None:
    definition = _create("CREATE INDEX x ON t USING text (msg)")
    values = ["connection timeout after 5s", None, "ok", "disk full"]
    row = _filter_row(definition, values)
    assert {k: row[k] for k in ("column", "partition", "file_name")} == {
        "column": "msg",
        "partition": "p=1",
        "file_name": "f.parquet",
    }
    tokenizer = tokenizer_of(definition)
    assert row["terms"] == len(tokenizer.terms(pa.array(values)))
    assert _holds(row, tokenizer.fragment_terms(Fragment("timeout")))
    assert _holds(row, tokenizer.fragment_terms(Fragment("disk f")))
    assert not _holds(row, tokenizer.fragment_terms(Fragment("zqxjkv wvuts")))


def test_an_index_on_lower_holds_both_case_mappings() -> None:
    definition = _create("CREATE INDEX x ON t USING text (lower(msg))")
    row = _filter_row(definition, ["İSTANBUL Straße", "ABC"])
    tokenizer = tokenizer_of(definition)
    for fragment in ("istanbul", "i\u0307stanbul", "straße", "abc"):  # Trino's and Spark's lower()
        assert _holds(row, tokenizer.fragment_terms(Fragment(fragment)))


def test_a_file_without_text_has_an_empty_filter() -> None:
    definition = _create("CREATE INDEX x ON t USING text (msg) OPTIONS (tokenizer = 'words')")
    row = _filter_row(definition, [None, "", " -- "])
    assert row["terms"] == 0 and row["filter"] == bytes(bloom.MIN_BYTES)


def test_a_hand_edited_definition_is_unusable() -> None:
    definition = _create("CREATE INDEX x ON t USING text (lower(msg))")
    with pytest.raises(IndexUnusableError, match="text index x has unusable options"):
        tokenizer_of(replace(definition, options={"n": "9"}))
    with pytest.raises(IndexUnusableError, match="text index x has unusable options"):
        tokenizer_of(replace(definition, options={"tokenizer": "lucene"}))
    with pytest.raises(IndexUnusableError, match=r"is over 'trim\(gone\)'"):
        subject_of(replace(definition, expression="trim(gone)"), SCHEMA)  # a column since dropped


@pytest.mark.parametrize(
    ("expression", "subject", "texts", "absent"),
    [
        (
            "substring(msg, 1, 5)",
            TextSubject("substring(msg, 1, 5)", expression=True),
            ["  err", "timeo"],
            "disk",
        ),
        (
            "lower(trim(msg))",
            TextSubject("trim(msg)", Case.LOWER, expression=True),
            ["error: disk full", "timeout after 5s"],
            "  err",
        ),
        (
            "regexp_extract(msg, '^([a-z]+) ', 1)",
            TextSubject("regexp_extract(msg, '^([a-z]+) ', 1)", expression=True),
            ["timeout"],
            "after",
        ),
    ],
)
def test_a_text_index_over_a_string_expression(
    expression: str, subject: TextSubject, texts: list[str], absent: str
) -> None:
    """The file's row holds the terms of the expression's values (NULL: none), not the column's."""
    definition = _create(f"CREATE INDEX x ON t USING text ({expression})")
    assert definition.columns == ("msg",) and subject_of(definition, SCHEMA) == subject
    row = _filter_row(definition, ["  error: disk full", "timeout after 5s", None])
    tokenizer = tokenizer_of(definition)
    assert row["column"] == "x" and row["terms"] == len(tokenizer.terms(pa.array(texts)))
    assert kind_of(IndexType.TEXT).column_keys(definition) == ("x",)  # what a removed file's tombstone names
    assert all(_holds(row, tokenizer.fragment_terms(Fragment(text))) for text in texts)
    assert not _holds(row, tokenizer.fragment_terms(Fragment(absent)))
