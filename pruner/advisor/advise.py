"""The index advisor: from a table's workload log (`pruner.advisor.workload`) and a sample of its
data files (`pruner.advisor.evidence`), which `CREATE INDEX` statements would save the most, and
which defined indexes never pruned a file. Each logged prune is a set of shapes (ANDed); an index
serves the shapes it can answer — equality on a column: secondary index, bloom filter or column
stats; a range or IS NULL: column stats; an expression: a functional index (value list for
equality, column stats for both); an infix LIKE or words: a text index — and keeps, for a served
shape, the fraction of files the evidence estimates (`keeps`). A prune then reads the fewest files
any served shape allows, never more than it read. Candidates are chosen greedily: the one whose
bytes saved over the logged prunes (files saved x the table's mean file size) exceed its cost by
the most, then the next given those chosen, while one pays. Its cost is its build (the bytes of its
source columns it reads in every live file) and its upkeep: every data commit in the logged prunes'
window (`Writes`) would have read those columns again in each file it added. Lookups by the record
key are the built-in record index's. Pure over its inputs except for reading the sample and the
window's commits; estimates, not measurements: the report shows the evidence of each."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pruner.advisor.evidence import DEFAULT_SAMPLE_FILES, Evidence, gather, sample
from pruner.advisor.shapes import Operation, Shape
from pruner.advisor.workload import WorkloadEntry
from pruner.errors import InvalidInputError
from pruner.format.instant import format_instant, parse_time
from pruner.index.defining import define
from pruner.index.definitions import DEFAULT_BLOOM_FPP, FunctionalKind, IndexDefinition, IndexType
from pruner.metadata.files_index import DataFile
from pruner.table.table import LakeTable

# Estimated bytes of index data per file and column of column stats (counts, bounds, an HLL sketch)
# and of a functional index's min / max row; bits per distinct value of a bloom filter at 1% fpp.
_STATS_BYTES_PER_FILE = 700
_FUNCTIONAL_STATS_BYTES_PER_FILE = 200
_BLOOM_BYTES_PER_VALUE = 10 / 8
_ENTRY_OVERHEAD_BYTES = 24  # a secondary index or value list entry beside its value
_MIN_TEXT_FRAGMENT = 3  # the text index's default trigrams: a shorter fragment requires nothing
_ONE_PER_TABLE = (IndexType.COLUMN_STATS, IndexType.BLOOM_FILTERS)


@dataclass(frozen=True, order=True)
class Candidate:
    """An index that could be created."""

    index_type: IndexType
    target: str  # a column or an expression's canonical text
    expression: bool = False
    functional_kind: FunctionalKind | None = None

    def describe(self) -> str:
        if self.index_type is IndexType.FUNCTIONAL and self.functional_kind is not None:
            return f"functional index ({self.functional_kind.value}) on {self.target}"
        return f"{self.index_type.value} on {self.target}"

    def serves(self, shape: Shape) -> bool:
        if shape.target != self.target or shape.expression != self.expression:
            return False
        if shape.operation is Operation.TEXT:
            return self.index_type is IndexType.TEXT and (
                shape.fragment >= _MIN_TEXT_FRAGMENT or shape.fragment == 0
            )
        if self.index_type is IndexType.TEXT:
            return False
        if shape.operation is Operation.EQUAL:
            return True
        return (
            self.index_type is IndexType.COLUMN_STATS or self.functional_kind is FunctionalKind.COLUMN_STATS
        )

    def keeps(self, shape: Shape, evidence: Evidence) -> float:
        """The estimated fraction of files a prune keeps by this index alone, for `shape`."""
        n = max(shape.values, 1)
        if shape.operation is Operation.TEXT:
            return evidence.value_spread
        if shape.operation is Operation.NULL:
            return evidence.null_files
        stats_like = (
            self.index_type is IndexType.COLUMN_STATS or self.functional_kind is FunctionalKind.COLUMN_STATS
        )
        if shape.operation is Operation.RANGE:
            return evidence.range_overlap  # a narrow range's (the widths are not logged): a lower bound
        if stats_like:
            return 1 - (1 - evidence.range_overlap) ** n
        kept = 1 - (1 - evidence.value_spread) ** n
        if self.index_type is IndexType.BLOOM_FILTERS:
            kept = min(1.0, kept + n * DEFAULT_BLOOM_FPP)
        return kept

    def size_bytes(self, evidence: Evidence, files: int, key_bytes: float) -> float:
        """The estimated size of the index's data."""
        per_file_values = evidence.distinct_per_file * files
        match self.index_type:
            case IndexType.COLUMN_STATS:
                return float(files * _STATS_BYTES_PER_FILE)
            case IndexType.BLOOM_FILTERS | IndexType.TEXT:
                return per_file_values * _BLOOM_BYTES_PER_VALUE
            case IndexType.SECONDARY_INDEX:
                return (
                    evidence.rows_per_file
                    * files
                    * (evidence.value_bytes + key_bytes + _ENTRY_OVERHEAD_BYTES)
                )
            case _:
                if self.functional_kind is FunctionalKind.VALUE_LIST:
                    return per_file_values * (evidence.value_bytes + _ENTRY_OVERHEAD_BYTES)
                return float(files * _FUNCTIONAL_STATS_BYTES_PER_FILE)


