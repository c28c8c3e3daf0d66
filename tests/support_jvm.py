"""The JVM options of the Spark JVMs the tests start. Each driver a test's subprocess or
`spark-submit` starts, the test cluster's daemons and its executors runs small jobs for seconds to
minutes on a 2-core machine, where C2's compiler threads and G1's parallel collector threads take
CPU from the work itself: C1 alone (`TieredStopAtLevel=1`) and the serial collector made
`tests/builder/test_index_build.py` run in 204 s and 211 s against 376 s and 390 s with the JVM's
defaults (alternated, one loaded machine). The session's own driver (the `spark` fixture) lives as
long as its pytest worker and runs thousands of jobs: there C2's code pays for its compiling. Four
Spark modules (`tests/builder/write`, `test_spark_sql.py`, `test_secondary_index.py`,
`test_adopt.py`) in one process each, side by side, took 418 s with C2 and the serial collector
against 469 s with C1 alone (2026-11-30; `SPARK_SUBMIT_OPTS` set for each whole run, so the few
Spark children of those modules ran with the same options as the session's driver). They are
test settings, not lakeprune's: a user's long Spark job wants C2, on the collector of its choice."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

SHORT_LIVED_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
LONG_LIVED_JVM_OPTIONS = "-XX:+UseSerialGC"
# Read by `spark-submit`, which PySpark also runs to start its JVM.
SUBMIT_OPTIONS = "SPARK_SUBMIT_OPTS"


def use_short_lived_jvm_options() -> None:
    """Every Spark driver started from this process or its children from now on gets the
    short-lived options; a value already in the environment wins."""
    os.environ.setdefault(SUBMIT_OPTIONS, SHORT_LIVED_JVM_OPTIONS)


@contextmanager
def long_lived_jvm_options() -> Iterator[None]:
    """A Spark driver started inside gets the long-lived options instead of the short-lived ones
    (`use_short_lived_jvm_options`); options that the environment gave stay as they are."""
    if os.environ.get(SUBMIT_OPTIONS) != SHORT_LIVED_JVM_OPTIONS:
        yield
        return
    os.environ[SUBMIT_OPTIONS] = LONG_LIVED_JVM_OPTIONS
    try:
        yield
    finally:
        os.environ[SUBMIT_OPTIONS] = SHORT_LIVED_JVM_OPTIONS
