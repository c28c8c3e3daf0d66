"""The JVM options of the Spark JVMs the tests start: the session's driver, every driver a test's
subprocess or `spark-submit` starts, the test cluster's daemons and executors. Each of them runs
small jobs for seconds to minutes on a 2-core machine, where C2's compiler threads and G1's
parallel collector threads take CPU from the work itself: C1 alone (`TieredStopAtLevel=1`) and the
serial collector made `tests/builder/test_index_build.py` run in 204 s and 211 s against 376 s and
390 s with the JVM's defaults (alternated, one loaded machine). They are test settings, not
lakeprune's: a user's long Spark job wants C2."""

from __future__ import annotations

import os

SHORT_LIVED_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def use_short_lived_jvm_options() -> None:
    """Every Spark driver started from this process or its children from now on gets the options
    (`SPARK_SUBMIT_OPTS` is read by `spark-submit`, which PySpark also runs to start its JVM); a
    value already in the environment wins."""
    os.environ.setdefault("SPARK_SUBMIT_OPTS", SHORT_LIVED_JVM_OPTIONS)