@dataclass(frozen=True)
class Recommendation:
    """One or more candidates of a kind, as the statements that create them."""

    rank: int
    index_type: str
    targets: tuple[str, ...]
    statements: tuple[str, ...]
    prunes_served: int  # logged prunes it answers a shape of
    files_now: float  # files those prunes read, on average
    files_with: float  # files they would read with it (estimated), on average
    bytes_saved: float  # over the logged prunes
    build_bytes: float  # the bytes its build reads
    upkeep_bytes: float  # the bytes the window's writes would have read to maintain it
    index_bytes: float
    evidence: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "index_type": self.index_type,
            "targets": list(self.targets),
            "statements": list(self.statements),
            "prunes_served": self.prunes_served,
            "files_now": round(self.files_now, 2),
            "files_with": round(self.files_with, 2),
            "bytes_saved": round(self.bytes_saved),
            "build_bytes": round(self.build_bytes),
            "upkeep_bytes": round(self.upkeep_bytes),
            "index_bytes": round(self.index_bytes),
            "evidence": list(self.evidence),
        }


@dataclass(frozen=True)
class UnusedIndex:
    """A defined index that pruned no file in any logged prune: a candidate to drop."""

    name: str
    index_type: str
    prunes: int  # logged prunes of the table since it existed (it appears in their report)
    reasons: tuple[tuple[str, int], ...]  # why it pruned nothing, most frequent first, with counts
    statement: str

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "index_type": self.index_type,
            "prunes": self.prunes,
            "reasons": [{"reason": reason, "prunes": count} for reason, count in self.reasons],
            "statement": self.statement,
        }


@dataclass(frozen=True)
class Advice:
    table: str
    prunes: int  # logged prunes read
    files: int  # live data files now
    recommendations: tuple[Recommendation, ...]
    unused: tuple[UnusedIndex, ...]
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "prunes": self.prunes,
            "files": self.files,
            "recommendations": [r.to_json() for r in self.recommendations],
            "unused": [u.to_json() for u in self.unused],
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Writes:
    """The data commits from the first logged prune to the last, and the data files they added:
    what an index existing through the window would have been maintained over."""

    commits: int
    files_added: int

    @classmethod
    def in_window(cls, table: LakeTable, entries: Sequence[WorkloadEntry]) -> Writes:
        moments = [parse_time(e.at) for e in entries]
        first, last = format_instant(min(moments)), format_instant(max(moments))
        timeline = table.timeline
        contents = [timeline.read(c) for c in timeline.commits() if first <= c.timestamp <= last]
        written = [c["added"] for c in contents if "added" in c]  # an index build adds no data file
        return cls(len(written), sum(len(added) for added in written))


