"""Pruned Spark reads: the Python half of `spark.read.format("lakeprune")`. The JVM half
(`connector/spark/`, a jar) is a thin Parquet relation whose file index asks this module, through a
Py4J callback in the driver, to describe a table (`describe`: `GetTable`, and `GetTableStatistics`
for its size) and to prune its files for the filters Spark pushes to the scan (`prune_files`:
`Prune`, with Spark's filter texts as the request's `sql_predicate`); the two halves exchange the
serialized `lakeprune.v1` messages of those PruningService methods, so proto/ is the one source of
truth for this wire as for gRPC. Spark's own Parquet reader then reads the kept files.
Writes (`df.write.format("lakeprune")`) come the same way to `builder.spark_writer`, and Spark SQL's
index statements (`CREATE INDEX`, `DROP INDEX`, `SHOW INDEXES`, `REFRESH INDEX` on a table the
JVM half found in the session's catalog) to `builder.index_build.execute` (`index_statement`).
`register(spark)` makes a session able to read and write the format: it puts the jar on the driver's class
loader if it is not there, starts PySpark's callback server and installs the planner. Every prune
goes through `pruner.planner.prune.prune`, logs one INFO line (table, snapshot, files kept of
total, the index steps that removed files) and is kept in `recent_prunes()`. An adopted table's
partition columns, which its files may keep only in their paths, are Spark partition columns valued
from each kept file's typed partition values. User mistakes reach Spark as one line starting with
"lakeprune:"."""

from __future__ import annotations

import importlib
import logging
import os
import sys
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from google.protobuf.message import Message
from pyspark.java_gateway import ensure_callback_server_started
from pyspark.sql import DataFrame, SparkSession
from sqlglot import exp

from pruner.engines.plugin import run_build
from pruner.errors import InvalidInputError, LakepruneError
from pruner.planner.prune import bind_predicate, prune
from pruner.planner.result import PruneResult
from pruner.predicate.sql.parsing import chain_operands, parse
from pruner.predicate.sql.spark import SparkFilters, from_spark
from pruner.predicate.tuple_domain import TupleDomain
from pruner.service import codec, table_codec
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.serving.catalog import TableName
from pruner.table.statistics import file_statistics
from pruner.table.table import LakeTable, table_location

logger = logging.getLogger(__name__)

JAR_ENV = "LAKEPRUNE_SPARK_JAR"
CHECKOUT = Path(__file__).resolve().parents[1]
PLANNERS_CLASS = "io.lakeprune.spark.Planners"
WRITER_MODULE = "builder.spark_writer"
INDEX_MODULE = "builder.index_build"
RECENT = 32

_recent: deque[dict[str, Any]] = deque(maxlen=RECENT)
_lock = threading.Lock()


class SparkSourceError(LakepruneError):
    """The Spark source cannot be set up (no jar, no class loader to add it to)."""


def spark_jar(checkout: Path = CHECKOUT, build: bool = True) -> Path:
    """The source's jar: `$LAKEPRUNE_SPARK_JAR`, else the checkout's build output (built first by
    `connector/spark/build.sh` if it is missing, or older than a file it is built from, and
    `build`: a checkout that pulled new Java sources gets them, not the jar of its last build)."""
    configured = os.environ.get(JAR_ENV, "").strip()
    if configured:
        jar = Path(configured).expanduser().absolute()
        if not jar.is_file():
            raise SparkSourceError(f"${JAR_ENV}: {jar} is not a file (expected lakeprune-spark.jar)")
        return jar
    jar = checkout / "connector" / "spark" / "target" / "lakeprune-spark.jar"
    script = checkout / "connector" / "spark" / "build.sh"
    if build and script.is_file() and (not jar.is_file() or _older_than_sources(jar, checkout)):
        run_build(script, jar, {"PYTHON": sys.executable})  # compiled against this PySpark
        jar.touch()  # build.sh leaves an up-to-date jar alone
    if not jar.is_file():
        raise SparkSourceError(
            f"no lakeprune Spark jar: set {JAR_ENV} or run connector/spark/build.sh in a lakeprune checkout"
        )
    return jar


def _older_than_sources(jar: Path, checkout: Path) -> bool:
    connector = checkout / "connector" / "spark"
    sources = [connector / "build.sh", *(connector / "src").rglob("*"), *(checkout / "proto").rglob("*")]
    built = jar.stat().st_mtime
    return any(source.is_file() and source.stat().st_mtime > built for source in sources)


