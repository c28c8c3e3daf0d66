"""builder.session: the embedded session does not log failed tasks (their errors reach the caller
as the job's exception), and keeps lakeprune's settings."""

from __future__ import annotations

from pyspark.sql import SparkSession

from builder.session import REQUIRED_CONF, TASK_FAILURE_LOGGERS


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
