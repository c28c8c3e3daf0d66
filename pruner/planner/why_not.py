"""The explain's report per index ("why not"): for every index of the table — the built-in record
index and each defined one — how many files it pruned, or why it pruned none, derived after the
prune from what the plan already recorded and never deciding anything anew: the steps' outcomes
(`StageOutcome`: the explain record of the step that reads the index, its fallback, what it said of
each of its indexes and, in steps that read several, the files each ruled out first), the index
definitions, and the bound predicate (`Asked`: its domain, its text condition and the notes of
binding). The reasons, in the order they are looked for: the index is still building; it cannot be
used; the predicate does not constrain its column(s) — for an index over an expression, the notes of
binding say which computed values over the same columns were left out ("the predicate has hour(ts);
this index holds day(ts)"); then the step's own words about it (the cost guard's skip, a lookup
limit, a LIKE fragment too short for the text index's n-grams, a stale secondary index ...), its
fallback, and last that it ran and every file it was given may hold a match. The report is values
only: it never changes which files a prune keeps."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pruner.errors import IndexUnusableError
from pruner.index.definitions import IndexDefinition, IndexState, IndexType
from pruner.index.functional import VirtualColumn, virtual_domain
from pruner.index.kinds.text import subject_of
from pruner.planner.result import ExplainStep, IndexReport
from pruner.planner.steps.bloom_filters import BloomFilters
from pruner.planner.steps.functional_index import FunctionalIndex
from pruner.planner.steps.record_index import RecordIndex
from pruner.planner.steps.secondary_index import SecondaryIndex
from pruner.planner.steps.stats import ColumnStats, PartitionStats
from pruner.planner.steps.text_index import TextIndex
from pruner.predicate.text import TextPredicate, leaves
from pruner.predicate.tuple_domain import TupleDomain
from pruner.table.table import LakeTable

RECORD_INDEX = "record_index"  # the built-in index's name and kind

# The step that reads each index type, and whether it reads several indexes of it (then what it
# says and prunes is told apart by index name).
_STEP_OF: Mapping[IndexType, str] = {
    IndexType.PARTITION_STATS: PartitionStats.name,
    IndexType.SECONDARY_INDEX: SecondaryIndex.name,
    IndexType.FUNCTIONAL: FunctionalIndex.name,
    IndexType.COLUMN_STATS: ColumnStats.name,
    IndexType.BLOOM_FILTERS: BloomFilters.name,
    IndexType.TEXT: TextIndex.name,
}
_SEVERAL = frozenset({IndexType.SECONDARY_INDEX, IndexType.FUNCTIONAL, IndexType.TEXT})

# The notes of binding that name a computed value no index holds: the SQL translator's ("function
# hour(ts) not indexed: hour(ts) = 5 ignored") and the Trino filter reader's ("Trino filter not
# read: hour(ts) = 5 (no index on HOUR(ts))").
_LEFT_OUT = (
    re.compile(r"^(?:function|expression) (?P<value>.+?) not indexed: "),
    re.compile(r"^Trino filter not read: .*\(no index on (?P<value>.+)\)$"),
)

NO_ROW = "the predicate matches no row: every file was pruned before any index was read"


@dataclass(frozen=True)
class StageOutcome:
    """What one planner step did, as the report reads it: its explain record; its fallback as a
    whole (None: none, or only some files kept unchecked, which `explain.fallback` says); whether it
    ran (returned a verdict); what it said of each of its indexes, by name; and, in a step that
    reads several indexes, the files each of them ruled out first."""

    explain: ExplainStep
    fallback: str | None
    ran: bool
    by_index: Mapping[str, str]
    removed: Mapping[str, int]


@dataclass(frozen=True)
class Asked:
    """What the prune was asked, as bound: the domain, the text condition and binding's notes."""

    domain: TupleDomain
    text: TextPredicate
    widened: tuple[str, ...]


def report(table: LakeTable, asked: Asked, stages: Sequence[StageOutcome] | None) -> tuple[IndexReport, ...]:
    """One entry per index of `table`: the record index (when the table has a record key), then the
    defined indexes in the order the planner reads them (by name within a step). `stages`: the
    steps' outcomes, None when the predicate matched no row and no step ran."""
    by_step = {s.explain.step: s for s in stages or ()}
    order = list(_STEP_OF.values())
    definitions = sorted(table.definitions, key=lambda d: (order.index(_STEP_OF[d.index_type]), d.name))
    entries = []
    if table.config.record_key:
        entries.append(_record_index(table.config.record_key, asked, by_step.get(RecordIndex.name), stages))
    for definition in definitions:
        stage = by_step.get(_STEP_OF[definition.index_type])
        entries.append(_defined(table, definition, asked, stage, stages))
    return tuple(entries)


def _record_index(
    key: Sequence[str], asked: Asked, stage: StageOutcome | None, stages: Sequence[StageOutcome] | None
) -> IndexReport:
    if stages is None or stage is None:
        return IndexReport(RECORD_INDEX, RECORD_INDEX, 0, NO_ROW)
    pruned = stage.explain.files_in - stage.explain.files_out
    if pruned:
        return IndexReport(RECORD_INDEX, RECORD_INDEX, pruned)
    missing = [k for k in key if k not in asked.domain.columns]
    if missing:
        why = (
            f"the predicate does not constrain every record key column ({', '.join(missing)} not); "
            f"{_constrains(asked)}"
        )
        return IndexReport(RECORD_INDEX, RECORD_INDEX, 0, why)
    return IndexReport(RECORD_INDEX, RECORD_INDEX, 0, _alone(stage))


