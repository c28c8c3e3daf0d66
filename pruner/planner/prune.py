"""The one way from a predicate to splits. Every caller — the CLI, the Python API, the gRPC service,
the Thrift connector service — calls `prune(table, predicate, snapshot=..., limits=...)`, or
`prune_stream` with the same arguments to read the same plan's splits a batch at a time as they are
decided (gRPC's `PruneStream`); the Python client binds its SQL with the same `bind_predicate`
before sending the TupleDomain.

Binding turns the predicate into a TupleDomain over the table's columns and the hidden virtual
columns of its functional indexes (SQL text is translated, with every widening noted; a TupleDomain
must name known columns) and, for SQL text, a text condition for the text indexes
(`pruner.predicate.text`; a TupleDomain has none), then applies the limits every path shares,
once: a column's IN list (or range set) longer than `limits.max_discrete_values` is widened to its
span (noted). Decoding a request refuses only what is malformed; a client translates SQL without
the limits (`translate_predicate`) and the sidecar binds it within its own. The notes — the
translators', the caller's own (e.g. the Thrift constraint's dropped domains) and the limits' —
travel in the result's `widened`, beside the planner's explain record."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pruner.bounded import echo
from pruner.errors import InvalidInputError
from pruner.planner.limits import DEFAULT_LIMITS, PruneLimits
from pruner.planner.planner import PlannedPrune, Planner
from pruner.planner.result import PruneResult
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.sql import text_condition, translate
from pruner.predicate.text import NO_TEXT, TextPredicate
from pruner.predicate.tuple_domain import TupleDomain
from pruner.storage_requests import counting
from pruner.table.table import LakeTable
from pruner.types import TableSchema


@dataclass(frozen=True)
class BoundPredicate:
    """A predicate as the planner takes it — its TupleDomain and its text predicate (what it
    requires of string columns' text, for the text indexes) — and where binding widened it. Also
    what an engine sends over gRPC: a TupleDomain and a text predicate (translated, not bound)."""

    domain: TupleDomain
    widened: tuple[str, ...] = ()
    text: TextPredicate = NO_TEXT


Predicate = str | TupleDomain | BoundPredicate


def prune(
    table: LakeTable,
    predicate: Predicate,
    *,
    snapshot: str | None = None,
    limits: PruneLimits = DEFAULT_LIMITS,
    widened: Sequence[str] = (),
) -> PruneResult:
    """The splits of `table` as of `snapshot` (default: the latest) that may hold rows matching
    `predicate` (SQL text or a TupleDomain): `prune_stream`'s plan, collected. `widened`: notes on
    widenings the caller already made (they are reported with the result's own). The result counts
    the storage requests the prune made (in this thread only: prunes running concurrently count
    their own)."""
    return prune_stream(table, predicate, snapshot=snapshot, limits=limits, widened=widened).collect()


def prune_stream(
    table: LakeTable,
    predicate: Predicate,
    *,
    snapshot: str | None = None,
    limits: PruneLimits = DEFAULT_LIMITS,
    widened: Sequence[str] = (),
) -> PlannedPrune:
    """`prune`'s plan with its lookups done and no file decided yet: its `batches` yield the
    splits as they are decided, its `result` (after the last batch) is what `prune` returns. The
    storage requests counted are those of binding, the snapshot and the lookups (made in this
    thread); deciding files reads nothing more."""
    bound = bind_predicate(predicate, table.query_schema, table.indexed_calls, limits, widened)
    with counting() as requests:
        planned = Planner(table.snapshot(snapshot), limits).plan(bound.domain, bound.widened, bound.text)
    planned.storage = requests.value()
    return planned


def bind_predicate(
    predicate: Predicate,
    schema: TableSchema,
    indexed_calls: Mapping[str, str],
    limits: PruneLimits = DEFAULT_LIMITS,
    widened: Sequence[str] = (),
) -> BoundPredicate:
    """`predicate` as a TupleDomain over `schema` (a table's columns and virtual columns; SQL calls
    in `indexed_calls` read as the virtual column of their functional index), within `limits`: the
    one place a size limit applies, always by widening, always noted."""
    translated = translate_predicate(predicate, schema, indexed_calls, widened)
    domain, capped = _cap_values(translated.domain, limits.max_discrete_values)
    return BoundPredicate(domain, (*translated.widened, *capped), translated.text)


def translate_predicate(
    predicate: Predicate,
    schema: TableSchema,
    indexed_calls: Mapping[str, str],
    widened: Sequence[str] = (),
) -> BoundPredicate:
    """`predicate` as a TupleDomain and a text predicate over `schema`, without the limits: what a
    client sends, for the sidecar to bind within its own limits. A TupleDomain has no text predicate
    (NO_TEXT); a BoundPredicate (an engine's TupleDomain and text predicate) is checked. The text
    translation's notes stay with the text predicate: the text index step reports them, on a table
    with a text index only."""
    notes = list(widened)
    text = NO_TEXT
    if isinstance(predicate, str):
        translation = translate(predicate, schema, indexed_calls)
        domain = translation.domain
        notes.extend(translation.widened)
        text = text_condition(predicate, schema)
    else:
        if isinstance(predicate, BoundPredicate):
            domain, text = predicate.domain, predicate.text
            notes.extend(predicate.widened)
        else:
            domain = predicate
        unknown = [c for c in domain.columns if not schema.has(c)]
        if unknown:
            raise InvalidInputError(f"unknown column {echo(unknown[0])} (columns: {', '.join(schema.names)})")
    return BoundPredicate(domain, tuple(notes), text)


def _cap_values(domain: TupleDomain, limit: int) -> tuple[TupleDomain, list[str]]:
    """Each column's domain of more than `limit` values (an IN list) or ranges widened to their
    span: the lookups and evaluations after it cost in proportion to that number."""
    if domain.domains is None:
        return domain, []
    capped: dict[str, Domain] = {}
    notes = []
    for column, column_domain in domain.domains.items():
        values = column_domain.values
        span = values.span()
        if values.range_count() > limit and span is not None:
            capped[column] = Domain(
                SortedRangeSet.of_ranges(span),
                column_domain.is_null_allowed(),
                column_domain.is_nan_allowed(),
            )
            what = "values" if values.is_discrete() else "ranges"
            notes.append(
                f"{column}: {values.range_count():,} {what} exceed limits.max_discrete_values ({limit:,}); "
                f"pruned by their span {span} instead"
            )
        else:
            capped[column] = column_domain
    return (TupleDomain.with_domains(capped), notes) if notes else (domain, [])