@dataclass
class _Workload:
    """The logged prunes as fractions of their files, the writes among them, and what the advisor
    chose so far."""

    kept: list[float]  # per prune: the fraction of its files it reads now (or with the chosen indexes)
    shapes: list[tuple[Shape, ...]]
    writes: Writes
    evidence: dict[tuple[str, bool, bool], Evidence] = field(default_factory=dict)


def advise(
    table: LakeTable, entries: Sequence[WorkloadEntry], sample_files: int = DEFAULT_SAMPLE_FILES
) -> Advice:
    """The advice for `table` from its logged prunes `entries`."""
    snapshot = table.snapshot()
    files = snapshot.files()
    notes: list[str] = []
    usable = [e for e in entries if e.files_total > 0]
    if not files or not usable:
        notes.append("no logged prune of a table with files: nothing to advise yet")
        return Advice(table.config.name, len(entries), len(files), (), _unused(table, usable), tuple(notes))
    mean_file_bytes = sum(f.size for f in files) / len(files)
    writes = Writes.in_window(table, usable)
    workload = _Workload([e.files_kept / e.files_total for e in usable], [e.shapes for e in usable], writes)
    if writes.commits:
        notes.append(
            f"{writes.commits} data commit(s) among the logged prunes added {writes.files_added} file(s): "
            "each index is charged for maintaining itself over them"
        )
    record_key = table.config.record_key
    key_lookups = sum(1 for e in usable if any(_by_record_key(s, record_key) for s in e.shapes))
    if key_lookups:
        notes.append(f"{key_lookups} prune(s) look up the record key: the built-in record index answers them")
    candidates = _candidates(table, usable)
    sampled = sample(files, sample_files)
    for candidate in candidates:
        _evidence(table, sampled, candidate, workload.evidence)
    chosen: list[_Choice] = []
    remaining = list(candidates)
    while remaining:
        scored = [_Choice(c, *_score(c, workload, len(files), mean_file_bytes)) for c in remaining]
        best = max(scored, key=lambda choice: (choice.pays(workload, len(files)), choice.candidate))
        if best.pays(workload, len(files)) <= 0:
            break
        chosen.append(best)
        _apply(best.candidate, workload)
        remaining = [c for c in remaining if c != best.candidate and not _same_slot(c, best.candidate)]
    secondary = any(c.candidate.index_type is IndexType.SECONDARY_INDEX for c in chosen)
    key_bytes = _key_bytes(table, sampled, workload) if secondary else 0.0
    recommendations = _recommendations(table, chosen, workload, len(files), key_bytes)
    return Advice(
        table.config.name, len(entries), len(files), recommendations, _unused(table, usable), tuple(notes)
    )


def _by_record_key(shape: Shape, record_key: Sequence[str]) -> bool:
    return (
        not shape.expression and shape.operation is Operation.EQUAL and tuple(record_key) == (shape.target,)
    )


def _candidates(table: LakeTable, entries: Iterable[WorkloadEntry]) -> list[Candidate]:
    """The indexes that could serve a logged shape, that the table does not have, and that
    `CREATE INDEX` would accept."""
    config = table.config
    shapes = {s.signature: s for e in entries for s in e.shapes if not _by_record_key(s, config.record_key)}
    found: list[Candidate] = []
    for target, operation, expression in sorted(shapes):
        for candidate in _kinds_for(target, operation, expression):
            if not _covered(candidate, table.definitions) and _definable(candidate, table):
                found.append(candidate)
    return sorted(set(found))