def register(spark: SparkSession) -> None:
    """Make `spark` able to read `format("lakeprune")`: the jar on the driver's class loader (added
    to a running session's if needed), the callback server started, this process's planner
    installed, and the session's planner strategy for Spark SQL's writes to lakeprune tables and
    optimizer rule for reads at a snapshot (`LakepruneWrites.addTo`: also called by any read, but
    a session's first statement may be a CREATE TABLE). Idempotent; sessions made by
    `builder.session.spark_session()` are registered."""
    jvm = spark.sparkContext._jvm
    gateway = spark.sparkContext._gateway
    assert jvm is not None and gateway is not None  # a classic (not Spark Connect) session
    if not loadable(jvm):
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        url = jvm.java.io.File(str(spark_jar())).toURI().toURL()
        try:
            loader.addURL(url)  # Spark's MutableURLClassLoader: the driver's threads share it
        except Exception as exc:
            raise SparkSourceError(
                "cannot add the lakeprune jar to this Spark driver; start it with "
                f"--driver-class-path {spark_jar()} ({type(exc).__name__})"
            ) from None
        if not loadable(jvm):
            raise SparkSourceError(f"the lakeprune jar {spark_jar()} did not load into this Spark driver")
    ensure_callback_server_started(gateway)  # type: ignore[no-untyped-call]
    jvm.io.lakeprune.spark.Planners.install(_Planner(spark))
    jvm.io.lakeprune.spark.LakepruneWrites.addTo(spark._jsparkSession)


def loadable(jvm: Any) -> bool:
    """Whether the source's classes load in the JVM of `jvm` (a Py4J view), without loading them."""
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    try:
        jvm.java.lang.Class.forName(PLANNERS_CLASS, False, loader)
    except Exception:
        return False
    return True


def recent_prunes() -> list[dict[str, Any]]:
    """The last prunes of Spark reads in this process, oldest first: table, snapshot, the filters
    Spark pushed, the WHERE clause pruned with, the filters left out, files kept and total, and
    the one-line summary that is also logged."""
    with _lock:
        return list(_recent)


def describe(request: spb.GetTableRequest) -> spb.GetTableResponse:
    """A table for the source, as of the requested snapshot (an instant, the latest at or before a
    time, default the latest): its schema, partition columns, resolved snapshot and location.
    `TableName.table` is a table path or URI, or a name under the warehouse root `TableName.schema`."""
    table = _open(request.table)
    snapshot = table_codec.requested_snapshot(table, request)
    return table_codec.encode_table(TableName(request.table.schema, request.table.table), snapshot)


def statistics(request: spb.GetTableStatisticsRequest) -> spb.GetTableStatisticsResponse:
    """A snapshot's row count, file count and size, the column statistics left unknown: the source
    takes only the relation's size from them (a file relation has no column statistics for Spark's
    optimizer), so the column-stats index is not read. The Spark source sends no predicate, and a
    request with one is refused rather than answered for every file."""
    if request.HasField("predicate"):
        raise InvalidInputError("the Spark source's GetTableStatistics takes no predicate")
    table = _open(request.table)
    snapshot = table.snapshot(request.snapshot or None)
    files = snapshot.files() if snapshot.instant is not None else []
    return table_codec.encode_statistics(snapshot.instant, file_statistics(files))


def _open(name: spb.TableName) -> LakeTable:
    if not name.table:
        raise InvalidInputError('no table: use load(PATH) or .option("warehouse", W).load(NAME)')
    return LakeTable.open(table_location(name.table, name.schema or None))


def prune_files(request: spb.PruneRequest) -> spb.PruneResponse:
    """The files of a described table's snapshot that may hold rows matching Spark's filters (the
    request's `sql_predicate`): one split per file, with its typed partition values."""
    if request.HasField("predicate") or request.max_split_bytes:
        raise InvalidInputError("the Spark source prunes by sql_predicate alone, one split per file")
    sql = request.sql_predicate
    if sql.filters and sql.dialect != spb.SQL_DIALECT_SPARK:
        raise InvalidInputError(f"the Spark source reads SQL_DIALECT_SPARK filters, not {sql.dialect}")
    table = _open(request.table)
    floating = [c.name for c in table.config.schema.columns if c.type.kind.is_floating]
    filters = from_spark(list(sql.filters), sql.time_zone or "UTC", floating, ansi=sql.ansi)
    where, dropped = _bindable(table, filters)
    snapshot = codec.check_snapshot(request.snapshot)
    result = prune(
        table, where if where is not None else TupleDomain.all(), snapshot=snapshot, widened=dropped
    )
    summary = _summary(table.storage.uri, result, dropped)
    logger.info("lakeprune spark read: %s", summary)
    with _lock:
        _recent.append(
            {
                "table": table.storage.uri,
                "snapshot": result.snapshot,
                "filters": list(sql.filters),
                "where": where,
                "dropped": list(dropped),
                "files_kept": result.files_selected,
                "summary": summary,
            }
        )
    return codec.encode_prune_result(result, request.explain)


