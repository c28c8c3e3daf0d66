"""The standard query texts of the TPC bench and how two catalogs' answers are compared.

TPC-H's 22 queries are read at run time from the `io.trino.tpch:tpch` jar that Trino 476 ships in
`plugin/tpch/` (`io/trino/tpch/queries/qN.sql`); q15 defines a view `revenue` and then uses it,
which the lakeprune catalog cannot store, so its view becomes a `WITH` clause of the query.
TPC-DS's 99 queries are the original texts of sqlglot's TPC-DS fixture
(`tests/fixtures/optimizer/tpc-ds/tpc-ds.sql` of the sqlglot 25.0.0 sdist from PyPI, downloaded
once into ~/.cache/lakeprune), each block `-- TPC-DS N` holding the original statement followed by
sqlglot's optimized form, of which only the first is taken; they are transpiled to Trino's
dialect with sqlglot, then dates written as strings become DATE literals and q30's renamed column
gets its spec name (`_for_trino`). Every adaptation is listed in `ADAPTED`. `compare` compares two
answers: in order when the query's outermost statement has an ORDER BY (rows whose order keys tie
may come in either order: that is reported apart), as multisets otherwise; decimals exactly,
doubles to a relative 1e-9. `run` runs one query on one catalog, `check_answers` a suite on two
(several queries at a time, if asked)."""

from __future__ import annotations

import math
import re
import subprocess
import sys
import tarfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from pruner.engines.cache import CacheLayout
from pruner.engines.spec import TRINO
from tests.e2e.engines import Engine

SQLGLOT_SDIST = "sqlglot==25.0.0"
TPCDS_FIXTURE = "tests/fixtures/optimizer/tpc-ds/tpc-ds.sql"
ADAPTED = {
    "tpch q15": "its view `revenue` inlined as a WITH clause (the native catalog has no views)",
    **{
        f"tpcds {q}": "string literals compared with dates written as DATE literals (Trino does not coerce)"
        for q in ("q16", "q32", "q58", "q83", "q92", "q94", "q95")
    },
    "tpcds q30": "`c_last_review_date` as the spec's and Trino's `c_last_review_date_sk`",
}
DOUBLE_TOLERANCE = 1e-9
DATE_TEXT = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")


@dataclass(frozen=True)
class TpcQuery:
    name: str  # "q01" ... (TPC-H), "q01" ... "q99" (TPC-DS)
    sql: str  # Trino SQL over unqualified table names (run with the catalog and schema set)
    ordered: bool  # the outermost statement has an ORDER BY


def suite_queries(suite: str) -> list[TpcQuery]:
    return tpch_queries() if suite == "tpch" else tpcds_queries()


def tpch_queries() -> list[TpcQuery]:
    jars = sorted((_trino_home() / "plugin" / "tpch").glob("io.trino.tpch_tpch-*.jar"))
    if not jars:
        raise FileNotFoundError(f"no io.trino.tpch jar in {_trino_home() / 'plugin' / 'tpch'}")
    with zipfile.ZipFile(jars[-1]) as jar:
        texts = {n: jar.read(f"io/trino/tpch/queries/q{n}.sql").decode() for n in range(1, 23)}
    return [_query(f"q{n:02d}", _inline_views(text)) for n, text in texts.items()]


def _trino_home() -> Path:
    from pruner.engines.fetch import fetch_engine

    return fetch_engine(TRINO, CacheLayout.default())


def _inline_views(text: str) -> str:
    """`CREATE OR REPLACE VIEW v AS <select>; <query>` as `WITH v AS (<select>) <query>`."""
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    statements = [s.strip() for s in body.split(";") if s.strip()]
    views = []
    for statement in statements[:-1]:
        match = re.fullmatch(r"CREATE\s+OR\s+REPLACE\s+VIEW\s+(\w+)\s+AS\s+(.*)", statement, re.S | re.I)
        if match is None:
            raise ValueError(f"unexpected statement before the query: {statement[:60]}")
        views.append(f"{match.group(1)} AS ({match.group(2)})")
    return (f"WITH {', '.join(views)}\n" if views else "") + statements[-1]


def tpcds_queries() -> list[TpcQuery]:
    text = _tpcds_fixture()
    blocks = re.split(r"^-+\n-- TPC-DS (\d+)\n-+\n", text, flags=re.M)
    queries = []
    for number, block in zip(blocks[1::2], blocks[2::2], strict=True):
        lines = [line for line in block.splitlines() if not line.startswith("#")]
        original = sqlglot.parse("\n".join(lines))[0]  # the original text; sqlglot's optimized form follows
        if original is None:
            raise ValueError(f"TPC-DS {number}: no statement")
        queries.append(_query(f"q{int(number):02d}", _for_trino(original).sql(dialect="trino")))
    if len(queries) != 99:
        raise ValueError(f"{len(queries)} TPC-DS queries in sqlglot's fixture, expected 99")
    return queries