def _kinds_for(target: str, operation: Operation, expression: bool) -> list[Candidate]:
    if operation is Operation.TEXT:
        return [Candidate(IndexType.TEXT, target, expression)]
    if expression:
        kinds = [FunctionalKind.COLUMN_STATS]
        if operation is Operation.EQUAL:
            kinds.append(FunctionalKind.VALUE_LIST)
        return [Candidate(IndexType.FUNCTIONAL, target, True, kind) for kind in kinds]
    if operation is Operation.EQUAL:
        return [
            Candidate(IndexType.SECONDARY_INDEX, target),
            Candidate(IndexType.BLOOM_FILTERS, target),
            Candidate(IndexType.COLUMN_STATS, target),
        ]
    return [Candidate(IndexType.COLUMN_STATS, target)]


def _covered(candidate: Candidate, definitions: Iterable[IndexDefinition]) -> bool:
    """Whether an index of the table already answers what `candidate` would."""
    for d in definitions:
        if candidate.expression:
            if d.expression == candidate.target and d.index_type in (
                candidate.index_type,
                IndexType.SECONDARY_INDEX,
            ):
                return True
            continue
        if d.expression is not None:
            continue
        same = d.index_type is candidate.index_type and candidate.target in d.columns
        if same and (d.index_type is not IndexType.SECONDARY_INDEX or d.columns == (candidate.target,)):
            return True
    return False


def _definable(candidate: Candidate, table: LakeTable) -> bool:
    others = [
        d
        for d in table.definitions
        if d.index_type not in _ONE_PER_TABLE or d.index_type is not candidate.index_type
    ]
    try:
        _define(table, candidate, "lakeprune_advisor_probe", others)
    except InvalidInputError:
        return False
    return True


def _define(
    table: LakeTable, candidate: Candidate, name: str, existing: list[IndexDefinition]
) -> IndexDefinition:
    if candidate.index_type is IndexType.FUNCTIONAL:
        kind = candidate.functional_kind or FunctionalKind.COLUMN_STATS
        return define(table.config, existing, name, kind.value, [], {}, candidate.target)
    if candidate.expression:
        return define(table.config, existing, name, candidate.index_type.value, [], {}, candidate.target)
    return define(table.config, existing, name, candidate.index_type.value, [candidate.target], {})


def _evidence(
    table: LakeTable,
    sampled: list[DataFile],
    candidate: Candidate,
    known: dict[tuple[str, bool, bool], Evidence],
) -> Evidence:
    return _gathered(table, sampled, _evidence_key(candidate), known)


def _evidence_key(candidate: Candidate) -> tuple[str, bool, bool]:
    """What a candidate's evidence is about: its target, whether an expression, whether text."""
    return candidate.target, candidate.expression, candidate.index_type is IndexType.TEXT


def _gathered(
    table: LakeTable,
    sampled: list[DataFile],
    key: tuple[str, bool, bool],
    known: dict[tuple[str, bool, bool], Evidence],
) -> Evidence:
    """The evidence about `key` (target, expression, text), gathered once per advice."""
    if key not in known:
        known[key] = gather(table, sampled, *key)
    return known[key]


def _key_bytes(table: LakeTable, sampled: list[DataFile], workload: _Workload) -> float:
    """The mean bytes of a record key in the sample (what a secondary index stores per row beside
    the value), from the evidence of each record key column."""
    return sum(
        _gathered(table, sampled, (column, False, False), workload.evidence).value_bytes
        for column in table.config.record_key
    )


def _evidence_of(candidate: Candidate, workload: _Workload) -> Evidence:
    return workload.evidence[_evidence_key(candidate)]


def _with(candidate: Candidate, workload: _Workload, index: int) -> float | None:
    """What prune `index` would read with `candidate` (a fraction), None if it serves no shape."""
    evidence = _evidence_of(candidate, workload)
    served = [candidate.keeps(s, evidence) for s in workload.shapes[index] if candidate.serves(s)]
    if not served:
        return None
    return min(workload.kept[index], *served)


