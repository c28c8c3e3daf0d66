"""The people table of issue 38's "must show": indexes on the expressions users write, each queried
as a user would write the predicate, through Trino's native catalog and through Spark's
`format("lakeprune")` (answers checked against DuckDB over the same files, files kept counted).

Sixteen files of 64 rows, in record-key order; each file holds one block of names (their first
three letters), of pay, and one hour of `epoch`, so that the expression indexes can tell the files
apart: `lower(substring(name, 1, 3))` (column stats of a nested call), `salary + salary * pct`
(column stats of arithmetic over two columns, NULL where `pct` is), `hour(from_unixtime(epoch))`
(a time function over epoch seconds), a composite secondary index `(country, city)` whose pair
('FR', 'Paris') is in two files while each of its values is in every file, and a bloom filter on
`lower(email)`. `CASES` lists each predicate in Trino's, Spark's and DuckDB's SQL, with the files
at most kept. `ratio` (double) is NaN in every row of two files and ordered by file elsewhere, for
the engines' orders of NaN."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession

from builder import LakepruneTable

SCHEMA = (
    "id bigint, name string, email string, salary double, pct double, epoch bigint, "
    "country string, city string, ratio double"
)
FILES = 16
ROWS_PER_FILE = 64
# 2026-03-01T00:00:00Z: file f holds the epoch seconds of hour f of that day
BASE_EPOCH = 1_772_323_200
PREFIXES = ["Ada", "Ben", "Cal", "Dan", "Eve", "Fay", "Gus", "Hal"]
PREFIXES += ["Ivy", "Jon", "Kim", "Lea", "Max", "Ned", "Oli", "Pam"]
PCTS = [0.0, 0.1, 0.25, None]
PLACES = [("DE", "Berlin"), ("FR", "Austin"), ("US", "Paris")]  # never ('FR', 'Paris') ...
PAIR_ROWS = {5 * ROWS_PER_FILE + 7, 11 * ROWS_PER_FILE + 40}  # ... but in these rows
NAN_FILES = {4, 9}  # `ratio` is NaN in every row of these files (issue 38 item 4)
INDEXES = [
    "CREATE INDEX stats ON people USING column_stats",
    "CREATE INDEX name3 ON people (lower(substring(name, 1, 3)))",
    "CREATE INDEX pay ON people USING col_stats (salary + salary * pct)",
    "CREATE INDEX epoch_hour ON people (hour(from_unixtime(epoch)))",
    "CREATE INDEX place ON people USING secondary_index (country, city)",
    "CREATE INDEX email_bloom ON people USING bloom_filters (lower(email)) OPTIONS (fpp = 0.01)",
]


@dataclass(frozen=True)
class Case:
    """One predicate as each engine's user writes it, and the files it keeps at most."""

    name: str
    trino: str
    spark: str
    duckdb: str
    kept: int


CASES = [
    Case("nested calls", *["lower(substring(name, 1, 3)) = 'cal'"] * 3, kept=1),
    Case("arithmetic over two columns", *["salary + salary * pct > 18500"] * 3, kept=2),
    Case(
        "a time function of epoch seconds",
        trino="hour(from_unixtime(epoch)) = 3",
        spark="hour(from_unixtime(epoch)) = 3",
        duckdb="hour(to_timestamp(epoch)) = 3",
        kept=1,
    ),
    Case("a composite secondary index", *["country = 'FR' AND city = 'Paris'"] * 3, kept=2),
    Case("a bloom filter on an expression", *["lower(email) = 'user517@example.com'"] * 3, kept=2),
]


def person(row: int) -> tuple[Any, ...]:
    block, i = divmod(row, ROWS_PER_FILE)
    prefix = PREFIXES[block]
    spellings = [prefix, prefix.upper() + "ry", prefix.lower() + "ette", prefix[:2]]
    name = None if i % 17 == 0 else spellings[i % 4]
    email = f"User{row}@Example.com" if i % 2 else f"user{row}@example.com"
    country, city = ("FR", "Paris") if row in PAIR_ROWS else PLACES[i % 3]
    salary = 1000.0 * (block + 1) + 10 * i
    ratio = None if i % 13 == 0 else math.nan if block in NAN_FILES else block + i / 100
    return (row, name, email, salary, PCTS[i % 4], BASE_EPOCH + block * 3600 + i * 50, country, city, ratio)


def build_people(spark: SparkSession, location: str) -> str:
    table = LakepruneTable.create(
        location,
        SCHEMA,
        record_key="id",
        # 64 bytes per record are assumed before the first write: one file per block of rows.
        properties={
            "write.target_file_size_bytes": 64 * ROWS_PER_FILE,
            "write.small_file_limit_bytes": 1,
        },
        spark=spark,
    )
    table.insert(spark.createDataFrame(people(), SCHEMA))
    for statement in INDEXES:
        table.sql(statement)
    return location


def people() -> list[tuple[Any, ...]]:
    """Every row of the table, as written."""
    return [person(r) for r in range(FILES * ROWS_PER_FILE)]


__all__ = ["CASES", "FILES", "NAN_FILES", "Case", "build_people", "people"]
