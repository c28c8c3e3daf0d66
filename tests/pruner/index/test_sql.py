"""pruner.index.sql: option values are read as written — signs included — and anything that is not a
literal is refused instead of being reduced to a part of it; Spark SQL's spellings (`ON TABLE`,
backquotes, a table with its database) and REFRESH INDEX."""

from __future__ import annotations

import pytest

from pruner.errors import InvalidInputError
from pruner.format.config import TableConfig
from pruner.index.defining import define
from pruner.index.sql import CreateIndex, DropIndex, RefreshIndex, ShowIndexes, Statement, parse_statement
from pruner.types import TableSchema


def _options(text: str) -> dict[str, str]:
    statement = parse_statement(f"CREATE INDEX b ON t USING bloom_filters (id) OPTIONS ({text})")
    assert isinstance(statement, CreateIndex)
    return statement.options


@pytest.mark.parametrize(
    ("written", "value"),
    [
        ("0.01", "0.01"),
        ("-1", "-1"),
        ("- 1", "-1"),
        ("-0.5", "-0.5"),
        ("1e-3", "1e-3"),
        ("-1e-3", "-1e-3"),
        ("1.50", "1.50"),
        ("'0.01'", "0.01"),
        ("'-1'", "-1"),
        ("'red'", "red"),
        ("true", "true"),
        ("FALSE", "false"),
        ("red", "red"),
    ],
)
def test_literal_values_as_written(written: str, value: str) -> None:
    assert _options(f"fpp = {written}") == {"fpp": value}
    assert _options(f"FPP = {written}, other = 2") == {"fpp": value, "other": "2"}


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("1 + 1", "1 + 1"),
        ("(1)", "(1)"),
        ("-(1)", "-(1)"),
        ("-'a'", "-'a'"),
        ("NULL", "NULL"),
        ("DATE '2020-01-01'", "CAST('2020-01-01' AS DATE)"),
    ],
)
def test_values_that_are_not_literals_are_refused(written: str, shown: str) -> None:
    with pytest.raises(InvalidInputError, match="must be a number, a string or a boolean") as raised:
        _options(f"fpp = {written}")
    assert str(raised.value).endswith(f"got {shown}")


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ("-1", "between 0 and 0.5, got -1"),
        ("-0.01", "between 0 and 0.5, got -0.01"),  # used to be read as 0.01 and accepted
        ("0", "between 0 and 0.5, got 0"),
        ("'x'", "must be a number, got 'x'"),
        ("true", "must be a number, got 'true'"),
    ],
)
def test_fpp_errors_name_the_value_written(written: str, message: str) -> None:
    config = TableConfig("t", TableSchema.parse("id bigint"), ("id",))
    statement = parse_statement(f"CREATE INDEX b ON t USING bloom_filters (id) OPTIONS (fpp = {written})")
    assert isinstance(statement, CreateIndex)
    with pytest.raises(InvalidInputError, match=message):
        define(config, [], statement.name, statement.index_type, list(statement.columns), statement.options)


@pytest.mark.parametrize(
    ("sql", "dialect", "parsed"),
    [
        ("SHOW INDEXES ON t", None, ShowIndexes("t")),
        ("SHOW INDEX FROM db.t", None, ShowIndexes("t")),
        ("SHOW INDEXES IN spark_catalog.db.`my t`;", "spark", ShowIndexes("my t")),
        ("REFRESH INDEX bf", None, RefreshIndex("bf", None)),
        ("REFRESH INDEX bf ON TABLE db.t", "spark", RefreshIndex("bf", "t")),
        ("DROP INDEX IF EXISTS bf ON TABLE `db`.t", "spark", DropIndex("bf", "t", if_exists=True)),
        (
            "CREATE INDEX IF NOT EXISTS b ON TABLE db.`t` USING bloom_filters (`my c`) OPTIONS (fpp = 0.01)",
            "spark",
            CreateIndex("b", "t", "bloom_filters", ("my c",), {"fpp": "0.01"}, if_not_exists=True),
        ),
        (
            "CREATE INDEX h ON TABLE t (hour(ts))",
            "spark",
            CreateIndex("h", "t", None, (), expression="hour(ts)"),
        ),
    ],
)
def test_spark_sql_spellings(sql: str, dialect: str | None, parsed: Statement) -> None:
    assert parse_statement(sql, dialect) == parsed


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SHOW INDEXES ON", "expected SHOW INDEXES ON table"),
        ("SHOW INDEXES t", "expected SHOW INDEXES ON table"),
        ("SHOW INDEXES ON a.b.c.d", "expected SHOW INDEXES ON table"),
        ("REFRESH INDEX", "expected REFRESH INDEX name"),
        ("REFRESH INDEX a ON b c", "expected REFRESH INDEX name"),
        ("REFRESH TABLE t", "expected REFRESH INDEX name"),
    ],
)
def test_malformed_show_and_refresh_are_one_line_errors(sql: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        parse_statement(sql)
