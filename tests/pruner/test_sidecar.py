"""The sidecar's lifecycle: NOT_SERVING (gRPC health and HTTP `/health`) until every warehouse root
was listed once, a port in use is
a configuration error that leaves nothing running, the Thrift endpoint is started and stopped with
the rest, and a stop lets calls in flight finish before the server goes away."""

from __future__ import annotations

import socket
import sys
import threading
import time
import types
from pathlib import Path
from typing import Any, ClassVar

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from builder.create import create_table
from pruner.client import PruningClient, ServiceError
from pruner.planner.planner import Planner
from pruner.predicate.domain import Domain
from pruner.predicate.tuple_domain import TupleDomain
from pruner.serving.catalog import Catalog
from pruner.serving.config import ConfigError, S3Settings, ServeConfig
from pruner.serving.metrics import Metrics
from pruner.sidecar import Sidecar
from tests.pruner.service.conftest import SCHEMA, TABLE, address, make_config
from tests.support_hostile import server_log
from tests.support_http import health
from tests.support_s3 import SeaweedS3


def health_of(sidecar: Sidecar, service: str = "") -> int:
    with grpc.insecure_channel(address(sidecar)) as channel:
        response = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=service))
        return int(response.status)


def test_not_serving_until_every_root_was_listed(tmp_path: Path) -> None:
    create_table(str(tmp_path / "here" / "events"), "id bigint", record_key="id")
    config = ServeConfig(
        {"here": str(tmp_path / "here"), "later": str(tmp_path / "later")},
        grpc_port=0,
        thrift_port=None,
        metrics_port=0,
    )
    with Sidecar(config) as sidecar:
        assert not sidecar.wait_ready(0.3)
        for service in ("", "lakeprune.v1.PruningService"):
            assert health_of(sidecar, service) == health_pb2.HealthCheckResponse.NOT_SERVING
        assert health(sidecar.metrics_port) == (503, {"status": "NOT_SERVING"})
        with PruningClient(address(sidecar)) as client:  # what can be answered is answered
            assert client.list_tables("here")[0].table == "events"
        (tmp_path / "later").mkdir()
        assert sidecar.wait_ready(10)
        assert health_of(sidecar) == health_pb2.HealthCheckResponse.SERVING
        assert health(sidecar.metrics_port) == (200, {"status": "SERVING"})


def test_a_port_in_use_is_a_config_error_and_nothing_keeps_running(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = ServeConfig({"a": str(tmp_path)}, grpc_port=port, thrift_port=None, metrics_port=0)
        sidecar = Sidecar(config)
        with pytest.raises(ConfigError, match=f"cannot listen for gRPC on 127.0.0.1:{port}"):
            sidecar.start()
    assert sidecar.metrics_port is None
    sidecar.wait()  # stopped


class FakeThriftEndpoint:
    instances: ClassVar[list[FakeThriftEndpoint]] = []

    def __init__(
        self, config: ServeConfig, catalog: Catalog, metrics: Metrics, *, reuse_port: bool = False
    ) -> None:
        self.config, self.catalog, self.metrics = config, catalog, metrics
        self.reuse_port = reuse_port
        self.stopped_with: float | None = None
        FakeThriftEndpoint.instances.append(self)

    def start(self) -> int:
        return 12345

    def stop(self, grace: float) -> None:
        self.stopped_with = grace


def test_the_thrift_endpoint_shares_the_catalog_and_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = types.ModuleType("pruner.thrift.endpoint")
    module.ThriftEndpoint = FakeThriftEndpoint  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pruner.thrift.endpoint", module)
    config = ServeConfig({"a": str(tmp_path)}, grpc_port=0, thrift_port=0, metrics_port=None)
    sidecar = Sidecar(config).start()
    endpoint = FakeThriftEndpoint.instances[-1]
    assert sidecar.thrift_port == 12345
    assert (
        endpoint.config is config
        and endpoint.catalog is sidecar.catalog
        and endpoint.metrics is sidecar.metrics
    )
    sidecar.stop(2.5)
    assert endpoint.stopped_with == 2.5


def test_stop_lets_calls_in_flight_finish(
    lake: str, indexed_table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = Planner.plan
    entered = threading.Event()

    def slow(self: Planner, predicate: TupleDomain, *rest: Any) -> Any:
        entered.set()
        time.sleep(1)
        return original(self, predicate, *rest)

    monkeypatch.setattr(Planner, "plan", slow)
    predicate = TupleDomain.with_domains({"id": Domain.single_value(3)})
    sidecar = Sidecar(make_config(lake)).start()
    assert sidecar.wait_ready(10)
    outcome: dict[str, Any] = {}

    def call() -> None:
        with PruningClient(address(sidecar)) as client:
            try:
                outcome["result"] = client.prune(SCHEMA, TABLE, predicate)
            except ServiceError as exc:  # pragma: no cover - reported by the assertion
                outcome["error"] = exc

    caller = threading.Thread(target=call)
    caller.start()
    assert entered.wait(10)
    started = time.perf_counter()
    sidecar.stop(grace=10)
    caller.join()
    assert "error" not in outcome and outcome["result"].files_selected == 1
    assert time.perf_counter() - started < 5  # stopped as soon as the call finished, not after the grace
    with PruningClient(address(sidecar), timeout=3) as client, pytest.raises(ServiceError) as raised:
        client.list_tables()
    assert raised.value.code == grpc.StatusCode.UNAVAILABLE


def test_the_config_s3_section_overrides_the_aws_variables(
    s3_root: str, s3_environment: SeaweedS3, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the AWS variables pointing at a closed port with a wrong key pair, a sidecar whose
    config names the S3 server and its keys serves the S3 warehouse; the secret is not logged."""
    create_table(f"{s3_root}/events", "id bigint", record_key="id")
    server = s3_environment
    for name, value in {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
        "AWS_ACCESS_KEY_ID": "wrong",
        "AWS_SECRET_ACCESS_KEY": "wrong",
    }.items():
        monkeypatch.setenv(name, value)  # restored after the test, whatever the sidecar sets
    s3 = S3Settings(
        endpoint=server.endpoint, access_key_id=server.access_key, secret_access_key=server.secret_key
    )
    config = ServeConfig({"lake": s3_root}, grpc_port=0, thrift_port=None, metrics_port=None, s3=s3)
    with server_log() as log, Sidecar(config) as sidecar:
        assert sidecar.wait_ready(30), "the sidecar did not list the S3 warehouse"
        with PruningClient(address(sidecar)) as client:
            assert [t.table for t in client.list_tables("lake")] == ["events"]
    assert f"S3 settings from the config: endpoint={server.endpoint} credentials=config" in log.getvalue()
    assert server.secret_key not in log.getvalue()
