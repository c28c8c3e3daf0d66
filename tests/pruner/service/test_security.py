"""Bearer token and TLS: every call but a health check needs the token (UNAUTHENTICATED with a
message otherwise, counted in the metrics), and with TLS only clients trusting the server's
certificate get through."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from pruner.client import PruningClient, ServiceError
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2_grpc as spb_grpc
from pruner.serving.config import Security
from pruner.sidecar import Sidecar
from tests.pruner.service.conftest import SCHEMA, TABLE, StartSidecar, address

TOKEN = "correct-horse-battery-staple"


@pytest.fixture
def guarded(start_sidecar: StartSidecar, lake: str) -> Sidecar:
    return start_sidecar(lake, security=Security(token=TOKEN))


@pytest.mark.parametrize(
    ("token", "message"),
    [
        (None, "missing bearer token: send the metadata 'authorization: Bearer <token>'"),
        ("wrong", "invalid bearer token"),
    ],
)
def test_calls_without_the_right_token_are_unauthenticated(
    guarded: Sidecar, token: str | None, message: str
) -> None:
    with PruningClient(address(guarded), token=token) as client:
        for call in (
            client.list_tables,
            lambda: client.get_table(SCHEMA, TABLE),
            lambda: client.prune(SCHEMA, TABLE, "id = 1", stream=False),
        ):
            with pytest.raises(ServiceError) as raised:
                call()
            assert raised.value.code == grpc.StatusCode.UNAUTHENTICATED
            assert raised.value.details == message
    with grpc.insecure_channel(address(guarded)) as channel:
        metadata = (("authorization", f"Bearer {token}"),) if token else ()
        stream = spb_grpc.PruningServiceStub(channel).PruneStream(
            spb.PruneRequest(table=spb.TableName(schema=SCHEMA, table=TABLE)), metadata=metadata
        )
        with pytest.raises(grpc.RpcError) as error:
            list(stream)
        assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        with pytest.raises(grpc.RpcError) as error:
            list(
                reflection.ServerReflectionInfo(
                    iter([reflection_pb2.ServerReflectionRequest(list_services="")])
                )
            )
        assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED
    # ... and the server keeps serving callers that have the token
    with PruningClient(address(guarded), token=TOKEN) as client:
        assert client.list_tables()[0].table == TABLE
        assert client.prune(SCHEMA, TABLE, "id = 1").files_selected >= 1
    labels = {"api": "grpc", "method": "ListTables", "status": "unauthenticated"}
    assert guarded.metrics.registry.get_sample_value("lakeprune_requests_total", labels) == 1


def test_health_checks_need_no_token(guarded: Sidecar) -> None:
    with grpc.insecure_channel(address(guarded)) as channel:
        response = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""))
        assert response.status == health_pb2.HealthCheckResponse.SERVING


def _certificate(directory: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    key, cert = directory / "server.key", directory / "server.crt"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def test_tls_with_a_token(start_sidecar: StartSidecar, lake: str, tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path)
    sidecar = start_sidecar(
        lake, security=Security(token=TOKEN, tls_cert_file=str(cert), tls_key_file=str(key))
    )
    target = f"localhost:{sidecar.grpc_port}"
    with PruningClient(target, token=TOKEN, tls_root_cert=str(cert)) as client:
        assert client.prune(SCHEMA, TABLE, "id = 1").files_selected >= 1
    with PruningClient(target, token=TOKEN, timeout=3) as plain, pytest.raises(ServiceError) as raised:
        plain.list_tables()
    assert raised.value.code == grpc.StatusCode.UNAVAILABLE
    with (
        PruningClient(target, tls_root_cert=cert.read_bytes()) as tokenless,
        pytest.raises(ServiceError) as raised,
    ):
        tokenless.list_tables()
    assert raised.value.code == grpc.StatusCode.UNAUTHENTICATED
