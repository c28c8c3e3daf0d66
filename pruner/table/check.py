"""`lakeprune table check`: everything that can be verified of a table without trusting it, and
what can repair each finding. The timeline (holes, missing instants, no completed instant while
files exist: `pruner.table.integrity`; every completed entry parses), then, when the timeline is
sound, the latest snapshot: every data file the `files` index lists is present with the size it
records, and every index file the snapshot reads is present. Files of instants the timeline does
not hold are reported too (`clean` keeps them). Read only; the repair of a missing completion
marker is `builder.repair`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from pruner.errors import LakepruneError
from pruner.format.layout import META_DIR, TIMELINE_DIR, written_by
from pruner.format.manifest import IndexFileManifest
from pruner.format.timeline import State
from pruner.table.integrity import timeline_damage
from pruner.table.table import LakeTable

# How many missing files a finding lists by name before it counts the rest.
_NAMED = 5

RESTORE_TIMELINE = f"restore the missing files of {TIMELINE_DIR}/ from a backup or the storage's versioning"
REPAIR_MARKER = (
    "`lakeprune table check --repair` re-creates a missing completion marker when everything its "
    f"instant wrote is present and readable; otherwise {RESTORE_TIMELINE}"
)
RESTORE_FILES = "restore the files from a backup or the storage's versioning"
REBUILD_INDEX = (
    "restore the files, or drop and rebuild the index (`DROP INDEX`, then `CREATE INDEX`); until then "
    "prunes keep every file the index would have answered for"
)


@dataclass(frozen=True)
class Finding:
    """One thing found damaged, and what can repair it."""

    what: str
    repair: str


@dataclass(frozen=True)
class CheckReport:
    location: str
    snapshot: str | None
    findings: list[Finding] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)  # instants whose completion marker was re-created

    @property
    def intact(self) -> bool:
        return not self.findings

    def to_json(self) -> dict[str, object]:
        return {**asdict(self), "intact": self.intact}


def check(location: str) -> CheckReport:
    table = LakeTable.open(location, intact=False)
    timeline = table.timeline
    try:
        manifest = IndexFileManifest.of(timeline)
    except LakepruneError as exc:
        return CheckReport(table.storage.uri, None, [Finding(str(exc), RESTORE_TIMELINE)])
    findings = [
        Finding(what, REPAIR_MARKER if " is inflight below " in what else RESTORE_TIMELINE)
        for what in timeline_damage(table.storage, timeline, manifest)
    ]
    latest = timeline.latest_completed()
    snapshot = latest.timestamp if latest is not None else None
    if findings or snapshot is None:
        return CheckReport(table.storage.uri, snapshot, findings)
    findings.extend(_snapshot_findings(table))
    findings.extend(_stray_files(table))
    return CheckReport(table.storage.uri, snapshot, findings)


def _snapshot_findings(table: LakeTable) -> list[Finding]:
    snapshot = table.snapshot()
    try:
        files = snapshot.files()
    except LakepruneError as exc:
        return [Finding(f"the files index cannot be read: {exc}", RESTORE_FILES)]
    present = {e.rel: e.size for e in table.storage.list_files("", recursive=True)}
    findings = []
    missing = [f.path for f in files if f.path not in present]
    if missing:
        findings.append(
            Finding(f"data file(s) the files index lists are missing: {_named(missing)}", RESTORE_FILES)
        )
    resized = [
        f"{f.path} ({present[f.path]} bytes, {f.size} recorded)"
        for f in files
        if present.get(f.path, f.size) != f.size
    ]
    if resized:
        findings.append(
            Finding(f"data file(s) differ in size from the files index: {_named(resized)}", RESTORE_FILES)
        )
    for spec in table.index_partition_specs():
        gone = [rel for rel in snapshot.index_partition(spec).file_paths() if rel not in present]
        if gone:
            repair = RESTORE_FILES if spec in (table.files_spec, table.record_index_spec) else REBUILD_INDEX
            findings.append(Finding(f"index partition {spec.name} lacks file(s): {_named(gone)}", repair))
    return findings


def _stray_files(table: LakeTable) -> list[Finding]:
    """Files named by an instant the timeline does not hold at all: a rolled-back instant leaves
    none, so these may be committed rows of an instant whose timeline files were lost."""
    held = {i.timestamp for i in table.timeline.instants}
    strays = [
        e.rel
        for e in table.storage.list_files("", recursive=True)
        if (e.rel.startswith(f"{META_DIR}/metadata/") or not e.rel.startswith(f"{META_DIR}/"))
        and written_by(e.rel.rpartition("/")[2]) not in (None, *held)
    ]
    if not strays:
        return []
    return [
        Finding(
            f"file(s) of instants the timeline does not hold (clean keeps them): {_named(strays)}",
            f"{RESTORE_TIMELINE} if they are committed data; otherwise delete them by hand",
        )
    ]


def _named(items: list[str]) -> str:
    shown = ", ".join(sorted(items)[:_NAMED])
    return shown + (f" and {len(items) - _NAMED} more" if len(items) > _NAMED else "")


def inflight_holes(table: LakeTable) -> list[str]:
    """Instants below a completed one that went inflight (so their inflight entry says what they
    wrote): the ones whose completion marker a repair may re-create."""
    return [i.timestamp for i in table.timeline.holes() if i.state == State.INFLIGHT]
