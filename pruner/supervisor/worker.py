"""One worker of `lakeprune serve --workers N`, run by the supervisor as
`python -m pruner.supervisor.worker` in a fresh interpreter (gRPC does not survive a fork, so
workers are never forked from a process that runs it). It first asks the kernel to kill it when the
supervisor dies (PR_SET_PDEATHSIG, even if the supervisor is killed with SIGKILL), reads its order
from stdin (`orders`), starts a `Sidecar` on the shared ports (SO_REUSEPORT; gRPC also on its own
port when the order gives one) with its metrics on a private loopback port, reports `started` and
then `ready` on stdout, and serves until SIGTERM, SIGINT or the end of its stdin (the supervisor is
gone), then stops gracefully like a single sidecar. A start that fails is one `error:` line on
stderr and exit status 2."""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import signal
import sys
import threading
from types import FrameType

from pruner.errors import LakepruneError
from pruner.serving import logs
from pruner.sidecar import Sidecar
from pruner.supervisor.orders import READY, STARTED, read_order, report_line

LOOPBACK = "127.0.0.1"
_PR_SET_PDEATHSIG = 1  # linux/prctl.h

log = logging.getLogger(__name__)


def die_with_supervisor(supervisor_pid: int) -> None:
    """Have the kernel SIGKILL this process when its parent dies (Linux); exit at once if the
    parent is already gone (it died before the request took effect)."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != supervisor_pid:
        os._exit(1)


def watch_stdin(fd: int, stop: threading.Event) -> None:
    """Set `stop` when the supervisor's end of the pipe closes (read from the file descriptor,
    not the buffered stdin, whose lock the thread would hold at interpreter shutdown)."""
    while os.read(fd, 4096):
        pass
    stop.set()


def main() -> int:
    order = read_order(sys.stdin.buffer)
    die_with_supervisor(order.supervisor_pid)
    logs.install(order.log_format, worker=order.index)
    for name, level in order.log_levels.items():
        logging.getLogger(name).setLevel(level)
    stop = threading.Event()

    def on_signal(number: int, _frame: FrameType | None) -> None:
        log.info("received %s; shutting down", signal.Signals(number).name)
        stop.set()

    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, on_signal)
    threading.Thread(
        target=watch_stdin, args=(sys.stdin.fileno(), stop), name="supervisor-pipe", daemon=True
    ).start()
    sidecar = Sidecar(
        order.config, reuse_port=True, metrics_host=LOOPBACK, own_grpc_port=order.own_grpc_port, tune_gc=True
    )
    try:
        sidecar.start()
    except LakepruneError as exc:
        print(f"error: worker {order.index}: {exc}", file=sys.stderr, flush=True)
        return 2
    print(report_line(STARTED, pid=os.getpid(), metrics_port=sidecar.metrics_port), flush=True)
    reported_ready = False
    while not stop.wait(0.2):
        if not reported_ready and sidecar.ready.is_set():
            print(report_line(READY), flush=True)
            reported_ready = True
    sidecar.stop(order.grace_seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
