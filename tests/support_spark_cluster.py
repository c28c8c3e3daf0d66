"""A real Spark standalone cluster for the tests: one master and two workers (1 core, 1 GiB each),
started from the pip `pyspark` package's `spark-class` on loopback with free ports, its daemons'
web UIs included (`SPARK_LOCAL_IP`) and its REST submission server off. `SparkCluster.start` waits,
bounded, until every worker is registered with the master (the master's JSON); `stop` stops the
workers, then the master, by process id (SIGTERM, a bounded wait, SIGKILL), and the kernel kills
them should the test process die first. `submit` runs `spark-submit` against it as a user would
(client mode, the application's UI off, an event log per submission) and tells which executors ran
the submission's tasks, from that event log. One cluster serves a whole test session (the
`spark_cluster` fixture in `tests/conftest.py`)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyspark

from builder.session import DATAFRAME_DEBUGGING
from tests.support_jvm import SHORT_LIVED_JVM_OPTIONS
from tests.support_servers import LoopbackServer, die_with_parent, free_port, start_server, wait_ready

WORKER_COUNT = 2
WORKER_MEMORY = "1g"
EXECUTOR_MEMORY = "768m"  # below the worker's 1 GiB, so each worker runs one executor
SUBMIT_TIMEOUT_S = 300.0
SPARK_HOME = str(Path(pyspark.__file__).parent)
# Each submission waits for an executor on every worker before it schedules tasks, so that the
# work is spread over both (not run by whichever executor registered first).
SUBMIT_CONF = {
    "spark.ui.enabled": "false",
    "spark.executor.memory": EXECUTOR_MEMORY,
    "spark.driver.memory": "1g",
    "spark.sql.shuffle.partitions": "4",  # Spark's 200 would make thousands of tiny tasks on two cores
    "spark.scheduler.minRegisteredResourcesRatio": "1.0",
    "spark.scheduler.maxRegisteredResourcesWaitingTime": "60s",
    "spark.executor.extraJavaOptions": SHORT_LIVED_JVM_OPTIONS,
    DATAFRAME_DEBUGGING: "false",  # as an embedded session (builder.session): no call-site round trips
    "spark.eventLog.enabled": "true",
    "spark.eventLog.compress": "false",
    "spark.eventLog.rolling.enabled": "false",  # one plain JSON-lines file per application
}


def _daemon_environment() -> dict[str, str]:
    """The environment of every Spark process started here: pyspark's Spark, everything bound to
    loopback, Python workers on this interpreter."""
    env = dict(os.environ)
    env.update(
        SPARK_HOME=SPARK_HOME,
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_DAEMON_MEMORY="256m",
        SPARK_DAEMON_JAVA_OPTS=SHORT_LIVED_JVM_OPTIONS,
        SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
    )
    env.pop("SPARK_CONF_DIR", None)
    return env


@dataclass
class Submission:
    """One `spark-submit` run: its exit status, output and duration, and the executors (by id,
    mapped to the web UI port of the worker that ran them) of its tasks, from the application's
    event log."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    task_executors: list[str]
    executor_workers: dict[str, int]
    seconds: float

    @property
    def workers_that_ran_tasks(self) -> set[int]:
        return {self.executor_workers[e] for e in self.task_executors if e in self.executor_workers}


