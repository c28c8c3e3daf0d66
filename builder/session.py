"""The SparkSession lakeprune jobs run in. Inside `spark-submit` (or a notebook with a session
already active) the existing session is used unchanged apart from the settings lakeprune needs;
otherwise an embedded `local[*]` session is created. Settings: UTC session time zone (timestamps
are instants), TIMESTAMP_MICROS for any Parquet Spark writes, Python workers on this interpreter."""

from __future__ import annotations

import os
import sys

from pyspark import SparkConf
from pyspark.sql import SparkSession

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
        if master is not None or not SparkConf().contains("spark.master"):
            builder = builder.master(master or os.environ.get("LAKEPRUNE_SPARK_MASTER", "local[*]"))
            builder = (
                builder.config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.sql.shuffle.partitions", "8")
                .config("spark.driver.memory", os.environ.get("LAKEPRUNE_SPARK_DRIVER_MEMORY", "4g"))
            )
        active = builder.getOrCreate()
        active.sparkContext.setLogLevel(os.environ.get("LAKEPRUNE_SPARK_LOG_LEVEL", "ERROR"))
    for key, value in REQUIRED_CONF.items():
        active.conf.set(key, value)
    return active
