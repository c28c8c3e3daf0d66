"""`Supervisor`: runs N workers (`worker`) behind the same gRPC and Thrift ports and keeps them
running. `start()` holds the ports (`ports`; port 0 becomes one free port, chosen once), serves the
metrics port itself (the sum over workers, `aggregate`, plus the workers' count and restarts; its
`/health` is SERVING while at least one worker is ready, with the workers by state),
starts the workers and returns when each has bound the ports. With `worker_grpc_port` it also holds
one gRPC port per worker, which only that worker (and its replacement) binds: SO_REUSEPORT spreads
connections, not calls, so a client holding one connection (Trino's connector holds one channel per
address) keeps every call on one worker; a client that lists the workers' own ports and spreads its
calls over them (the connector round-robins calls over its addresses) reaches each worker by
construction, with no proxy in between. A worker that fails to start is a
`ConfigError` and nothing is left running. A worker that exits while serving (killed, crashed) is
logged and replaced after a back-off that grows with each consecutive failure (0.5 s up to 30 s;
a worker that ran for a minute resets it), so a worker that cannot run does not cause a restart
storm. `stop(grace)` sends SIGTERM to every worker (each stops like a single sidecar: health
NOT_SERVING, calls in flight finish within `grace`), kills what still runs shortly after, and frees
the ports. All workers are started and stopped by one thread, which lives until they are gone: the
kernel kills a worker when the thread that started it ends (PR_SET_PDEATHSIG), and so when the
supervisor dies in any way."""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from pruner.serving.config import ConfigError, ServeConfig
from pruner.serving.http import HealthReport, serve_http, stop_http
from pruner.serving.logs import LogFormat
from pruner.supervisor.aggregate import WorkerMetrics
from pruner.supervisor.orders import WorkerOrder
from pruner.supervisor.ports import SharedPort, reserve
from pruner.supervisor.process import WorkerProcess, describe_exit

log = logging.getLogger(__name__)

START_TIMEOUT_SECONDS = 120.0
BACKOFF_SECONDS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
STABLE_SECONDS = 60.0  # a worker that ran this long resets the back-off
KILL_AFTER_GRACE_SECONDS = 5.0
POLL_SECONDS = 0.1


@dataclass(frozen=True)
class WorkerStates:
    configured: int
    running: int
    ready: int
    restarts: int  # workers that exited while serving and were replaced


@dataclass
class _Slot:
    """Worker number `index`: its process, or when the next one starts."""

    index: int
    process: WorkerProcess | None = None
    failures: int = 0
    restart_at: float = 0.0


