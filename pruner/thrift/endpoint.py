"""The Thrift endpoint of `lakeprune serve`: the connector service (`handler`) on the wire server
(`wire`), with every call timed, counted and logged through the sidecar's `Metrics`, the split key
from the config, and the split hosts it advertises (the configured addresses, else its own), so
that several sidecars behind one catalog share the data path. Failures are classified by the
sidecar's one error map (`pruner.serving.errors.classify`), both for the metrics' status label and
for the answer the wire server sends (UNAVAILABLE, i.e. storage trouble, is retryable), whose
message names schemas, not the server's paths (`Catalog.redact`). The connection limits come from
the config's `limits` and the connection counts go to the metrics. With `reuse_port` the port is shared
with the other planning processes of the same sidecar (`lakeprune serve --workers N`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, cast

from pruner.planner.result import PruneResult
from pruner.predicate.tuple_domain import TupleDomain
from pruner.serving.catalog import Catalog
from pruner.serving.config import ServeConfig
from pruner.serving.errors import classify
from pruner.serving.metrics import Metrics
from pruner.table.table import LakeTable
from pruner.thrift import idl
from pruner.thrift.connections import ConnectionLimits
from pruner.thrift.dispatch import calling_engine
from pruner.thrift.handler import LakepruneConnector
from pruner.thrift.methods import ConnectorService
from pruner.thrift.tokens import TokenSealer
from pruner.thrift.wire import ThriftServer

API = "thrift"


class ThriftEndpoint:
    def __init__(
        self, config: ServeConfig, catalog: Catalog, metrics: Metrics, *, reuse_port: bool = False
    ) -> None:
        self.config = config
        self.metrics = metrics
        self.workload = config.workload.log()
        self._port: int | None = None
        self.connector = LakepruneConnector(
            catalog,
            TokenSealer(config.security.split_key),
            self._hosts,
            on_prune=self._on_prune,
            on_rows=lambda rows, nbytes: metrics.rows_served(API, rows, nbytes),
            limits=config.limits,
        )
        self.server = ThriftServer(
            cast(ConnectorService, _Metered(self.connector, metrics)),
            config.host,
            config.thrift_port or 0,
            max_frame_size=config.limits.max_frame_bytes,
            classify_error=functools.partial(classify, redact=catalog.redact),
            limits=ConnectionLimits(
                max_connections=config.limits.thrift_max_connections,
                idle_timeout=config.limits.thrift_idle_timeout_seconds,
                frame_timeout=config.limits.thrift_frame_timeout_seconds,
            ),
            reuse_port=reuse_port,
        )
        metrics.watch_connections(API, self.server.stats)

    def start(self) -> int:
        self._port = self.server.start()
        return self._port

    def stop(self, grace: float) -> None:
        self.server.stop(grace)

    def _hosts(self) -> list[idl.HostAddress]:
        if self._port is None:
            raise RuntimeError("the Thrift endpoint is not started")
        return [idl.HostAddress(host, port) for host, port in self.config.thrift_hosts(self._port)]

    def _on_prune(self, method: str, table: LakeTable, domain: TupleDomain, result: PruneResult) -> None:
        self.metrics.prune_result(API, result)
        if self.workload is not None:
            # the engine calling (Presto, or Trino's thrift connector), over Thrift
            self.workload.record_prune(table, f"{calling_engine.get()} (thrift)", domain, result)


class _Metered:
    """The connector with each service method wrapped in `Metrics.request`."""

    def __init__(self, connector: LakepruneConnector, metrics: Metrics) -> None:
        self._connector = connector
        self._metrics = metrics

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self._connector, name)
        wire_name = "".join(part.capitalize() if i else part for i, part in enumerate(name.split("_")))

        @functools.wraps(method)
        def metered(*args: Any) -> Any:
            table = next(
                (f"{a.schemaName}.{a.tableName}" for a in args if isinstance(a, idl.SchemaTableName)), None
            )
            with self._metrics.request(API, wire_name, table):
                return method(*args)

        return metered