def _defined(
    table: LakeTable,
    definition: IndexDefinition,
    asked: Asked,
    stage: StageOutcome | None,
    stages: Sequence[StageOutcome] | None,
) -> IndexReport:
    name, kind = definition.name, str(definition.index_type)
    if stages is None or stage is None:
        return IndexReport(name, kind, 0, NO_ROW)
    several = definition.index_type in _SEVERAL
    pruned = stage.removed.get(name, 0) if several else stage.explain.files_in - stage.explain.files_out
    if pruned:
        return IndexReport(name, kind, pruned)
    if definition.state != IndexState.READY:
        return IndexReport(name, kind, 0, "still building: not read until its build has caught up")
    try:
        definition.check_usable()
        unconstrained = _unconstrained(table, definition, asked)
    except IndexUnusableError as exc:
        return IndexReport(name, kind, 0, f"cannot be used: {exc}")
    if unconstrained is not None:
        return IndexReport(name, kind, 0, unconstrained)
    if not several:
        return IndexReport(name, kind, 0, _alone(stage))
    # A whole-step fallback is every index's; some files kept unchecked, only the index it names.
    fallback = stage.fallback
    partial = stage.explain.fallback
    if fallback is None and partial is not None and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", partial):
        fallback = partial
    return IndexReport(name, kind, 0, _step_words(stage.by_index.get(name), name in stage.removed, fallback))


def _alone(stage: StageOutcome) -> str:
    """`_step_words` for the one index a step reads: all it says is of that index."""
    return _step_words(stage.explain.skipped, stage.ran, stage.explain.fallback)


def _step_words(said: str | None, ran: bool, fallback: str | None) -> str:
    """Why an index the predicate constrains pruned nothing: what its step said of it, its
    fallback, or that it ran and every file it was given may hold a match."""
    parts = [said] if said else []
    if fallback:
        parts.append(f"fell back, files kept: {fallback}")
    elif ran:
        parts.append("it ran and every file it was given may hold a match")
    return "; ".join(parts) or "it did not run"


def _unconstrained(table: LakeTable, definition: IndexDefinition, asked: Asked) -> str | None:
    """Why the predicate gives the index nothing to look up, or None when it does."""
    domain = asked.domain
    if definition.index_type == IndexType.TEXT:
        subject = subject_of(definition, table.config.schema)
        if any(leaf.subject == subject for leaf in leaves(asked.text.condition)):
            return None
        return f"the predicate has no LIKE or text search on {subject.sql()}"
    if definition.expression is not None:
        virtual = next((v for v in table.virtual_columns if v.name == definition.name), None)
        if virtual is None or virtual_domain(virtual, domain) is not None:
            return None
        return _expression_unconstrained(virtual, asked)
    columns = definition.columns
    if definition.index_type == IndexType.SECONDARY_INDEX:
        columns = columns[:1]  # a composite index answers its leading column(s)
        if columns[0] in domain.columns:
            return None
        what = f"its {'leading ' if len(definition.columns) > 1 else ''}column {columns[0]}"
        return f"the predicate does not constrain {what}; {_constrains(asked)}"
    if any(c in domain.columns for c in columns):
        return None
    listed = ", ".join(columns)
    return f"the predicate constrains none of its columns ({listed}); {_constrains(asked)}"


def _expression_unconstrained(virtual: VirtualColumn, asked: Asked) -> str:
    expression = virtual.definition.expression
    sources = sorted(virtual.expression.columns)
    others = [value for value in _left_out(asked.widened) if _reads_any(value, sources)]
    if others:
        return f"the predicate has {', '.join(others)}; this index holds {expression}"
    constrained = [c for c in sources if c in asked.domain.columns]
    if constrained:
        return (
            f"the predicate constrains {', '.join(constrained)}, but not so that it maps onto "
            f"{expression} (= / IN on every column it reads, or a range where it is ordered)"
        )
    return (
        f"the predicate constrains neither {virtual.name} ({expression}) nor {', '.join(sources)}; "
        f"{_constrains(asked)}"
    )


def _left_out(widened: Sequence[str]) -> list[str]:
    """The computed values binding left out (no index holds them), as the notes name them."""
    found = []
    for note in widened:
        for pattern in _LEFT_OUT:
            match = pattern.search(note)
            if match:
                found.append(match["value"])
                break
    return list(dict.fromkeys(found))


def _reads_any(value: str, columns: Sequence[str]) -> bool:
    """Whether the text of a computed value names one of `columns` (as a whole word)."""
    return any(re.search(rf"(?<![\w.]){re.escape(c)}(?!\w)", value, re.IGNORECASE) for c in columns)


def _constrains(asked: Asked) -> str:
    columns = asked.domain.columns
    return f"it constrains {', '.join(columns)}" if columns else "it constrains no column"
