"""builder.session: the embedded session does not log failed tasks (their errors reach the caller
as the job's exception), keeps lakeprune's settings and records no Python call sites; under
`spark-submit` the session is the submitted one (its master, not the embedded default). Its
sessions read `format("lakeprune")`."""

from __future__ import annotations

from pathlib import Path

from pyspark.errors.utils import is_debugging_enabled
from pyspark.sql import SparkSession

from builder.session import DATAFRAME_DEBUGGING, REQUIRED_CONF, TASK_FAILURE_LOGGERS
from builder.spark_source import spark_jar
from tests.support_spark_cluster import spark_submit

PRINT_MASTER = """
from builder.session import spark_session
print("master:", spark_session().sparkContext.master)
"""


def test_embedded_session_does_not_log_failed_tasks(spark: SparkSession) -> None:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    for name in TASK_FAILURE_LOGGERS:
        assert str(jvm.org.apache.logging.log4j.LogManager.getLogger(name).getLevel()) == "OFF", name
    assert (
        str(jvm.org.apache.logging.log4j.LogManager.getLogger("org.apache.spark.SparkContext").getLevel())
        != "OFF"
    )
    for key, value in REQUIRED_CONF.items():
        assert spark.conf.get(key) == value


def test_embedded_session_records_no_python_call_sites(spark: SparkSession) -> None:
    assert spark.conf.get(DATAFRAME_DEBUGGING) == "false"
    assert not is_debugging_enabled()  # what PySpark's wrapper of each DataFrame call asks


def test_embedded_session_reads_the_lakeprune_format(spark: SparkSession) -> None:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    assert str(spark_jar()) in spark.sparkContext.getConf().get("spark.driver.extraClassPath", "")
    assert jvm.io.lakeprune.spark.Planners.installed()


def test_a_submitted_job_runs_on_the_submitted_master(tmp_path: Path) -> None:
    script = tmp_path / "print_master.py"
    script.write_text(PRINT_MASTER)
    submission = spark_submit("local[1]", [str(script)], {"LAKEPRUNE_SPARK_MASTER": "local[2]"}, tmp_path)
    assert submission.returncode == 0, submission.stderr[-3000:]
    assert "master: local[1]" in submission.stdout.splitlines()
