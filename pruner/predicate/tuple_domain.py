"""`TupleDomain`: a conjunction of per-column `Domain`s, the form in which a query's filter reaches
the pruning planner (after Trino's SPI `TupleDomain`). It has one canonical form, made on
construction: if any column's domain is none the whole tuple domain is NONE (no row matches), and
columns whose domain is all are dropped (they constrain nothing). So equality, `is_all` and
`is_none` are exact and trivial, and `TupleDomain.all()` equals a tuple domain whose only column is
unconstrained. `intersect` is exact; `column_wise_union` is a widening (a superset of the true union,
which is not a conjunction in general), the safe direction for pruning."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from pruner.predicate.domain import Domain
from pruner.predicate.values import Value

_Entries = tuple[tuple[str, Domain], ...]


@dataclass(frozen=True)
class TupleDomain:
    """AND of per-column domains, or NONE. Build it with `all`, `none` or `with_domains`; the
    constructor takes the private canonical entries (sorted by column, none of them all or none),
    or `None` for NONE, and rejects anything else."""

    _entries: _Entries | None

    def __post_init__(self) -> None:
        if self._entries is None:
            return
        names = [name for name, _ in self._entries]
        if names != sorted(set(names)):
            raise ValueError("tuple domain columns must be unique and sorted; use TupleDomain.with_domains")
        for name, domain in self._entries:
            if domain.is_all() or domain.is_none():
                raise ValueError(f"column {name!r} has an all or none domain; use TupleDomain.with_domains")

    # Factories -------------------------------------------------------------------------------

    @classmethod
    def all(cls) -> TupleDomain:
        return cls(())

    @classmethod
    def none(cls) -> TupleDomain:
        return cls(None)

    @classmethod
    def with_domains(cls, domains: Mapping[str, Domain]) -> TupleDomain:
        """The conjunction of the given column domains, in canonical form."""
        if any(d.is_none() for d in domains.values()):
            return cls.none()
        entries = ((name, d) for name, d in domains.items() if not d.is_all())
        return cls(tuple(sorted(entries, key=lambda entry: entry[0])))

    # Accessors -------------------------------------------------------------------------------

    @property
    def domains(self) -> Mapping[str, Domain] | None:
        """The constrained columns' domains (read-only), or `None` for NONE."""
        if self._entries is None:
            return None
        return MappingProxyType(dict(self._entries))

    @property
    def columns(self) -> tuple[str, ...]:
        """The constrained column names, sorted; empty for ALL and for NONE."""
        if self._entries is None:
            return ()
        return tuple(name for name, _ in self._entries)

    def domain(self, column: str) -> Domain:
        """The domain of `column`: all if unconstrained, none if the tuple domain is NONE."""
        if self._entries is None:
            return Domain.none()
        for name, domain in self._entries:
            if name == column:
                return domain
        return Domain.all()

    def is_all(self) -> bool:
        return self._entries == ()

    def is_none(self) -> bool:
        return self._entries is None

    def matches(self, row: Mapping[str, Value | None]) -> bool:
        """Whether a row satisfies every constrained column (a missing key is NULL)."""
        if self._entries is None:
            return False
        return all(domain.contains_value(row.get(name)) for name, domain in self._entries)

    # Operations ------------------------------------------------------------------------------

    def intersect(self, other: TupleDomain) -> TupleDomain:
        """Rows matching both (exact); NONE absorbs."""
        if self._entries is None or other._entries is None:
            return TupleDomain.none()
        merged = dict(self._entries)
        for name, domain in other._entries:
            merged[name] = merged[name].intersect(domain) if name in merged else domain
        return TupleDomain.with_domains(merged)

    def column_wise_union(self, other: TupleDomain) -> TupleDomain:
        """A widening of the union: per column the union of both domains, and a column constrained
        on only one side becomes unconstrained. Every row matching either side matches the result,
        but the result may match more (`a=1 AND b=1` or `a=2 AND b=2` widens to `a IN (1,2) AND
        b IN (1,2)`)."""
        if self._entries is None:
            return other
        if other._entries is None:
            return self
        theirs = dict(other._entries)
        return TupleDomain.with_domains(
            {name: domain.union(theirs[name]) for name, domain in self._entries if name in theirs}
        )

    def __str__(self) -> str:
        """A readable conjunction for explain output, e.g.
        `city IN ('a', 'b') AND (ts >= 2026-01-01T00:00:00Z OR ts IS NULL)`."""
        if self._entries is None:
            return "FALSE"
        if not self._entries:
            return "TRUE"
        return " AND ".join(domain.explain(name) for name, domain in self._entries)
