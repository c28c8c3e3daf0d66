"""The SparkSession lakeprune jobs run in. Inside `spark-submit` (or a notebook with a session already
active) the existing session is used unchanged apart from the settings lakeprune needs; otherwise an
embedded `local[*]` session is created. Settings: UTC session time zone (timestamps are instants),
TIMESTAMP_MICROS for any Parquet Spark writes, Python workers on this interpreter, and the object
store settings of `builder.object_stores` (the S3A jars on an embedded session's class path; the AWS
variables mapped onto S3A and the Python tasks whenever a job starts: `job_session`). An embedded
session does not record the Python call site of each DataFrame call (PySpark's DataFrame debugging):
it costs gateway round trips on every call of a job. Every session it returns can read
`spark.read.format("lakeprune")`: an embedded one has the source's jar on its class path, and
`builder.spark_source.register` is called on it. A JVM started here writes its own output to the log
file `builder.spark_output` names, if any (the CLI names one), instead of the terminal; it then logs
at WARN, else at ERROR. An embedded session does not log failed tasks: in local mode a task's error
reaches the caller as the job's exception, JVM stack trace included, so the log would only print it
a second time (and bury a one-line CLI error about a corrupt input file under a screen of Java)."""

from __future__ import annotations

import logging
import os
import sys

from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession

from builder.object_stores import apply_object_store_settings, s3a_classpath
from builder.spark_output import redirected_jvm_output
from pruner.errors import LakepruneError

logger = logging.getLogger(__name__)

SPARK_EXTENSIONS = "io.lakeprune.spark.LakepruneExtensions"
DATAFRAME_DEBUGGING = "spark.python.sql.dataFrameDebugging.enabled"
REQUIRED_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}


def spark_session(master: str | None = None, app_name: str = "lakeprune") -> SparkSession:
    """The active SparkSession, or a new embedded one (`LAKEPRUNE_SPARK_MASTER`, default local[*])."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    active = SparkSession.getActiveSession()
    if active is None:
        builder = SparkSession.builder.appName(app_name)
        if master is not None or not _submitted():
            master = master or os.environ.get("LAKEPRUNE_SPARK_MASTER", "local[*]")
            builder = builder.master(master).config("spark.ui.enabled", "false")
            builder = builder.config("spark.ui.showConsoleProgress", "false")
            builder = builder.config("spark.sql.shuffle.partitions", "8")
            # PySpark 4 records the Python call site of every DataFrame and Column call in the JVM
            # (five gateway round trips each) for error messages that would name lakeprune's own
            # lines, not the user's: an upsert of a few rows made 2,251 gateway calls with it and
            # 1,260 without.
            builder = builder.config(DATAFRAME_DEBUGGING, "false")
            memory = os.environ.get("LAKEPRUNE_SPARK_DRIVER_MEMORY", "4g")
            builder = builder.config("spark.driver.memory", memory)
            source_jar = _spark_source_jar()
            classpath = os.pathsep.join(p for p in (s3a_classpath(), source_jar) if p)
            if classpath:
                builder = builder.config("spark.driver.extraClassPath", classpath)
                builder = builder.config("spark.executor.extraClassPath", classpath)
            if source_jar:  # Spark SQL's writes in every session, VERSION AS OF (docs/spark.md)
                builder = builder.config("spark.sql.extensions", SPARK_EXTENSIONS)
            if master.startswith("local"):  # embedded: listen on loopback only
                os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
                builder = builder.config("spark.driver.host", "127.0.0.1")
                builder = builder.config("spark.driver.bindAddress", "127.0.0.1")
        else:
            extensions = _submitted_extensions()
            if extensions is not None:
                builder = builder.config("spark.sql.extensions", extensions)
        with redirected_jvm_output() as log_file:
            active = builder.getOrCreate()
        default_level = "WARN" if log_file is not None else "ERROR"
        active.sparkContext.setLogLevel(os.environ.get("LAKEPRUNE_SPARK_LOG_LEVEL", default_level))
        if (active.sparkContext.master or "").startswith("local"):
            _silence_task_failure_logs(active)
    _register_source(active)
    return job_session(active)


def _submitted_extensions() -> str | None:
    """The submitted `spark.sql.extensions` with lakeprune's added, when spark-submit put lakeprune's
    jar on the driver's class path (`--jars "$(lakeprune spark-job --jars)"`): extensions are loaded
    as the session starts, before `register` could add the jar. None: leave them as submitted."""
    from builder.spark_source import loadable

    SparkContext._ensure_initialized()  # the submitted JVM's gateway
    jvm = SparkContext._jvm
    if jvm is None or not loadable(jvm):
        return None
    given = [e.strip() for e in (SparkConf().get("spark.sql.extensions") or "").split(",") if e.strip()]
    return None if SPARK_EXTENSIONS in given else ",".join([*given, SPARK_EXTENSIONS])


def _spark_source_jar() -> str | None:
    """The jar of `format("lakeprune")` for a new session's class path (built if missing); None,
    with a warning, where it cannot be had (`register` then says why when a read needs it)."""
    from builder.spark_source import spark_jar

    try:
        return str(spark_jar())
    except LakepruneError as exc:
        logger.warning("spark.read.format('lakeprune') will not be available: %s", exc)
        return None


def _register_source(spark: SparkSession) -> None:
    from builder.spark_source import register

    try:
        register(spark)
    except LakepruneError as exc:
        logger.warning("spark.read.format('lakeprune') is not available in this session: %s", exc)


def _submitted() -> bool:
    """Whether Spark's configuration, the master included, is already given: under `spark-submit`,
    which starts the JVM first and hands Python its gateway's port (`PYSPARK_GATEWAY_PORT`; a
    `SparkConf` made before that gateway is connected is empty, so it cannot tell), or when a JVM
    with a master configured is already up."""
    return "PYSPARK_GATEWAY_PORT" in os.environ or SparkConf().contains("spark.master")


def job_session(spark: SparkSession | None = None) -> SparkSession:
    """The session a job runs in (`spark`, else `spark_session()`'s), with lakeprune's settings
    applied again: the AWS variables may have changed since the session was made or last used."""
    if spark is None:
        return spark_session()
    for key, value in REQUIRED_CONF.items():
        spark.conf.set(key, value)
    apply_object_store_settings(spark)
    return spark


# The loggers that print a failed task's exception ("Exception in task ...") and the job abort.
TASK_FAILURE_LOGGERS = ("org.apache.spark.executor.Executor", "org.apache.spark.scheduler.TaskSetManager")


def _silence_task_failure_logs(spark: SparkSession) -> None:
    """Turn the task failure loggers off (see the module docstring). PySpark sets the root logger's
    level only, so this goes through log4j's Configurator in the driver JVM."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # a classic (not Spark Connect) session, as created above
    level = jvm.org.apache.logging.log4j.Level.OFF
    for name in TASK_FAILURE_LOGGERS:
        jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(name, level)
