"""Adopting an existing directory of Parquet files as a lakeprune table in place (RFC-08's bootstrap,
without copying or rewriting data). The files (flat, or Hive-style `col=value/` directories as
Spark's and Hive's `partitionBy` write them) become the file groups of the table's first snapshot,
one group per file, recorded in the `files` index under their own paths; the record index is built
in Spark from their keys.

Everything is validated before anything is written: the directory holds no table yet; every file is
readable Parquet whose schema matches the others (the offending files are named); files sit in
partition directories of exactly the given partition columns; record keys are non-null and unique
across all files (a duplicate is reported with its files). Only then `.lakeprune/` is created —
`table.json`, one `adopt` commit with the files and record index logs. If that fails, `.lakeprune/`
is removed again; the data files are never touched.

Partition columns that the files do not store (Spark's `partitionBy` keeps them only in the path)
are typed from the path values (int / bigint, date, boolean, else string, as Spark's partition
discovery infers them) and filled from each file's path by every reader
(`pruner.format.path_columns`); such a table records `path_columns_in_files: false`. Files added to
the directory later by other tools are not part of the table: the files index, not a listing,
defines a snapshot. Later writes rewrite adopted files copy-on-write under lakeprune's names; `clean`
deletes only lakeprune-named files, so adopted files are never deleted (not even replaced ones)."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import date
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from builder import index_logs
from builder.create import new_config
from builder.index_build import execute
from builder.instants import run_instant
from builder.intermediates import persist_intermediate
from builder.lock import table_lock
from builder.session import job_session
from builder.task_batches import BatchFunction, over_tasks, runs
from pruner.errors import (
    InvalidInputError,
    InvalidSchemaError,
    LakepruneError,
    SchemaMismatchError,
    TableExistsError,
)
from pruner.format.config import TableConfig, create_config
from pruner.format.keys import (
    NULL_PARTITION,
    encode_record_keys,
    escape_partition_value,
    parse_partition_path,
)
from pruner.format.layout import META_DIR
from pruner.format.path_columns import partition_of, path_values
from pruner.format.timeline import Action
from pruner.index.sql import CreateIndex, parse_statement
from pruner.metadata import files_index, record_index
from pruner.metadata.files_index import DataFile
from pruner.metadata.index_partition import write_logs
from pruner.metadata.merge import with_op
from pruner.metadata.spec import OP_UPSERT, IndexPartitionSpec
from pruner.predicate.values import format_value
from pruner.storage import FileEntry, Storage
from pruner.table.data_files import iter_data_file
from pruner.types import Column, ColumnType, TableSchema, from_arrow, parse_type

log = logging.getLogger(__name__)
SHOWN = 5  # files named in one error line, at most
_INTEGER = re.compile(r"-?[0-9]+")
_INT32 = (-(2**31), 2**31 - 1)
# A located key: the file's number (its position in the adopted files) and the encoded record key;
# or, once per file that cannot be adopted, the file's number and why. The file's path, partition
# and file group stay on the driver: per row they would make the persisted keys several times larger
# (at 20M rows with a 1 GiB driver, reading them back ran out of heap in 2 of 16 runs).
KEYS_SCHEMA = pa.schema([("file", pa.int32()), ("key", pa.string()), ("error", pa.string())])
# A file is read, and its keys reach Spark, in batches of at most this many rows: a task holds one
# batch of a file, not the whole file's key columns, and Spark takes each Arrow batch whole into the
# JVM's direct memory, so one batch per file would make both grow with the largest file.
KEYS_BATCH_ROWS = 65_536


@dataclass(frozen=True)
class AdoptResult:
    """What `adopt_table` did: the adopt instant (the table's first snapshot) and its contents."""

    name: str
    instant: str
    files: int
    rows: int
    partitions: int
    path_columns_in_files: bool
    indexes: int = 0  # CREATE INDEX statements run after the adopt commit

    def to_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class _Candidate:
    entry: FileEntry
    partition: str
    columns: dict[str, ColumnType]  # as stored in the file
    arrow: pa.Schema
    rows: int


def _record_index_chunks(spec: IndexPartitionSpec, files: list[DataFile]) -> BatchFunction:
    """Per file (its rows are consecutive in the located keys): its keys' record index upserts, in
    chunks by bucket for `index_logs.write_by_bucket`."""
    locations = [(f.partition, f.file_group) for f in files]

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for rows in runs(batches, ["file"]):
            number = rows.column("file")[0].as_py()
            partition, file_group = locations[number]
            n = rows.num_rows
            entries = pa.table(
                [rows.column("key"), pa.repeat(partition, n), pa.repeat(file_group, n)], schema=spec.schema
            )
            yield from index_logs.chunk_batch(
                index_logs.chunks(spec, with_op(entries, OP_UPSERT), index_logs.ROWS, str(number))
            )

    return run


def _write_record_index_logs(
    located: DataFrame, files: list[DataFile], storage: Storage, spec: IndexPartitionSpec, instant: str
) -> list[str]:
    """The record index of the located keys, written by the executors bucket by bucket; returns the
    relative paths written."""
    chunked = located.select("file", "key").mapInArrow(
        _record_index_chunks(spec, files), index_logs.CHUNK_STRUCT
    )
    return index_logs.write_by_bucket(chunked, storage, {spec.name: index_logs.LogTarget(spec)}, instant)


def adopt_table(
    spark: SparkSession,
    location: str,
    record_key: str | Sequence[str],
    partition_by: Sequence[str] = (),
    ordering_field: str | None = None,
    properties: Mapping[str, Any] | None = None,
    name: str | None = None,
    indexes: Sequence[str] = (),
) -> AdoptResult:
    """Make the Parquet files under `location` a lakeprune table in place (see the module), then
    run `indexes` (`CREATE INDEX` statements, checked first) to build them. Raises a
    `LakepruneError` naming what is wrong; nothing is written then. An index that fails to build
    after the adopt commit leaves the adopted table (the error says so)."""
    statements = [parse_statement(sql) for sql in indexes]
    if not all(isinstance(s, CreateIndex) for s in statements):
        raise InvalidInputError("adopt builds indexes from CREATE INDEX statements only")
    storage = Storage.from_uri(location)
    partition_fields = tuple(p.strip() for p in partition_by)
    if storage.exists(META_DIR):
        raise TableExistsError(f"{storage.uri} already is a lakeprune table (it has {META_DIR}/)")
    if not storage.is_dir(""):
        raise InvalidInputError(f"cannot adopt {storage.uri}: not a directory")
    candidates = [_inspect(storage, e, partition_fields) for e in _data_entries(storage)]
    if not candidates:
        raise InvalidInputError(f"cannot adopt {storage.uri}: no data files found")
    schema, in_files = _table_schema(storage, candidates, partition_fields)
    for candidate in candidates:  # a stored column's type may not fit its directory's values
        try:
            path_values(candidate.partition, schema)
        except ValueError:
            types = ", ".join(f"{c} {schema.column(c).type}" for c in partition_fields)
            raise InvalidSchemaError(
                f"cannot adopt {storage.uri}: the directory of {candidate.entry.rel} holds a value "
                f"that is not of its column's type ({types}); nothing was written"
            ) from None
    config = new_config(
        storage, schema, record_key, partition_fields, ordering_field, properties, name, in_files
    )
    files = [
        DataFile(canonical_partition(c.partition), c.entry.rel, uuid.uuid4().hex, "", c.entry.size, c.rows)
        for c in candidates
    ]
    session = job_session(spark)
    located = _locate_keys(session, storage, config, files)
    try:
        _check_keys(storage, files, located)
        result = _publish(storage, config, files, located)
    finally:
        located.unpersist()
    built: list[str] = []
    for sql in indexes:
        try:
            execute(storage.uri, sql, session)
        except LakepruneError as exc:
            raise type(exc)(f"adopted {storage.uri} as snapshot {result.instant}, but {exc}") from None
        built.append(sql)
    return replace(result, indexes=len(built))


def canonical_partition(directory: str) -> str:
    """A partition directory as lakeprune writes partition paths (its escaping: Spark leaves a space
    as it is, lakeprune writes `%20`), so that an update does not count as a partition move. The
    file itself stays where it is: its path is recorded separately."""
    values = parse_partition_path(directory)
    if not values:
        return ""
    texts = pa.array(list(values.values()), pa.string())
    escaped = pc.fill_null(escape_partition_value(texts), NULL_PARTITION).to_pylist()
    return "/".join(f"{name}={text}" for name, text in zip(values, escaped, strict=True))


def _data_entries(storage: Storage) -> list[FileEntry]:
    """Every data file: hidden files and directories (`_SUCCESS`, `.crc`, `_temporary/`) are not."""
    return [
        e
        for e in storage.list_files("", recursive=True)
        if not any(part.startswith(("_", ".")) for part in e.rel.split("/"))
    ]


def _inspect(storage: Storage, entry: FileEntry, partition_fields: tuple[str, ...]) -> _Candidate:
    """A file's partition (checked against the partition columns) and its footer's schema."""
    partition = partition_of(entry.rel)
    segments = partition.split("/") if partition else []
    names = [segment.partition("=")[0] for segment in segments]
    if names != list(partition_fields) or any("=" not in s for s in segments):
        expected = "/".join(f"{c}=..." for c in partition_fields) or "the top-level directory"
        raise InvalidInputError(
            f"cannot adopt {storage.uri}: {entry.rel} is not in a partition directory {expected} "
            "(--partition-by must name the directory levels in order); nothing was written"
        )
    try:
        parquet = pq.ParquetFile(storage.open_input_file(entry.rel))
        arrow = parquet.schema_arrow
        rows = parquet.metadata.num_rows
    except (OSError, pa.ArrowInvalid) as exc:
        raise InvalidInputError(
            f"cannot adopt {storage.uri}: {entry.rel} is not a readable Parquet file ({exc}); "
            "nothing was written"
        ) from None
    try:
        columns = {f.name: from_arrow(f.type) for f in arrow}
    except InvalidSchemaError as exc:
        raise InvalidSchemaError(f"cannot adopt {storage.uri}: {entry.rel}: {exc}") from None
    return _Candidate(entry, partition, columns, arrow, rows)


def _table_schema(
    storage: Storage, candidates: list[_Candidate], partition_fields: tuple[str, ...]
) -> tuple[TableSchema, bool]:
    """The table schema (the first file's columns, then path-only partition columns), and whether
    every file stores its partition columns. Raises naming the files whose schema differs."""
    first = candidates[0]
    reference = {n: t for n, t in first.columns.items() if n not in partition_fields}
    mismatched: list[str] = []
    for candidate in candidates:
        own = {n: t for n, t in candidate.columns.items() if n not in partition_fields}
        if own != reference:
            mismatched.append(f"{candidate.entry.rel} ({_difference(reference, own)})")
    stored = {p: {c.columns[p] for c in candidates if p in c.columns} for p in partition_fields}
    for column, types in stored.items():
        if len(types) > 1:
            mismatched.append(f"partition column {column} is stored as {', '.join(sorted(map(str, types)))}")
    if mismatched:
        shown = "; ".join(mismatched[:SHOWN]) + (
            f"; and {len(mismatched) - SHOWN} more" if len(mismatched) > SHOWN else ""
        )
        raise SchemaMismatchError(
            f"cannot adopt {storage.uri}: file schemas differ from {first.entry.rel}: {shown}; "
            "nothing was written"
        )
    nullable = {f.name: f.nullable for f in first.arrow}
    columns = [Column(n, t, nullable[n]) for n, t in first.columns.items() if n not in partition_fields]
    for column in partition_fields:
        if stored[column]:
            columns.append(Column(column, next(iter(stored[column])), True))
        else:
            texts = [parse_partition_path(c.partition)[column] for c in candidates]
            columns.append(Column(column, infer_path_type([t for t in texts if t is not None]), True))
    in_files = all(p in c.columns for c in candidates for p in partition_fields)
    return TableSchema(tuple(columns)), in_files


def _difference(reference: dict[str, ColumnType], own: dict[str, ColumnType]) -> str:
    missing = [n for n in reference if n not in own]
    extra = [n for n in own if n not in reference]
    changed = [
        f"{n}: {own[n]} instead of {reference[n]}" for n in reference if n in own and own[n] != reference[n]
    ]
    parts = [f"lacks {', '.join(missing)}"] if missing else []
    parts += [f"has extra {', '.join(extra)}"] if extra else []
    return ", ".join(parts + changed)


def infer_path_type(texts: Sequence[str]) -> ColumnType:
    """The type of a partition column known only from its path values (NULLs left out), as Spark's
    partition discovery infers it: int, bigint, date, boolean, else string."""
    if texts and all(_INTEGER.fullmatch(t) for t in texts):
        fits = all(_INT32[0] <= int(t) <= _INT32[1] for t in texts)
        return parse_type("int" if fits else "bigint")
    if texts and all(_is_date(t) for t in texts):
        return parse_type("date")
    if texts and all(t.lower() in ("true", "false") for t in texts):
        return parse_type("boolean")
    return parse_type("string")


def _is_date(text: str) -> bool:
    try:
        return len(text) == 10 and date.fromisoformat(text) is not None
    except ValueError:
        return False


def _key_rows(storage: Storage, config: TableConfig) -> BatchFunction:
    """Per file (number and path): the encoded record key of each row, or one row naming why
    the file cannot be adopted (unreadable; a stored partition column that disagrees with the
    file's directory, which pruning by the path would get wrong). Files are read a batch at a
    time; a file that fails part way may have sent keys before its error row, which fails the
    adopt all the same (`_check_keys`)."""
    schema = config.schema
    key_fields = config.record_key
    columns = list(dict.fromkeys([*key_fields, *config.partition_fields]))

    def keys_of(number: int, path: str) -> Iterator[pa.RecordBatch]:
        for rows in iter_data_file(storage, path, schema, columns, KEYS_BATCH_ROWS):
            error = _disagreeing(rows, path, schema, config.partition_fields)
            if error is not None:
                yield pa.RecordBatch.from_pylist([{"file": number, "error": error}], KEYS_SCHEMA)
                return
            n = rows.num_rows
            keys = pa.Table.from_arrays(
                [
                    pa.repeat(pa.scalar(number, pa.int32()), n),
                    encode_record_keys(rows, key_fields),
                    pa.nulls(n, pa.string()),
                ],
                schema=KEYS_SCHEMA,
            )
            yield from keys.to_batches()

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for item in batch.to_pylist():
                try:
                    yield from keys_of(item["file"], item["path"])
                except (OSError, pa.ArrowInvalid) as exc:
                    error = f"is not a readable Parquet file ({exc})"
                    yield pa.RecordBatch.from_pylist([{"file": item["file"], "error": error}], KEYS_SCHEMA)

    return run


def _disagreeing(
    rows: pa.Table, path: str, schema: TableSchema, partition_fields: tuple[str, ...]
) -> str | None:
    """Why a file's stored partition columns disagree with its directory, or None."""
    expected = path_values(partition_of(path), schema)
    for column in partition_fields:
        values = rows.column(column)
        value = expected.get(column)
        if value is None:
            agrees = values.null_count == len(values)
        else:
            agrees = bool(pc.all(pc.fill_null(pc.equal(values, value), False)).as_py())
        if len(values) and not agrees:
            shown = "NULL" if value is None else format_value(value)
            return f"stores {column} values other than its directory's ({column}={shown})"
    return None


def _locate_keys(
    spark: SparkSession, storage: Storage, config: TableConfig, files: list[DataFile]
) -> DataFrame:
    paths = pa.array([f.path for f in files], pa.string())
    listing = pa.table({"file": pa.array(range(len(files)), pa.int32()), "path": paths})
    parallelism = spark.sparkContext.defaultParallelism * 2
    keys = over_tasks(spark, listing, parallelism, _key_rows(storage, config), from_arrow_schema(KEYS_SCHEMA))
    log.info("adopt: locating the record keys of %d file(s)", len(files))
    return persist_intermediate(keys)  # read by the checks, then by the record index's logs


def _check_keys(storage: Storage, files: list[DataFile], located: DataFrame) -> None:
    """Unreadable files, null keys and duplicate keys, found in one job that groups the located
    keys by key (a file that failed, like a null key, lands in the null key's group), each reported
    as one line naming files: an unreadable file first, then a null key, then the smallest
    duplicated key (with the number of duplicated keys in all)."""
    problems = (
        located.groupBy("key")
        .agg(
            F.count(F.lit(1)).alias("n"),
            F.array_sort(F.collect_set("file")).alias("files"),
            F.min(F.when(F.col("error").isNotNull(), F.struct("file", "error"))).alias("failure"),
        )
        .where(F.col("key").isNull() | (F.col("n") > 1))
    )
    found = problems.orderBy(F.col("key").asc_nulls_first()).limit(1).collect()
    if not found:
        return
    problem = found[0]
    if problem["failure"] is not None:
        path, error = files[problem["failure"]["file"]].path, problem["failure"]["error"]
        raise InvalidInputError(f"cannot adopt {storage.uri}: {path} {error}; nothing was written")
    if problem["key"] is None:
        raise InvalidInputError(
            f"cannot adopt {storage.uri}: {files[problem['files'][0]].path} holds a record with a null "
            "record key; nothing was written"
        )
    total = problems.where(F.col("key").isNotNull()).count()  # the failing path only
    paths = sorted(files[number].path for number in problem["files"])
    where = f"in {', '.join(paths[:SHOWN])}" if len(paths) > 1 else f"twice in {paths[0]}"
    raise InvalidInputError(
        f"cannot adopt {storage.uri}: duplicate record key {problem['key']!r} {where} "
        f"({total} duplicate key(s) in all); nothing was written"
    )


def _publish(storage: Storage, config: TableConfig, files: list[DataFile], located: DataFrame) -> AdoptResult:
    """Write `.lakeprune/`: table.json, then the adopt commit; on failure remove it all again."""
    if not create_config(storage, config):
        raise TableExistsError(f"a lakeprune table already exists at {storage.uri}")
    try:
        with (
            table_lock(storage, "adopt"),
            run_instant(storage, Action.COMMIT, {"operation": "adopt"}) as pending,
        ):
            instant = pending.timestamp
            added = [DataFile(f.partition, f.file_name, f.file_group, instant, f.size, f.rows) for f in files]
            partitions = sorted({f.partition for f in added})
            rli_spec = record_index.spec(config.properties.index_record_index_buckets)
            files_spec = files_index.spec(config.properties.index_files_buckets)
            pending.inflight(partitions, [files_spec.name, rli_spec.name])
            index_files = _write_record_index_logs(located, files, storage, rli_spec, instant)
            files_logs = write_logs(storage, files_spec, instant, files_index.changes(added, []))
            rows = sum(f.rows for f in added)
            pending.complete(
                {
                    "operation": "adopt",
                    "added": [f.to_json() for f in added],
                    "removed": [],
                    "index_files": sorted(index_files + files_logs),
                    "stats": {
                        "inserted": rows,
                        "updated": 0,
                        "deleted": 0,
                        "files_added": len(added),
                        "files_removed": 0,
                    },
                }
            )
    except BaseException:
        storage.fs.delete_dir(storage.path(META_DIR))
        raise
    log.info("adopted %s: %d file(s), %d row(s) as instant %s", storage.uri, len(added), rows, instant)
    return AdoptResult(config.name, instant, len(added), rows, len(partitions), config.path_columns_in_files)
