"""A builder job as a user would write one for `spark-submit` (docs/python-api.md, docs/spark.md),
submitted by the cluster suite (`tests/builder/test_cluster.py`) both to the test cluster and to
`local[*]`: it names an existing table in Spark's catalog, creates and builds four indexes with
Spark SQL's `CREATE INDEX` (column stats, bloom filters, a secondary index, a functional index),
applies the upsert and the delete inputs with one Spark SQL `MERGE INTO` (update, insert and
delete in one statement; a key in both inputs is deleted), then appends the upsert input's new rows
under new keys (`NEW_KEYS_OFFSET` added) with the DataFrame writer, `df.write.format("lakeprune")
.mode("append").save(uri)`, and last adopts a Hive-style directory of Parquet files in place
(`LakepruneTable.adopt`, record key `id`, partitioned by `region`). Arguments: the table's URI, the
upsert input's and the delete input's, the directory to adopt."""

from __future__ import annotations

import sys
import uuid

from builder import LakepruneTable
from builder.session import spark_session

INDEXES = (
    "CREATE INDEX stats ON {t} USING column_stats",
    "CREATE INDEX bf ON {t} USING bloom_filters (token, id) OPTIONS (fpp = 0.01)",
    "CREATE INDEX idx_hot ON {t} (hot)",
    "CREATE INDEX ts_day ON {t} USING column_stats(date_format(ts, '%Y-%m-%d'))",
)
MERGE = """
MERGE INTO {t} t USING (
    SELECT u.*, false AS gone FROM {t}_upserts u LEFT ANTI JOIN {t}_deletes d ON u.id = d.id
    UNION ALL
    SELECT e.*, true AS gone FROM {t} e LEFT SEMI JOIN {t}_deletes d ON e.id = d.id
) s ON t.id = s.id
WHEN MATCHED AND s.gone THEN DELETE
WHEN MATCHED THEN UPDATE SET *
WHEN NOT MATCHED AND NOT s.gone THEN INSERT *
"""
# The DataFrame writer's rows: the upsert input's new keys (5000 and up), moved by this much.
NEW_KEYS_OFFSET = 1000


def main(location: str, upserts: str, deletes: str, adopt: str) -> None:
    spark = spark_session()
    table = LakepruneTable(location, spark)
    name = f"events_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {name} USING lakeprune LOCATION '{location}'")
    try:
        for statement in INDEXES:
            print(spark.sql(statement.format(t=name)).first().message)
        spark.read.parquet(upserts).createOrReplaceTempView(f"{name}_upserts")
        spark.read.parquet(deletes).createOrReplaceTempView(f"{name}_deletes")
        spark.sql(MERGE.format(t=name))
        new_rows = spark.read.parquet(upserts).where("id >= 5000")
        appended = new_rows.withColumn("id", new_rows.id + NEW_KEYS_OFFSET)
        appended.write.format("lakeprune").mode("append").save(location)
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")
    print(table.history()[-1])
    LakepruneTable.adopt(adopt, "id", ["region"], spark=spark)


if __name__ == "__main__":
    main(*sys.argv[1:])
