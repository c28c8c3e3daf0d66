"""A builder job as a user would write one for `spark-submit` (docs/python-api.md), submitted
by the cluster suite (`tests/builder/test_cluster.py`) both to the test cluster and to `local[*]`:
on an existing table it creates and builds four indexes (column stats, bloom filters, a secondary
index, a functional index), then upserts and deletes from Parquet inputs. Arguments: the table's
URI, the upsert input's and the delete input's."""

from __future__ import annotations

import sys

from builder import LakepruneTable
from builder.session import spark_session

INDEXES = (
    "CREATE INDEX stats ON events USING column_stats",
    "CREATE INDEX bf ON events USING bloom_filters (token, id) OPTIONS (fpp = 0.01)",
    "CREATE INDEX idx_hot ON events (hot)",
    "CREATE INDEX ts_day ON events USING column_stats(date_format(ts, '%Y-%m-%d'))",
)


def main(location: str, upserts: str, deletes: str) -> None:
    spark = spark_session()
    table = LakepruneTable(location, spark)
    for statement in INDEXES:
        print(table.sql(statement).message)
    print(table.upsert(spark.read.parquet(upserts)))
    print(table.delete(spark.read.parquet(deletes)))


if __name__ == "__main__":
    main(*sys.argv[1:])
