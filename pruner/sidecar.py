"""`Sidecar`: one running pruning sidecar. It owns the configuration, the index cache, the catalog,
the metrics, and the endpoints: the gRPC server (PruningService, standard health checking and
server reflection, optional TLS and bearer token), the Prometheus HTTP endpoint, and the Thrift
endpoint for Trino / Presto. `start()` binds everything (port 0 picks a free port; the bound ports
are exposed as attributes) and returns at once; health reports NOT_SERVING until every warehouse
root has been listed successfully once (retried in the background), then SERVING. `stop(grace)`
reports NOT_SERVING, refuses new calls, lets calls in flight finish for up to `grace` seconds and
then closes everything; `wait()` blocks until then. As one worker of `lakeprune serve --workers N`
(`pruner.supervisor`), a sidecar binds its gRPC and Thrift ports with SO_REUSEPORT (`reuse_port`),
sharing them with the other workers, its metrics on a private address (`metrics_host`) that the
supervisor scrapes, and gRPC also on a port of its own (`own_grpc_port`), where only it answers.
A sidecar that is the process's server (`tune_gc`: `lakeprune serve` and its workers) tunes the
garbage collector once its catalog is loaded (`pruner.serving.gc_tuning`)."""

from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc

from pruner.metadata.index_partition import BucketCache
from pruner.service.auth import BearerTokenInterceptor
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2_grpc as spb_grpc
from pruner.service.grpc_service import SERVICE_NAME, PruningServicer
from pruner.service.handlers import add_servicer
from pruner.serving.catalog import Catalog
from pruner.serving.config import ConfigError, ServeConfig
from pruner.serving.gc_tuning import tune_for_serving
from pruner.serving.http import HealthReport
from pruner.serving.metrics import Metrics
from pruner.serving.workers import Workers

log = logging.getLogger(__name__)

MAX_WORKERS = 16
# A 100,000-value IN list of strings is a few MB; a PruneStream chunk of 10,000 splits ~2 MB.
MAX_MESSAGE_BYTES = 64 * 1024**2
RETRY_SECONDS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
# Full paths of the methods the gRPC port serves: metrics label these by name, the rest `other`.
SERVED_METHODS = frozenset(
    f"/{service.full_name}/{method.name}"
    for service in (
        spb.DESCRIPTOR.services_by_name["PruningService"],
        health_pb2.DESCRIPTOR.services_by_name["Health"],
        reflection_pb2.DESCRIPTOR.services_by_name["ServerReflection"],
    )
    for method in service.methods
)