def _for_trino(tree: exp.Expr) -> exp.Expr:
    """What sqlglot's transpiling leaves to do: a date written as a string literal outside a CAST
    (`d_date BETWEEN '2002-4-01' AND ...`, which Hive and Spark coerce and Trino does not) as a
    `DATE` literal, and the customer column the spec renamed (`c_last_review_date_sk`)."""

    def fix(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Literal) and node.is_string and not isinstance(node.parent, exp.Cast):
            match = DATE_TEXT.fullmatch(node.this)
            if match:
                year, month, day = (int(g) for g in match.groups())
                return exp.cast(exp.Literal.string(f"{year:04d}-{month:02d}-{day:02d}"), "date")
        if isinstance(node, exp.Column) and node.name == "c_last_review_date":
            return exp.column("c_last_review_date_sk", node.table or None)
        return node

    return tree.transform(fix)


def _tpcds_fixture() -> str:
    cache = CacheLayout.default().root / "sqlglot"
    sdists = sorted(cache.glob("sqlglot-25.0.0.tar.gz"))
    if not sdists:
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
             SQLGLOT_SDIST, "-d", str(cache)],
            check=True,
        )  # fmt: skip
        sdists = sorted(cache.glob("sqlglot-25.0.0.tar.gz"))
    with tarfile.open(sdists[0]) as sdist:
        member = sdist.extractfile(f"sqlglot-25.0.0/{TPCDS_FIXTURE}")
        if member is None:
            raise FileNotFoundError(f"{TPCDS_FIXTURE} not in {sdists[0]}")
        return member.read().decode()


def _query(name: str, sql: str) -> TpcQuery:
    tree = sqlglot.parse_one(sql, dialect="trino")
    return TpcQuery(name, sql, tree.args.get("order") is not None)


EQUAL, TIES, DIFFERENT = "equal", "equal but for the order of ties", "different"


def compare(a: list[list[Any]], b: list[list[Any]], ordered: bool) -> str:
    """EQUAL: the same rows (decimals exact, doubles to a relative 1e-9), in the same order if
    `ordered`; TIES: ordered, the same rows but not in the same order (the order keys tie: both
    answers come from the same Trino sort); DIFFERENT otherwise."""
    if len(a) == len(b) and ordered and all(_rows_equal(x, y) for x, y in zip(a, b, strict=True)):
        return EQUAL
    if len(a) != len(b) or not all(_rows_equal(x, y) for x, y in zip(_sorted(a), _sorted(b), strict=True)):
        return DIFFERENT
    return TIES if ordered else EQUAL


def _sorted(rows: list[list[Any]]) -> list[list[Any]]:
    def key(row: list[Any]) -> tuple[Any, ...]:
        return tuple(
            (0, "") if v is None else (1, f"{v:.6g}") if isinstance(v, float) else (1, repr(v)) for v in row
        )

    return sorted(rows, key=key)


def _rows_equal(x: list[Any], y: list[Any]) -> bool:
    return len(x) == len(y) and all(_values_equal(u, v) for u, v in zip(x, y, strict=True))


def _values_equal(u: Any, v: Any) -> bool:
    if isinstance(u, float) and isinstance(v, float):
        if math.isnan(u) or math.isnan(v):
            return math.isnan(u) and math.isnan(v)
        return math.isclose(u, v, rel_tol=DOUBLE_TOLERANCE, abs_tol=DOUBLE_TOLERANCE)
    if isinstance(u, Decimal) or isinstance(v, Decimal):
        return type(u) is type(v) and u == v
    return bool(u == v)


@dataclass(frozen=True)
class Outcome:
    """One query on one catalog: its rows, client wall seconds and Trino's query stats, or the error."""

    rows: list[list[Any]]
    wall: float
    stats: dict[str, Any]
    error: str | None = None


def run(engine: Engine, catalog: str, schema: str, sql: str) -> Outcome:
    """`sql` with `catalog.schema` as the session's default; a failing query is an Outcome too."""
    connection = engine.connect(schema, catalog)
    try:
        cursor = connection.cursor()
        begin = time.perf_counter()
        try:
            cursor.execute(sql)
            rows = [list(r) for r in cursor.fetchall()]
        except Exception as exc:
            return Outcome([], time.perf_counter() - begin, {}, f"{type(exc).__name__}: {exc}"[:500])
        return Outcome(rows, time.perf_counter() - begin, dict(cursor.stats))
    finally:
        connection.close()


def check_answers(
    engine: Engine,
    schema: str,
    queries: list[TpcQuery],
    catalogs: tuple[str, str],
    concurrency: int = 1,
) -> dict[str, Any]:
    """Each query once on both catalogs (the first one is the reference): the verdict of `compare`,
    the rows, and either catalog's error, by query in the order of `queries`. Up to `concurrency`
    queries run at a time (each on a connection of its own), both catalogs of a query one after
    the other."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")

    def check(query: TpcQuery) -> dict[str, Any]:
        first, second = (run(engine, c, schema, query.sql) for c in catalogs)
        errors = {c: o.error for c, o in zip(catalogs, (first, second), strict=True) if o.error}
        verdict = "error" if errors else compare(first.rows, second.rows, query.ordered)
        return {"verdict": verdict, "rows": len(first.rows)} | ({"errors": errors} if errors else {})

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        return dict(zip((q.name for q in queries), pool.map(check, queries), strict=True))
