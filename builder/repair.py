"""`lakeprune table check --repair`: re-create the completion marker of an instant that went
inflight below a completed one (its marker was deleted), under the writer lock, only when
everything the instant wrote is present and consistent: every index file named with it in the
partitions its inflight entry lists reads whole with page checksums verified; a compaction has a
base file for every bucket it planned; the data files a commit's `files` logs add are present with
the sizes they record, and every data file named with the instant is one of them. The re-created
entry carries the requested and inflight content, the index files found (as a completed commit
records them) and `"repaired": true`; what a completed entry said besides (row counts) is not
known any more. Anything short of that changes nothing, and the check says why."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from builder.lock import table_lock
from pruner.format import timeline as tl
from pruner.format.layout import (
    META_DIR,
    METADATA_DIR,
    DataFileName,
    IndexFileName,
    data_file_path,
    written_by,
)
from pruner.format.timeline import Action, Instant, State
from pruner.metadata import files_index
from pruner.metadata.spec import OP_FIELD, OP_UPSERT
from pruner.storage import Storage
from pruner.table.table import LakeTable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RepairOutcome:
    instant: str
    repaired: bool
    reason: str  # what was verified, or why the marker was not re-created


def repair(location: str) -> list[RepairOutcome]:
    """Re-create the completion markers that can be; one outcome per instant below a completed one."""
    storage = LakeTable.open(location, intact=False).storage
    with table_lock(storage, "repair"):
        timeline = LakeTable.open(location, intact=False).timeline
        outcomes = []
        for instant in timeline.holes():
            problem = _unrepairable(storage, timeline, instant)
            if isinstance(problem, str):
                outcomes.append(RepairOutcome(instant.timestamp, False, problem))
                continue
            tl.complete(storage, instant, problem)
            log.info("re-created the completion marker of %s %s", instant.action, instant.timestamp)
            outcomes.append(
                RepairOutcome(instant.timestamp, True, "everything it wrote is present and readable")
            )
        return outcomes


def _unrepairable(storage: Storage, timeline: tl.Timeline, instant: Instant) -> str | dict[str, Any]:
    """Why the instant's marker cannot be re-created, or the content to re-create it with."""
    if instant.state != State.INFLIGHT:
        return "it never went inflight, so nothing says what it wrote"
    try:
        requested = timeline.read(instant, State.REQUESTED)
        inflight = timeline.read(instant, State.INFLIGHT)
    except Exception as exc:
        return f"its timeline entries cannot be read ({exc})"
    partitions = inflight.get("index_partitions")
    if not isinstance(partitions, list) or not all(isinstance(p, str) for p in partitions):
        return "its inflight entry does not list the index partitions it wrote"
    written: dict[str, list[IndexFileName]] = {}
    for partition in partitions:
        directory = f"{METADATA_DIR}/{partition}"
        names = [IndexFileName.parse(e.rel.rpartition("/")[2]) for e in storage.list_files(directory)]
        written[partition] = sorted(n for n in names if n is not None and n.instant == instant.timestamp)
        for name in written[partition]:
            try:
                _read_verified(storage, f"{directory}/{name}")
            except (OSError, pa.ArrowException) as exc:
                return f"its index file {directory}/{name} cannot be read ({exc})"
    content: dict[str, Any] = {**requested, **inflight, "repaired": True}
    if instant.action == Action.COMPACTION:
        planned = requested.get("buckets")
        if not isinstance(planned, dict):
            return "its requested entry does not say which buckets it compacted"
        for partition, buckets in planned.items():
            have = {n.bucket for n in written.get(str(partition), []) if n.kind == "base"}
            if not set(buckets) <= have:
                return (
                    f"index partition {partition} lacks base files of buckets {sorted(set(buckets) - have)}"
                )
        return content
    if instant.action == Action.COMMIT:
        problem = _files_log_mismatch(storage, instant.timestamp, written.get(files_index.NAME, []))
        if problem is not None:
            return problem
        content["index_files"] = sorted(
            f"{METADATA_DIR}/{partition}/{name}" for partition, names in written.items() for name in names
        )
    return content


def _files_log_mismatch(storage: Storage, timestamp: str, logs: list[IndexFileName]) -> str | None:
    """Why the instant's files-index logs and its data files disagree: a data file they add is
    missing or resized, or a data file named with the instant is not among those they add (a log
    may be lost; a retried task's second copy also shows so, and is then left to a hand repair)."""
    present = {e.rel: e.size for e in storage.list_files("", recursive=True)}
    added: set[str] = set()
    for name in logs:
        rows = _read_verified(storage, f"{METADATA_DIR}/{files_index.NAME}/{name}")
        for row in rows.filter(pc.equal(rows[OP_FIELD], OP_UPSERT)).to_pylist():
            parsed = DataFileName.parse(row["file_name"])
            path = data_file_path(row["partition"], parsed) if parsed else row["file_name"]
            if present.get(path) != row["size"]:
                return f"the data file {path} it added is missing or differs in size"
            added.add(path)
    unlisted = sorted(
        rel
        for rel in present
        if not rel.startswith(f"{META_DIR}/")
        and written_by(rel.rpartition("/")[2]) == timestamp
        and rel not in added
    )
    if unlisted:
        return f"its files-index logs do not list its data file {unlisted[0]} (a log may be missing)"
    return None


def _read_verified(storage: Storage, rel: str) -> pa.Table:
    with storage.open_input_file(rel) as source:
        return pq.ParquetFile(source, page_checksum_verification=True).read()
