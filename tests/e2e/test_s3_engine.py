"""Trino 476 with the native and the Thrift catalog over a warehouse on S3 (issue 16: "the Trino
e2e corpus passes over an S3 warehouse"). The session's e2e warehouse is copied whole — data files
and each table's `.lakeprune/` — into a bucket of the session's SeaweedFS server, so that DuckDB's
reference reads the same bytes locally; one in-process sidecar serves that `s3://` copy over gRPC
and Thrift, and one Trino started by the launcher reads the split paths the sidecar plans
(`s3://...`) through its native S3 file system (native catalog) or asks the sidecar for the rows
(Thrift catalog, `lakeprune_thrift`), all configured by nothing but the AWS SDKs' variables. Every
query of the e2e corpus answers as DuckDB does over the local original (exactly, decimals
included, through the native catalog), the selective ones pruned by the sidecar; the fixture's
secret key is in no file under Trino's data directory (its catalog names
`${ENV:AWS_SECRET_ACCESS_KEY}`, its logs) and in no record the sidecar logs."""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from pruner.engines.native_catalog import SECRET_KEY_REFERENCE, NativeCatalog, s3_access_from_environment
from pruner.serving.config import ServeConfig
from pruner.sidecar import Sidecar
from pruner.table.table import LakeTable
from tests.e2e.engines import Engine, local_engine
from tests.e2e.native import check_query, native_plugin
from tests.e2e.queries import QUERIES, Query
from tests.e2e.queries import check_query as check_thrift_query
from tests.e2e.warehouse import SCHEMA_NAME, TABLES
from tests.support_s3 import TEST_BUCKET, SeaweedS3, point_environment_at

pytestmark = [pytest.mark.slow, pytest.mark.engine, pytest.mark.s3]


@dataclass(frozen=True)
class OnS3:
    engine: Engine
    sidecar: Sidecar
    local: Path  # the session's warehouse, DuckDB's reference
    location: str  # its copy on S3, which the sidecar serves
    trino_dir: Path  # Trino's data directory (etc/, var/log/)
    secret: str  # the S3 server's secret key
    logged: list[str]  # every record logged in this process while the module ran


class _Records(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(self.format(record))


def copy_to_s3(server: SeaweedS3, local: Path) -> str:
    """The local warehouse copied file by file under a new prefix of the tests' bucket; its
    `s3://` root."""
    root = f"{server.new_bucket(TEST_BUCKET)}/{uuid.uuid4().hex}/{SCHEMA_NAME}"
    pafs.copy_files(
        str(local),
        root,
        source_filesystem=pafs.LocalFileSystem(),
        destination_filesystem=server.filesystem(),
    )
    return f"s3://{root}"


@pytest.fixture(scope="module")
def on_s3(
    request: pytest.FixtureRequest, s3_server: SeaweedS3, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OnS3]:
    plugin = native_plugin()
    local: Path = request.getfixturevalue("lake_warehouse")  # built before the environment points at S3
    location = copy_to_s3(s3_server, local)
    trino_dir = tmp_path_factory.mktemp("trino-s3")
    logged: list[str] = []
    handler = _Records(logged)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        with pytest.MonkeyPatch.context() as environment:
            point_environment_at(s3_server, environment)  # the sidecar's and Trino's, restored after
            config = ServeConfig(
                {SCHEMA_NAME: location}, host="127.0.0.1", grpc_port=0, thrift_port=0, metrics_port=None
            )
            sidecar = Sidecar(config).start()
            try:
                assert sidecar.wait_ready(30), "the sidecar did not load its S3 catalog"
                grpc = NativeCatalog(
                    f"127.0.0.1:{sidecar.grpc_port}", s3=s3_access_from_environment(os.environ)
                )
                thrift = f"127.0.0.1:{sidecar.thrift_port}"
                with local_engine("trino", thrift, grpc=grpc, plugin=plugin, data_dir=trino_dir) as engine:
                    yield OnS3(engine, sidecar, local, location, trino_dir, s3_server.secret_key, logged)
            finally:
                sidecar.stop(2)
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def test_the_catalog_lists_the_s3_warehouse(on_s3: OnS3) -> None:
    tables = on_s3.engine.query(f"SHOW TABLES FROM lakeprune.{SCHEMA_NAME}")
    assert sorted(tables) == [[t] for t in TABLES]
    files = on_s3.engine.query(f'SELECT count(*) FROM lakeprune.{SCHEMA_NAME}."trips$files"')
    assert files == [[len(LakeTable.open(f"{on_s3.location}/trips").snapshot().files())]]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_query_matches_duckdb_exactly(on_s3: OnS3, query: Query) -> None:
    """The whole corpus, read from S3: DuckDB's answer over the local files, decimals exact;
    selective queries and joins on the record key prune."""
    check_query(on_s3.engine, on_s3.sidecar, on_s3.local, query)


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_query_through_the_thrift_catalog_matches_duckdb(on_s3: OnS3, query: Query) -> None:
    """The corpus through the Thrift catalog: the sidecar reads the rows from S3 itself."""
    check_thrift_query(on_s3.engine, on_s3.sidecar, on_s3.local, query, catalog="lakeprune_thrift")


def test_no_secret_in_trino_files_or_the_sidecar_log(on_s3: OnS3) -> None:
    """After the corpus ran: the catalog names the secret through Trino's environment, and neither
    Trino's files (catalog, logs) nor this process's log records hold it."""
    catalog = (on_s3.trino_dir / "etc" / "catalog" / "lakeprune.properties").read_text()
    assert f"s3.aws-secret-key={SECRET_KEY_REFERENCE}" in catalog.splitlines()
    holding = [
        str(path.relative_to(on_s3.trino_dir))
        for path in sorted(on_s3.trino_dir.rglob("*"))
        if path.is_file() and on_s3.secret.encode() in path.read_bytes()
    ]
    assert holding == [], f"the S3 secret key is in {holding}"
    assert any("sidecar started" in record for record in on_s3.logged), "no sidecar log was captured"
    assert not [record for record in on_s3.logged if on_s3.secret in record]