class Supervisor:
    def __init__(
        self, config: ServeConfig, log_format: LogFormat = LogFormat.PLAIN, grace: float = 10.0
    ) -> None:
        self.config = config
        self.log_format = log_format
        self.grace = grace
        self.grpc_port: int | None = None
        self.thrift_port: int | None = None
        self.metrics_port: int | None = None
        self.worker_grpc_ports: list[int] = []  # worker i's own gRPC port at [i - 1]; [] if none
        self.restarts = 0
        self._slots = [_Slot(i + 1) for i in range(config.workers)]
        self._lock = threading.Lock()
        self._serving = False
        self._failure: str | None = None
        self._stop_called = False
        self._stopping = threading.Event()
        self._stopped = threading.Event()
        self._monitor: threading.Thread | None = None
        self._held: list[SharedPort] = []
        self._http: WSGIServer | None = None
        self.metrics = WorkerMetrics(self.metrics_sources)

    # Lifecycle -------------------------------------------------------------------------------------

    def start(self) -> Supervisor:
        """Hold the ports, serve the metrics, start every worker; on any failure nothing runs."""
        try:
            worker_config = self._hold_ports()
            if self.config.metrics_port is not None:
                self.metrics_port = self._serve_metrics(self.config.metrics_port)
            self._monitor = threading.Thread(
                target=self._run, args=(worker_config,), name="lakeprune-supervisor", daemon=True
            )
            self._monitor.start()
            self._wait_started()
        except BaseException:
            self.stop(0)
            raise
        log.info(
            "supervisor started %d workers (pids %s): grpc=%s%s thrift=%s metrics=%s",
            len(self._slots),
            ",".join(str(pid) for pid in self.pids()),
            self._address(self.grpc_port),
            "".join(f" worker {i}={self._address(p)}" for i, p in enumerate(self.worker_grpc_ports, 1)),
            self._address(self.thrift_port),
            self._address(self.metrics_port),
        )
        return self

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Whether every worker reported ready (catalog loaded, health SERVING) within `timeout`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._stopping.is_set():
            states = self.states()
            if states.ready == states.configured:
                return True
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(POLL_SECONDS)
        return False

    def pids(self) -> list[int]:
        """The process ids of the running workers, by worker number."""
        with self._lock:
            return [
                s.process.pid for s in self._slots if s.process is not None and s.process.returncode() is None
            ]

    def states(self) -> WorkerStates:
        with self._lock:
            processes = [s.process for s in self._slots if s.process is not None]
            restarts = self.restarts
        running = [p for p in processes if p.returncode() is None]
        return WorkerStates(len(self._slots), len(running), sum(p.ready.is_set() for p in running), restarts)

    def health_report(self) -> HealthReport:
        """The sidecar's health as a whole: SERVING while at least one worker is ready and the
        supervisor is not stopping (new connections go to any worker that has bound the ports, and a
        worker answers once its catalog is loaded), with the workers by state so that a probe sees
        a worker being replaced (`ready` < `configured`)."""
        states = self.states()
        workers = {"configured": states.configured, "running": states.running, "ready": states.ready}
        return HealthReport(
            states.ready > 0 and not self._stopping.is_set(),
            {"workers": workers, "restarts": states.restarts},
        )

    def stop(self, grace: float | None = None) -> None:
        """Stop every worker gracefully (`grace`: default as configured), then free the ports."""
        if grace is not None:
            self.grace = grace
        with self._lock:
            called, self._stop_called = self._stop_called, True
        if called:
            self._stopped.wait()
            return
        self._stopping.set()  # (already set by the monitor if a worker failed to start)
        try:
            if self._monitor is not None:
                self._monitor.join()
            if self._http is not None:
                stop_http(self._http)
            for held in self._held:
                held.close()
        finally:
            self._stopped.set()
            if self._monitor is not None:
                log.info("supervisor stopped")

    def __enter__(self) -> Supervisor:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop(0)

    # Parts -----------------------------------------------------------------------------------------

    def _hold_ports(self) -> ServeConfig:
        """Hold the gRPC and Thrift ports; the config the workers get (those ports, their own
        metrics on a free loopback port each)."""
        self.grpc_port = self._hold("gRPC", self.config.grpc_port)
        self.thrift_port = self._hold("Thrift", self.config.thrift_port)
        first = self.config.worker_grpc_port
        if first is not None:
            for slot in self._slots:
                port = self._hold(f"gRPC of worker {slot.index}", first and first + slot.index - 1)
                assert port is not None
                self.worker_grpc_ports.append(port)
        return dataclasses.replace(
            self.config,
            grpc_port=self.grpc_port,
            thrift_port=self.thrift_port,
            metrics_port=None if self.config.metrics_port is None else 0,
            worker_grpc_port=None,  # each worker gets its own port in its order
        )

    def _hold(self, endpoint: str, port: int | None) -> int | None:
        if port is None:
            return None
        held = reserve(endpoint, self.config.host, port)
        self._held.append(held)
        return held.port

    def _serve_metrics(self, port: int) -> int:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(self.metrics)
        registry.register(_SupervisorCollector(self))
        try:
            server = serve_http(self.config.host, port, registry, self.health_report)
        except OSError as exc:
            raise ConfigError(
                f"cannot listen for metrics on {self.config.host}:{port}: {exc.strerror or exc}"
            ) from None
        self._http = server
        return int(server.server_port)

    def _wait_started(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while True:
            with self._lock:
                failure = self._failure
                processes = [slot.process for slot in self._slots]
            if failure is not None:
                raise ConfigError(failure)
            if all(p is not None and p.started.is_set() for p in processes):
                with self._lock:
                    self._serving = True
                return
            if time.monotonic() > deadline:
                raise ConfigError(f"the workers did not start within {START_TIMEOUT_SECONDS:.0f} s")
            time.sleep(POLL_SECONDS)

    def metrics_sources(self) -> list[tuple[int, int]]:
        """(pid, private metrics port) of every started worker."""
        with self._lock:
            return [
                (s.process.pid, s.process.metrics_port)
                for s in self._slots
                if s.process is not None and s.process.metrics_port is not None
            ]

    def _address(self, port: int | None) -> str:
        return "off" if port is None else f"{self.config.host}:{port}"

    # The monitor thread ----------------------------------------------------------------------------

    def _run(self, worker_config: ServeConfig) -> None:
        """Start the workers, replace those that exit, and stop them all when asked."""
        all_ready = False
        try:
            while not self._stopping.is_set():
                now = time.monotonic()
                for slot in self._slots:
                    self._tend(slot, worker_config, now)
                states = self.states()
                if (states.ready == states.configured) != all_ready:
                    all_ready = not all_ready
                    if all_ready:
                        log.info("all %d workers ready (health SERVING)", states.configured)
                self._stopping.wait(POLL_SECONDS)
        finally:
            self._stop_workers()

    def _tend(self, slot: _Slot, worker_config: ServeConfig, now: float) -> None:
        process = slot.process
        if process is None:
            if now >= slot.restart_at:
                self._spawn(slot, worker_config, now)
            return
        returncode = process.returncode()
        if returncode is None:
            return
        process.close()
        self.metrics.retire(process.pid)
        how = describe_exit(returncode)
        with self._lock:
            if not self._serving:
                self._failure = f"worker {slot.index} exited with {how} while starting (its error is above)"
                self._stopping.set()
                return
            if now - process.began >= STABLE_SECONDS:
                slot.failures = 0
            slot.process = None
            self.restarts += 1
        delay = self._back_off(slot, now)
        log.warning(
            "worker %d (pid %d) exited with %s; starting a replacement in %.1f s",
            slot.index,
            process.pid,
            how,
            delay,
        )

    def _spawn(self, slot: _Slot, worker_config: ServeConfig, now: float) -> None:
        own_port = self.worker_grpc_ports[slot.index - 1] if self.worker_grpc_ports else None
        order = WorkerOrder(
            slot.index, worker_config, self.log_format, _log_levels(), self.grace, os.getpid(), own_port
        )
        try:
            started = WorkerProcess(order)
        except OSError as exc:  # no process could be made (memory, process limit): try again later
            log.error(
                "cannot start worker %d (%s); trying again in %.1f s",
                slot.index,
                exc,
                self._back_off(slot, now),
            )
            return
        with self._lock:
            slot.process = started

    def _back_off(self, slot: _Slot, now: float) -> float:
        """Schedule the slot's next start after the next delay of the back-off; the delay."""
        delay = BACKOFF_SECONDS[min(slot.failures, len(BACKOFF_SECONDS) - 1)]
        slot.failures += 1
        slot.restart_at = now + delay
        return delay

    def _stop_workers(self) -> None:
        with self._lock:
            processes = [slot.process for slot in self._slots if slot.process is not None]
        for process in processes:
            process.signal(signal.SIGTERM)
        deadline = time.monotonic() + self.grace + KILL_AFTER_GRACE_SECONDS
        for process in processes:
            if not process.wait(max(0.0, deadline - time.monotonic())):
                log.warning("worker %d (pid %d) did not stop in time; killing it", process.index, process.pid)
            process.close()


def _log_levels() -> dict[str, int]:
    """The levels of the loggers `lakeprune` sets (the root, `pruner`, `builder`)."""
    return {name: logging.getLogger(name).level for name in ("", "pruner", "builder")}


class _SupervisorCollector(Collector):
    """The workers configured, running and ready, and how often one was replaced."""

    def __init__(self, supervisor: Supervisor) -> None:
        self.supervisor = supervisor

    def collect(self) -> Iterator[Metric]:
        states = self.supervisor.states()
        workers = GaugeMetricFamily("lakeprune_workers", "Planning processes, by state", labels=["state"])
        for state in ("configured", "running", "ready"):
            workers.add_metric([state], getattr(states, state))
        yield workers
        yield CounterMetricFamily(
            "lakeprune_worker_restarts",
            "Workers that exited while serving and were replaced",
            states.restarts,
        )
