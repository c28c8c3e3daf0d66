"""One worker process as the supervisor sees it: started as a fresh interpreter
(`python -m pruner.supervisor.worker`) in a process group of its own (a Ctrl-C in the terminal
reaches the supervisor only, which stops the workers itself), its order written to its stdin, its
stderr shared with the supervisor's (the log), its stdout read by a thread that records its reports
(`started` with its private metrics port, `ready`)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

from pruner.supervisor.orders import READY, STARTED, WorkerOrder, parse_report, send_order


class WorkerProcess:
    def __init__(self, order: WorkerOrder) -> None:
        self.index = order.index
        self.started = threading.Event()
        self.ready = threading.Event()
        self.metrics_port: int | None = None
        self.began = time.monotonic()
        self._process = subprocess.Popen(
            [sys.executable, "-m", "pruner.supervisor.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            process_group=0,
            close_fds=True,
        )
        assert self._process.stdin is not None
        with contextlib.suppress(OSError):  # it died at once: `returncode` tells
            send_order(self._process.stdin, order)
        self._reader = threading.Thread(
            target=self._read_reports, name=f"worker-{self.index}-reports", daemon=True
        )
        self._reader.start()

    @property
    def pid(self) -> int:
        return self._process.pid

    def returncode(self) -> int | None:
        """None while it runs, else its exit status (negative: the signal that ended it)."""
        return self._process.poll()

    def signal(self, number: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._process.pid, number)

    def wait(self, timeout: float) -> bool:
        """Whether it has exited within `timeout` seconds."""
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def close(self) -> None:
        """Kill it if it still runs, reap it and close the pipes."""
        if self.returncode() is None:
            self.signal(signal.SIGKILL)
            self._process.wait()
        for stream in (self._process.stdin, self._process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._reader.join(1.0)

    def _read_reports(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        with contextlib.suppress(OSError, ValueError):
            for line in stdout:
                report = parse_report(line.decode("utf-8", "replace"))
                if report.get("event") == STARTED:
                    port = report.get("metrics_port")
                    self.metrics_port = port if isinstance(port, int) else None
                    self.started.set()
                elif report.get("event") == READY:
                    self.ready.set()


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"status {returncode}"