def _score(
    candidate: Candidate, workload: _Workload, files: int, mean_file_bytes: float
) -> tuple[float, int, float, float]:
    """Bytes saved over the logged prunes, prunes served, and their mean files now and with it."""
    saved = now = after = 0.0
    served = 0
    for index, kept in enumerate(workload.kept):
        with_index = _with(candidate, workload, index)
        if with_index is None:
            continue
        served += 1
        now += kept
        after += with_index
        saved += (kept - with_index) * files * mean_file_bytes
    if not served:
        return 0.0, 0, 0.0, 0.0
    return saved, served, now / served * files, after / served * files


@dataclass(frozen=True)
class _Choice:
    """A candidate scored against the workload as it stands."""

    candidate: Candidate
    saved: float  # bytes saved over the logged prunes
    served: int  # logged prunes it answers a shape of
    now: float  # their mean files now
    with_index: float  # and with it

    def build(self, workload: _Workload, files: int) -> float:
        return _evidence_of(self.candidate, workload).read_bytes_per_file * files

    def upkeep(self, workload: _Workload) -> float:
        return _evidence_of(self.candidate, workload).read_bytes_per_file * workload.writes.files_added

    def pays(self, workload: _Workload, files: int) -> float:
        """Bytes saved beyond the index's cost (negative: it does not pay)."""
        return self.saved - self.build(workload, files) - self.upkeep(workload)


def _apply(candidate: Candidate, workload: _Workload) -> None:
    for index in range(len(workload.kept)):
        with_index = _with(candidate, workload, index)
        if with_index is not None:
            workload.kept[index] = with_index


def _same_slot(candidate: Candidate, chosen: Candidate) -> bool:
    """Whether `candidate` answers what `chosen` now answers, by the same values (the two value-
    keyed kinds of a column, the two functional kinds of an expression)."""
    if candidate.target != chosen.target or candidate.expression != chosen.expression:
        return False
    value_keyed = {IndexType.SECONDARY_INDEX, IndexType.BLOOM_FILTERS}
    if candidate.index_type in value_keyed and chosen.index_type in value_keyed:
        return True
    return candidate.index_type is IndexType.FUNCTIONAL and chosen.index_type is IndexType.FUNCTIONAL


def _recommendations(
    table: LakeTable,
    chosen: Sequence[_Choice],
    workload: _Workload,
    files: int,
    key_bytes: float,
) -> tuple[Recommendation, ...]:
    """The chosen candidates as statements; the one-per-table kinds merged into one statement each
    (replacing the table's index of that kind, if any)."""
    out: list[Recommendation] = []
    taken = {d.name for d in table.definitions}
    merged: dict[IndexType, int] = {}
    for choice in chosen:
        candidate, saved, served = choice.candidate, choice.saved, choice.served
        build, upkeep = choice.build(workload, files), choice.upkeep(workload)
        evidence = _evidence_of(candidate, workload)
        now, with_index = choice.now, choice.with_index
        lines = _evidence_lines(candidate, evidence, served, now, with_index)
        size = candidate.size_bytes(evidence, files, key_bytes)
        if candidate.index_type in merged:
            first = out[merged[candidate.index_type]]
            targets = (*first.targets, candidate.target)
            out[merged[candidate.index_type]] = Recommendation(
                first.rank,
                first.index_type,
                targets,
                _one_per_table_statements(table, candidate.index_type, targets, taken),
                first.prunes_served + served,
                first.files_now,
                first.files_with,
                first.bytes_saved + saved,
                first.build_bytes + build,
                first.upkeep_bytes + upkeep,
                first.index_bytes + size,
                (*first.evidence, *lines),
            )
            continue
        if candidate.index_type in _ONE_PER_TABLE:
            merged[candidate.index_type] = len(out)
            statements = _one_per_table_statements(table, candidate.index_type, (candidate.target,), taken)
        else:
            name = _name(candidate, taken)
            taken.add(name)
            statements = (_create(table, candidate, name),)
        kind = candidate.index_type.value
        out.append(
            Recommendation(
                len(out) + 1,
                kind,
                (candidate.target,),
                statements,
                served,
                now,
                with_index,
                saved,
                build,
                upkeep,
                size,
                lines,
            )
        )
    return tuple(out)