class Sidecar:
    def __init__(
        self,
        config: ServeConfig,
        max_workers: int = MAX_WORKERS,
        *,
        reuse_port: bool = False,
        metrics_host: str | None = None,
        own_grpc_port: int | None = None,
        tune_gc: bool = False,
    ) -> None:
        self.config = config
        # a serving process's collector settings once the catalog is loaded (`gc_tuning`)
        self.tune_gc = tune_gc
        self.max_workers = max_workers
        self.reuse_port = reuse_port
        self.metrics_host = metrics_host or config.host
        self.cache = BucketCache(config.cache_bytes)
        self.catalog = Catalog(config.warehouses, self.cache)
        self.metrics = Metrics(self.cache)
        self.health = health.HealthServicer()
        self._set_health(health_pb2.HealthCheckResponse.NOT_SERVING)
        self.workers = Workers(max_workers, config.limits.request_timeout_seconds)
        self.ready = threading.Event()  # set once the catalog is loaded
        self.grpc_port: int | None = None
        # a port this process serves gRPC on alone, beside a shared one (`ServeConfig.worker_grpc_port`)
        self.own_grpc_port = own_grpc_port
        self.thrift_port: int | None = None
        self.metrics_port: int | None = None
        self._server: Any = None
        self._thrift: Any = None
        self._loader: threading.Thread | None = None
        self._stopping = threading.Event()
        self._stopped = threading.Event()

    # Lifecycle -------------------------------------------------------------------------------------

    def start(self) -> Sidecar:
        """Bind and start every configured endpoint; on any failure nothing is left running."""
        self._apply_s3_settings()
        try:
            if self.config.grpc_port is not None:
                self.grpc_port = self._start_grpc(self.config.grpc_port)
            if self.config.metrics_port is not None:
                self.metrics_port = self.metrics.serve_http(
                    self.metrics_host, self.config.metrics_port, self.health_report
                )
            if self.config.thrift_port is not None:
                self._thrift = _thrift_endpoint(self.config, self.catalog, self.metrics, self.reuse_port)
                self.thrift_port = int(self._thrift.start())
        except BaseException:
            self.stop(0)
            raise
        self._loader = threading.Thread(target=self._load_catalog, name="lakeprune-catalog", daemon=True)
        self._loader.start()
        log.info(
            "sidecar started: grpc=%s%s thrift=%s metrics=%s schemas=%s",
            self._address(self.grpc_port),
            "" if self.own_grpc_port is None else f" (own {self._address(self.own_grpc_port)})",
            self._address(self.thrift_port),
            self._address(self.metrics_port),
            ",".join(self.catalog.schemas()),
        )
        return self

    def _apply_s3_settings(self) -> None:
        """The config's `s3:` settings over the AWS variables of this process, before any table
        is opened (every S3 client reads the variables when it is made)."""
        for name, value in self.config.s3.environment().items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if described := self.config.s3.describe():
            log.info("S3 settings from the config: %s", described)

    def wait_ready(self, timeout: float | None = None) -> bool:
        return self.ready.wait(timeout)

    def health_report(self) -> HealthReport:
        """SERVING from the catalog's first load until `stop` (as the gRPC health service says)."""
        return HealthReport(self.ready.is_set() and not self._stopping.is_set())

    def stop(self, grace: float) -> None:
        """Stop serving: NOT_SERVING at once, new calls refused, calls in flight given `grace`."""
        if self._stopping.is_set():
            self._stopped.wait()
            return
        self._stopping.set()
        self.health.enter_graceful_shutdown()
        log.info("sidecar stopping (grace %.1f s)", grace)
        try:
            if self._thrift is not None:
                self._thrift.stop(grace)
            if self._server is not None:
                self._server.stop(grace).wait()
            self.workers.shutdown()
            self.metrics.stop_http()
            if self._loader is not None:
                self._loader.join()
        finally:
            self._stopped.set()
            log.info("sidecar stopped")

    def wait(self) -> None:
        """Block until `stop` has finished."""
        self._stopped.wait()

    def __enter__(self) -> Sidecar:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop(0)

    # Parts -----------------------------------------------------------------------------------------

    def _start_grpc(self, port: int) -> int:
        security = self.config.security
        interceptors = (
            [BearerTokenInterceptor(security.token, self.metrics, SERVED_METHODS)] if security.token else []
        )
        server = grpc.server(
            ThreadPoolExecutor(self.max_workers, thread_name_prefix="lakeprune-grpc"),
            interceptors=interceptors,
            options=[
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                # A port in use is an error, unless it is shared with this sidecar's other workers.
                ("grpc.so_reuseport", int(self.reuse_port)),
            ],
        )
        servicer = PruningServicer(
            self.catalog, self.config.limits, self.metrics, self.workers, self.config.workload.log()
        )
        # Every service through `add_servicer`: a body that does not decode is INVALID_ARGUMENT.
        names = (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME)
        for add, service in (
            (spb_grpc.add_PruningServiceServicer_to_server, servicer),
            (health_pb2_grpc.add_HealthServicer_to_server, self.health),
            (
                reflection_pb2_grpc.add_ServerReflectionServicer_to_server,
                reflection.ReflectionServicer(names),
            ),
        ):
            add_servicer(add, service, server, servicer.undecodable)
        bound = self._listen(server, port)
        if self.own_grpc_port is not None:
            self.own_grpc_port = self._listen(server, self.own_grpc_port)
        server.start()
        self._server = server
        return bound

    def _listen(self, server: Any, port: int) -> int:
        address = f"{_host(self.config.host)}:{port}"
        try:
            if self.config.security.tls:
                return int(server.add_secure_port(address, self._tls_credentials()))
            return int(server.add_insecure_port(address))
        except RuntimeError as exc:
            raise ConfigError(f"cannot listen for gRPC on {address}: {exc}") from None

    def _tls_credentials(self) -> Any:
        security = self.config.security
        assert security.tls_cert_file is not None and security.tls_key_file is not None
        try:
            with open(security.tls_key_file, "rb") as key, open(security.tls_cert_file, "rb") as cert:
                pair = (key.read(), cert.read())
        except OSError as exc:
            raise ConfigError(f"cannot read the TLS certificate or key: {exc}") from None
        return grpc.ssl_server_credentials([pair])

    def _load_catalog(self) -> None:
        """List every warehouse root until all succeed once, then report SERVING."""
        attempt = 0
        while not self._stopping.is_set():
            try:
                tables = self.catalog.load()
            except Exception as exc:
                delay = RETRY_SECONDS[min(attempt, len(RETRY_SECONDS) - 1)]
                log.warning("catalog not loaded (%s); NOT_SERVING, retrying in %.1f s", exc, delay)
                attempt += 1
                self._stopping.wait(delay)
                continue
            for schema, names in tables.items():
                log.info(
                    "schema %s: %d table(s) under %s", schema, len(names), self.config.warehouses[schema]
                )
            if self.tune_gc:
                tune_for_serving()
            self._set_health(health_pb2.HealthCheckResponse.SERVING)
            self.ready.set()
            return

    def _set_health(self, status: Any) -> None:
        for service in (health.OVERALL_HEALTH, SERVICE_NAME):
            self.health.set(service, status)

    def _address(self, port: int | None) -> str:
        return "off" if port is None else f"{self.config.host}:{port}"


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _thrift_endpoint(config: ServeConfig, catalog: Catalog, metrics: Metrics, reuse_port: bool) -> Any:
    try:
        from pruner.thrift.endpoint import ThriftEndpoint
    except ModuleNotFoundError as exc:
        if exc.name not in ("pruner.thrift", "pruner.thrift.endpoint"):
            raise
        raise ConfigError("this build has no Thrift endpoint; set listen.thrift_port: off") from None
    return ThriftEndpoint(config, catalog, metrics, reuse_port=reuse_port)
