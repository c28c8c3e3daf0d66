"""The metrics of all workers as one sidecar's. At each scrape of the supervisor's metrics port,
every running worker's private loopback metrics port is read (in the Prometheus text format) and
the samples of all workers are summed by name and labels: counters and histograms (buckets, sums,
counts) add up to the sidecar's totals, gauges (cache bytes and entries, configured cache size,
open connections) to the sum over workers. Counters stay monotonic when a worker is replaced: the
last values read from a worker that exited are kept and added to the living ones' (what it counted
after that last read is lost). A worker that cannot be read in time counts with its last values.
The `_created` timestamps of prometheus_client are left out: they do not add up."""

from __future__ import annotations

import logging
import threading
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from prometheus_client.core import Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector

log = logging.getLogger(__name__)

SCRAPE_TIMEOUT_SECONDS = 2.0
CUMULATIVE = frozenset({"counter", "histogram", "summary"})
Labels = tuple[tuple[str, str], ...]


@dataclass
class Family:
    """One metric family: its samples by (sample name, labels)."""

    documentation: str
    kind: str
    samples: dict[tuple[str, Labels], float] = field(default_factory=dict)


Families = dict[str, Family]


def parse(text: str) -> Families:
    families: Families = {}
    for metric in text_string_to_metric_families(text):
        if metric.name.endswith("_created"):
            continue
        family = families.setdefault(metric.name, Family(metric.documentation, metric.type))
        for sample in metric.samples:
            if sample.name.endswith("_created"):
                continue
            key = (sample.name, tuple(sorted(sample.labels.items())))
            family.samples[key] = family.samples.get(key, 0.0) + sample.value
    return families


def add(total: Families, more: Families, kinds: frozenset[str] | None = None) -> None:
    """Add `more` into `total` (only families of `kinds`, if given)."""
    for name, family in more.items():
        if kinds is not None and family.kind not in kinds:
            continue
        into = total.setdefault(name, Family(family.documentation, family.kind))
        for key, value in family.samples.items():
            into.samples[key] = into.samples.get(key, 0.0) + value


class WorkerMetrics(Collector):
    """Sums the metrics of the workers `sources()` names as (pid, metrics port)."""

    def __init__(self, sources: Callable[[], Sequence[tuple[int, int]]]) -> None:
        self._sources = sources
        self._last: dict[int, Families] = {}
        self._retired: Families = {}
        self._lock = threading.Lock()

    def retire(self, pid: int) -> None:
        """A worker exited: keep its cumulative values (counters, histograms) in the totals."""
        with self._lock:
            last = self._last.pop(pid, None)
            if last is not None:
                add(self._retired, last, CUMULATIVE)

    def collect(self) -> Iterator[Metric]:
        for pid, port in self._sources():
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/metrics", timeout=SCRAPE_TIMEOUT_SECONDS
                ) as response:
                    families = parse(response.read().decode("utf-8"))
            except (OSError, ValueError) as exc:
                log.warning("metrics of worker pid %d not read (%s); its last values count", pid, exc)
                continue
            with self._lock:
                self._last[pid] = families
        with self._lock:
            total: Families = {}
            add(total, self._retired)
            for families in self._last.values():
                add(total, families)
        for name, family in sorted(total.items()):
            metric = Metric(name, family.documentation, family.kind)
            for (sample, labels), value in family.samples.items():
                metric.add_sample(sample, dict(labels), value)
            yield metric