def _evidence_lines(
    candidate: Candidate, evidence: Evidence, served: int, now: float, with_index: float
) -> tuple[str, ...]:
    sampled = f"{evidence.files_sampled} sampled file(s)"
    if candidate.index_type is IndexType.TEXT:
        what = f"a word of {candidate.target} is in {evidence.value_spread:.1%} of files ({sampled})"
    elif (
        candidate.index_type is IndexType.COLUMN_STATS
        or candidate.functional_kind is FunctionalKind.COLUMN_STATS
    ):
        what = (
            f"a value of {candidate.target} lies within {evidence.range_overlap:.1%} of files' "
            f"[min, max] ({sampled}; for a range, a narrow one's)"
        )
    else:
        what = (
            f"a value of {candidate.target} is in {evidence.value_spread:.1%} of files ({sampled}, "
            f"{evidence.distinct_per_file:,.0f} distinct per file)"
        )
    return (
        f"{candidate.describe()}: {served} logged prune(s) read {now:,.1f} files on average, "
        f"about {with_index:,.1f} with it; {what}",
    )


def _one_per_table_statements(
    table: LakeTable, index_type: IndexType, targets: Sequence[str], taken: set[str]
) -> tuple[str, ...]:
    existing = next((d for d in table.definitions if d.index_type is index_type), None)
    columns = list(dict.fromkeys([*(existing.columns if existing else ()), *targets]))
    name = (
        existing.name
        if existing
        else _unique("stats" if index_type is IndexType.COLUMN_STATS else "bloom", taken)
    )
    taken.add(name)
    create = f"CREATE INDEX {name} ON {table.config.name} USING {index_type.value} ({', '.join(columns)})"
    if existing is None:
        return (create,)
    return (f"DROP INDEX {existing.name} ON {table.config.name}", create)


def _create(table: LakeTable, candidate: Candidate, name: str) -> str:
    kind = candidate.functional_kind.value if candidate.functional_kind else candidate.index_type.value
    return f"CREATE INDEX {name} ON {table.config.name} USING {kind} ({candidate.target})"


_NON_NAME = re.compile(r"[^a-z0-9]+")


def _name(candidate: Candidate, taken: set[str]) -> str:
    prefix = {IndexType.SECONDARY_INDEX: "idx", IndexType.TEXT: "text", IndexType.FUNCTIONAL: "fx"}[
        candidate.index_type
    ]
    slug = _NON_NAME.sub("_", candidate.target.lower()).strip("_")[:40].rstrip("_")
    return _unique(f"{prefix}_{slug}" if slug else prefix, taken)


def _unique(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    number = 2
    while f"{name}_{number}" in taken:
        number += 1
    return f"{name}_{number}"


def _unused(table: LakeTable, entries: Sequence[WorkloadEntry]) -> tuple[UnusedIndex, ...]:
    """The defined indexes no logged prune was pruned by (none without logged prunes)."""
    if not entries:
        return ()
    pruned = {name for e in entries for name in e.pruned_by}
    reasons: dict[str, Counter[str]] = {}
    for entry in entries:
        for name, why in entry.not_pruned:
            reasons.setdefault(name, Counter())[why] += 1
    unused = []
    for d in sorted(table.definitions, key=lambda d: d.name):
        said = reasons.get(d.name, Counter())
        if d.name in pruned or not said:  # pruned, or created after every logged prune
            continue
        statement = f"DROP INDEX {d.name} ON {table.config.name}"
        unused.append(
            UnusedIndex(d.name, d.index_type.value, sum(said.values()), tuple(said.most_common(3)), statement)
        )
    return tuple(unused)


def statements(recommendations: Sequence[Recommendation], top: int) -> list[str]:
    """The statements of the first `top` recommendations, in order."""
    return [s for r in recommendations[:top] for s in r.statements]