@dataclass
class SparkCluster:
    """A running standalone master and its workers."""

    master: LoopbackServer
    master_port: int
    web_port: int
    workdir: Path
    workers: list[LoopbackServer] = field(default_factory=list)
    worker_web_ports: list[int] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.master_port}"

    @classmethod
    def start(cls, workdir: Path, worker_count: int = WORKER_COUNT) -> SparkCluster:
        master_port, web_port = free_port("Spark master"), free_port("Spark master UI")
        log_path = workdir / "master.log"
        args = [
            f"{SPARK_HOME}/bin/spark-class",
            "org.apache.spark.deploy.master.Master",
            *("--host", "127.0.0.1", "--port", str(master_port), "--webui-port", str(web_port)),
        ]
        process = start_server(args, log_path, _daemon_environment())
        cluster = cls(LoopbackServer(process, log_path), master_port, web_port, workdir)
        wait_ready(process, log_path, cluster.state, f"Spark master at {cluster.url}")
        try:
            for number in range(worker_count):
                cluster._start_worker(number)
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def _start_worker(self, number: int) -> None:
        web_port = free_port(f"Spark worker {number} UI")
        work_dir = self.workdir / f"worker-{number}"
        work_dir.mkdir()
        log_path = self.workdir / f"worker-{number}.log"
        args = [
            f"{SPARK_HOME}/bin/spark-class",
            "org.apache.spark.deploy.worker.Worker",
            *("--host", "127.0.0.1", "--cores", "1", "--memory", WORKER_MEMORY),
            *("--webui-port", str(web_port), "--work-dir", str(work_dir), self.url),
        ]
        process = start_server(args, log_path, _daemon_environment())
        self.workers.append(LoopbackServer(process, log_path))
        self.worker_web_ports.append(web_port)
        wait_ready(process, log_path, lambda: self._require_registered(web_port), f"Spark worker {number}")

    def state(self) -> dict[str, object]:
        """The master's JSON (workers, active and completed applications). While the master's web
        UI starts, `/json/` may answer with the HTML page: that raises `OSError` (not ready yet)."""
        url = f"http://127.0.0.1:{self.web_port}/json/"
        with urllib.request.urlopen(url, timeout=5) as response:
            body = response.read()
        try:
            state: dict[str, object] = json.loads(body)
        except ValueError:
            raise OSError(f"the master at {url} answered {body[:40]!r}, not JSON") from None
        return state

    def _require_registered(self, worker_web_port: int) -> None:
        """Raise `OSError` (not ready yet) unless the worker with that web UI port is registered and alive."""
        workers = self.state().get("workers")
        assert isinstance(workers, list)
        address = f"http://127.0.0.1:{worker_web_port}"
        if not any(w.get("webuiaddress") == address and w.get("state") == "ALIVE" for w in workers):
            raise OSError(f"worker {address} not registered yet")

    def submit(
        self, application: Sequence[str], env: Mapping[str, str], *, jars: Sequence[str] = ()
    ) -> Submission:
        """`spark_submit` to this cluster."""
        return spark_submit(self.url, application, env, self.workdir, jars=jars)

    def stop(self) -> None:
        """Workers first, then the master; each SIGTERM, a bounded wait, then SIGKILL."""
        for worker in self.workers:
            worker.stop()
        self.master.stop()

    close = stop  # for contextlib.closing


def spark_submit(
    master: str,
    application: Sequence[str],
    env: Mapping[str, str],
    workdir: Path,
    *,
    jars: Sequence[str] = (),
) -> Submission:
    """`spark-submit --master MASTER [--jars ...] APPLICATION...` in client mode, with `env` added
    to the environment (the AWS variables of the job) and the application's event log under
    `workdir`; a bounded run."""
    event_dir = workdir / "events" / str(time.monotonic_ns())
    event_dir.mkdir(parents=True)
    conf = {**SUBMIT_CONF, "spark.eventLog.dir": event_dir.as_uri()}
    args = [f"{SPARK_HOME}/bin/spark-submit", "--master", master]
    if jars:
        args += ["--jars", ",".join(jars)]
    for key, value in conf.items():
        args += ["--conf", f"{key}={value}"]
    args += list(application)
    started = time.monotonic()
    returncode, stdout, stderr = _run_bounded(args, {**_daemon_environment(), **env})
    seconds = time.monotonic() - started
    task_executors, executor_workers = _executors_from_event_logs(event_dir)
    return Submission(args, returncode, stdout, stderr, task_executors, executor_workers, seconds)


def _run_bounded(args: list[str], env: Mapping[str, str]) -> tuple[int, str, str]:
    """Run `args` in a process group of its own; on timeout the whole group (spark-submit's JVM
    and the Python driver it started) is killed. spark-submit dies with the thread that started it
    should that die first."""
    process = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=dict(env),
        start_new_session=True,
        preexec_fn=die_with_parent,  # noqa: PLW1509 (one C call, libc loaded before the fork)
    )
    try:
        stdout, stderr = process.communicate(timeout=SUBMIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
    return process.returncode, stdout.decode(errors="replace"), stderr.decode(errors="replace")


def _executors_from_event_logs(event_dir: Path) -> tuple[list[str], dict[str, int]]:
    """The executor id of every finished task, and each executor's worker (its web UI port, read
    from the executor's log URL), over the event logs in `event_dir`."""
    task_executors: list[str] = []
    executor_workers: dict[str, int] = {}
    for log in sorted(event_dir.iterdir()):
        for line in log.read_text().splitlines():
            event = json.loads(line)
            kind = event.get("Event")
            if kind == "SparkListenerTaskEnd":
                task_executors.append(event["Task Info"]["Executor ID"])
            elif kind == "SparkListenerExecutorAdded":
                log_url = event["Executor Info"]["Log Urls"].get("stdout")
                if log_url is None:  # the driver, in local mode: no worker
                    continue
                port = int(log_url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
                executor_workers[event["Executor ID"]] = port
    return task_executors, executor_workers
