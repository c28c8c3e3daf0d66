"""The tables of the text index benchmark (`text_index.py`): one log table (`id bigint, ts timestamp,
level string, msg string`, record key `id`, unpartitioned, ~`files` files of contiguous `id`s) of
generated request-log lines with a large vocabulary (paths with ids, session and trace ids in hex,
status codes, durations, host names, user names, IP addresses), written three times by Spark from
the same cached DataFrame: `logs_plain` (no text index), `logs_grams` (a trigram index on `msg`)
and `logs_words` (a words index on `lower(msg)`), each index created on the empty table so that the
insert maintains it (`build_tables`, run in a child process so that Spark's JVM exits with it; the
insert times go to a JSON file). Two rare terms: `OutOfMemoryError` in one row of each of ~0.5% of
the files, `SIGSEGV` in one row, so in one file. `holding` scans the files for the ground truth:
the files and rows whose `msg` (or `lower(msg)`) holds a substring. `index_bytes`: a text index's
partition on disk."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq
from trino_vs_hive_table import BASE, DEFAULT_RECORD_BYTES

from pruner.format.layout import metadata_partition_dir
from pruner.table.table import LakeTable

DDL = "id bigint, ts timestamp, level string, msg string"
# Trino's Hive connector reads TIMESTAMP_MICROS as timestamp(3); `ts` is whole seconds.
HIVE_COLUMNS = "id bigint, ts timestamp(3), level varchar, msg varchar"
PLAIN, GRAMS, WORDS = "logs_plain", "logs_grams", "logs_words"
# Each table's text index, created before the write (the insert maintains it).
INDEXES = {
    PLAIN: None,
    GRAMS: ("msg_grams", "CREATE INDEX msg_grams ON logs_grams USING text (msg)"),
    WORDS: (
        "msg_words",
        "CREATE INDEX msg_words ON logs_words USING text (lower(msg)) OPTIONS (tokenizer = 'words')",
    ),
}
FEW_TERM, ONE_TERM = "OutOfMemoryError", "SIGSEGV"
FEW_SHARE = 0.005  # of the files: each holds one row with FEW_TERM
WARM_UP_ROWS = 20_000  # the untimed first write that warms Spark's JVM and Python workers

RESOURCES = [
    "orders", "users", "carts", "items", "payments", "invoices", "sessions", "products", "reviews",
    "shipments", "coupons", "accounts", "addresses", "refunds", "subscriptions", "notifications",
]  # fmt: skip
METHODS = ["GET", "GET", "GET", "GET", "POST", "POST", "PUT", "DELETE", "PATCH"]
STATUSES = [200] * 6 + [201, 204, 301, 304, 400, 401, 403, 404, 404, 409, 429, 500, 502, 503]
REGIONS = [
    "eu-west-1", "eu-central-1", "us-east-1", "us-east-2", "us-west-2", "ap-south-1", "ap-northeast-1",
    "sa-east-1",
]  # fmt: skip
SERVICES = [
    "payments", "inventory", "search", "checkout", "pricing", "shipping", "auth", "recommendations",
    "ledger", "notifier",
]  # fmt: skip
FIRST_NAMES = [
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory",
    "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter", "yolanda",
]  # fmt: skip
LAST_NAMES = [
    "smith", "jones", "garcia", "miller", "davis", "martinez", "lopez", "wilson", "anderson", "thomas",
    "taylor", "moore", "jackson", "martin", "lee", "thompson", "white", "harris", "clark", "lewis",
]  # fmt: skip
AGENTS = [
    "Mozilla/5.0", "curl/8.4.0", "okhttp/4.12.0", "python-requests/2.32.3", "Go-http-client/2.0",
    "PostmanRuntime/7.39.0",
]  # fmt: skip


def few_ids(rows: int, files: int) -> list[int]:
    """The ids of FEW_TERM's rows: ~FEW_SHARE of `files`, one in the middle of each of as many equal
    spans of ids; files hold contiguous ids, at most one span's worth, so each is in its own file."""
    count = max(1, round(files * FEW_SHARE))
    return [(2 * j + 1) * rows // (2 * count) for j in range(count)]


def one_id(rows: int) -> int:
    return rows * 3 // 7 + 11


def log_rows(spark: Any, rows: int, files: int) -> Any:
    """The generated log table as a DataFrame (Spark expressions only: no Python per row)."""
    from pyspark.sql import functions as F

    key = F.col("id")

    def hashed(salt: int) -> Any:
        return F.xxhash64(key, F.lit(salt))

    def number(salt: int, below: int) -> Any:
        return F.pmod(hashed(salt), F.lit(below))

    def pick(values: list[Any], salt: int) -> Any:
        return F.element_at(F.array(*[F.lit(v) for v in values]), (number(salt, len(values)) + 1).cast("int"))

    hex12 = F.substring(F.lower(F.hex(hashed(3))), 1, 12)
    region, resource = pick(REGIONS, 4), pick(RESOURCES, 5)
    millis = number(6, 5000)
    access = F.format_string(
        "%s /api/v%d/%s/%d?session=%s %d %dms host=web-%d.%s.example.net",
        pick(METHODS, 7), number(8, 3) + 1, resource, number(2, 10_000_000), hex12, pick(STATUSES, 9),
        millis, number(10, 500), region,
    )  # fmt: skip
    database = F.format_string(
        "query %s.%s took %dms rows=%d db=pg-%d.%s.internal",
        resource, pick(["select", "insert", "update", "delete", "upsert"], 11), millis, number(12, 100_000),
        number(13, 40), region,
    )  # fmt: skip
    cache = F.format_string(
        "cache %s key=%s:%d node=redis-%d.%s ttl=%ds",
        pick(["hit", "hit", "hit", "miss"], 14), resource, number(2, 10_000_000), number(15, 16), region,
        number(16, 86_400),
    )  # fmt: skip
    upstream = F.format_string(
        "upstream %s-%d.svc.cluster.local:%d responded %d in %dms (retry %d/5) trace=%s",
        pick(SERVICES, 17), number(18, 50), number(19, 1000) + 8000, pick(STATUSES, 9), millis,
        number(20, 5), hex12,
    )  # fmt: skip
    login = F.format_string(
        "login %s user=%s.%s%d from 10.%d.%d.%d agent=%s",
        pick(["ok", "ok", "ok", "failed"], 21), pick(FIRST_NAMES, 22), pick(LAST_NAMES, 23),
        number(24, 1000), number(25, 256), number(26, 256), number(27, 256), pick(AGENTS, 28),
    )  # fmt: skip
    oom = F.format_string(
        "worker web-%d.%s.example.net killed: %s in thread pool-%d heap=%dMB",
        number(10, 500), region, F.lit(FEW_TERM), number(29, 8), number(30, 16_384),
    )  # fmt: skip
    crash = F.format_string(
        "process %d on db-%d.%s.internal crashed with %s at 0x%s in libc.so.6",
        number(31, 65_536), number(13, 40), region, F.lit(ONE_TERM), hex12,
    )  # fmt: skip
    kind = number(0, 100)
    rare = key.isin(few_ids(rows, files)) | (key == one_id(rows))
    level = number(1, 100)
    return spark.range(rows).select(
        key.alias("id"),
        F.timestamp_seconds(F.lit(int(BASE.timestamp())) + key).alias("ts"),
        F.when(rare, "ERROR")
        .when(level < 3, "DEBUG")
        .when(level < 83, "INFO")
        .when(level < 95, "WARN")
        .otherwise("ERROR")
        .alias("level"),
        F.when(key == one_id(rows), crash)
        .when(key.isin(few_ids(rows, files)), oom)
        .when(kind < 45, access)
        .when(kind < 60, database)
        .when(kind < 75, cache)
        .when(kind < 90, upstream)
        .otherwise(login)
        .alias("msg"),
    )


def build_tables(warehouse: str, scratch: str, rows: int, files: int, timings: str) -> None:
    """Write the three tables (run in a child process: Spark's JVM exits with it); the seconds of
    generating the data, of the warm-up write and of each table's insert go to `timings` (JSON)."""
    from builder.session import spark_session

    spark = spark_session(master="local[2]")
    begin = time.perf_counter()
    data = log_rows(spark, rows, files).cache()
    data.count()
    seconds: dict[str, Any] = {"generate_s": round(time.perf_counter() - begin, 2)}
    warm_up = min(rows, WARM_UP_ROWS)
    begin = time.perf_counter()
    _write(spark, f"{scratch}/warm_up", data.limit(warm_up), warm_up, max(1, files * warm_up // rows), None)
    seconds["warm_up_write_s"] = round(time.perf_counter() - begin, 2)
    seconds["writes_s"] = {}
    for table, index in INDEXES.items():
        seconds["writes_s"][table] = _write(
            spark, f"{warehouse}/{table}", data, rows, files, index[1] if index else None
        )
    data.unpersist()
    spark.stop()
    Path(timings).write_text(json.dumps(seconds))


def _write(spark: Any, location: str, data: Any, rows: int, files: int, index: str | None) -> float:
    """Create the table (with its text index, if any) and insert `data`: the insert's seconds."""
    from builder import LakepruneTable

    table = LakepruneTable.create(
        location,
        DDL,
        record_key="id",
        spark=spark,
        properties={
            # The first insert sizes files with the writer's 64-byte estimate per record.
            "write.target_file_size_bytes": max(1, DEFAULT_RECORD_BYTES * rows // files),
            "write.small_file_limit_bytes": 1,
        },
    )
    if index is not None:
        table.sql(index)
    begin = time.perf_counter()
    table.insert(data)
    return round(time.perf_counter() - begin, 2)


def index_bytes(location: Path, index: str) -> int:
    """Bytes on disk of the text index `index`'s partition (`text_index_<name>`) of the table."""
    directory = location / metadata_partition_dir(f"text_index_{index}")
    if not directory.is_dir():
        raise SystemExit(f"no text index partition at {directory}")
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def holding(location: Path, needles: list[tuple[str, bool]]) -> dict[tuple[str, bool], dict[str, Any]]:
    """For each (needle, lower): the live files (names) whose `msg` (with `lower`: `msg` lower-cased
    by Arrow's simple case mapping, Trino's) holds `needle`, and how many rows do."""
    table = LakeTable.open(str(location))
    found: dict[tuple[str, bool], dict[str, Any]] = {n: {"files": set(), "rows": 0} for n in needles}
    for f in table.snapshot().files():
        msg = pq.read_table(table.storage.path(f.path), filesystem=table.storage.fs, columns=["msg"])["msg"]
        lowered = pc.utf8_lower(msg)
        for needle, lower in needles:
            rows = pc.sum(pc.match_substring(lowered if lower else msg, needle)).as_py() or 0
            if rows:
                found[needle, lower]["files"].add(f.file_name)
                found[needle, lower]["rows"] += rows
    return found