def _bindable(table: LakeTable, filters: SparkFilters) -> tuple[str | None, tuple[str, ...]]:
    """The WHERE clause without the conjuncts lakeprune cannot bind (a literal the column cannot
    hold, ...): Spark still evaluates them, the prune just keeps more files."""
    if filters.where is None:
        return None, filters.dropped
    try:
        bind_predicate(filters.where, table.query_schema, table.indexed_calls)
        return filters.where, filters.dropped
    except InvalidInputError:
        pass
    kept, dropped = [], list(filters.dropped)
    for conjunct in _conjuncts(filters.where):
        try:
            bind_predicate(conjunct, table.query_schema, table.indexed_calls)
            kept.append(conjunct)
        except InvalidInputError as exc:
            dropped.append(f"{conjunct} ({exc})")
    return (" AND ".join(kept) if kept else None), tuple(dropped)


def _conjuncts(where: str) -> list[str]:
    return [node.sql() for node in chain_operands(parse(where), exp.And)]


def _summary(table: str, result: PruneResult, dropped: tuple[str, ...]) -> str:
    kept = len({s.path for s in result.splits})
    steps = [
        f"{s.step} on {','.join(s.columns)} {s.files_in}->{s.files_out}"
        for s in result.explain
        if s.files_out < s.files_in
    ]
    text = f"{table} @ {result.snapshot}: kept {kept} of {result.files_total} files"
    text += f" by {'; '.join(steps)}" if steps else " (no index removed files)"
    if dropped:
        text += f"; {len(dropped)} filter(s) not used for pruning"
    if result.fallbacks:
        text += f"; {result.fallbacks} index fallback(s) kept files"
    return text


def index_statement(
    spark: SparkSession, location: str, statement: str, columns: list[str]
) -> list[list[str | None]]:
    """Run a Spark SQL index statement (identifiers in Spark's quoting) on the table at `location`
    and return its rows: for SHOW INDEXES one row per index with the `columns` asked for (a
    list or map shown as `a, b` / `k=v, ...`), else one row holding the statement's message."""
    index_build = importlib.import_module(INDEX_MODULE)  # Spark jobs: loaded when first needed
    result = index_build.execute(location, statement, spark, dialect="spark", named_by_caller=True)
    if not result.rows:
        return [[result.message]]
    missing = [c for c in columns if c not in result.rows[0]]
    if missing:
        raise InvalidInputError(f"SHOW INDEXES has no column {', '.join(missing)}")
    return [[_shown(row[c]) for c in columns] for row in result.rows]


def _shown(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


# The PruningService methods the JVM half calls, each with its request message.
_METHODS: dict[str, tuple[type[Message], Callable[[Any], Message]]] = {
    "GetTable": (spb.GetTableRequest, describe),
    "GetTableStatistics": (spb.GetTableStatisticsRequest, statistics),
    "Prune": (spb.PruneRequest, prune_files),
}


class _Planner:
    """The `io.lakeprune.spark.Planner` the JVM calls back: a method's serialized request in, its
    serialized response out, or the one line of a user mistake (a str); and a DataFrame to write
    (`builder.spark_writer`), None or that one line out."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark

    def write(self, mode: str, options: Any, data: Any) -> str | None:
        # The write path (`builder.write`) loads on the first DataFrame write: it imports the
        # session module, which imports this one to register every session it makes.
        writer = importlib.import_module(WRITER_MODULE)
        try:
            result = writer.write_dataframe(DataFrame(data, self.spark), str(mode), dict(options))
        except LakepruneError as exc:
            return f"lakeprune: {exc}"
        except Exception:
            logger.exception("lakeprune spark source: the DataFrame write failed")
            raise
        logger.info("lakeprune spark write: %s", "nothing (the table exists)" if result is None else result)
        return None

    def index(self, location: str, statement: str, columns: Any) -> Any:
        """An index statement of Spark SQL on the table at `location` (resolved by Spark's
        catalog): its rows as a `java.util.List` of rows, each a `java.util.List` of `columns`'
        values as strings, or the one line of a user mistake (a str)."""
        try:
            rows = index_statement(self.spark, location, str(statement), [str(c) for c in columns])
        except LakepruneError as exc:
            return f"lakeprune: {exc}"
        except Exception:
            logger.exception("lakeprune spark source: the index statement failed")
            raise
        jvm = self.spark.sparkContext._jvm
        assert jvm is not None
        result = jvm.java.util.ArrayList()
        for row in rows:
            values = jvm.java.util.ArrayList()
            for value in row:
                values.add(value)
            result.add(values)
        return result

    def call(self, method: str, request: bytes) -> bytes | str:
        try:
            message_type, handler = _METHODS[method]
            response: bytes = handler(message_type.FromString(bytes(request))).SerializeToString()
            return response
        except LakepruneError as exc:
            return f"lakeprune: {exc}"
        except Exception:
            logger.exception("lakeprune spark source: the planner failed in %s", method)
            raise

    class Java:
        implements: ClassVar[list[str]] = ["io.lakeprune.spark.Planner"]
