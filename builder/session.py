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
            master = master or os.environ.get("LAKEPRUNE_SPARK_MASTER", "local[*]")
            builder = builder.master(master).config("spark.ui.enabled", "false")
            builder = builder.config("spark.ui.showConsoleProgress", "false")
            builder = builder.config("spark.sql.shuffle.partitions", "8")
            memory = os.environ.get("LAKEPRUNE_SPARK_DRIVER_MEMORY", "4g")
            builder = builder.config("spark.driver.memory", memory)
            if master.startswith("local"):  # embedded: listen on loopback only
                os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
                builder = builder.config("spark.driver.host", "127.0.0.1")
                builder = builder.config("spark.driver.bindAddress", "127.0.0.1")
        active = builder.getOrCreate()
        active.sparkContext.setLogLevel(os.environ.get("LAKEPRUNE_SPARK_LOG_LEVEL", "ERROR"))
    for key, value in REQUIRED_CONF.items():
        active.conf.set(key, value)
    return active
