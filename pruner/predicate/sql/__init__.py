"""Translate a SQL WHERE clause into a `TupleDomain` that pruning can use. `translate(where,
schema)` parses the predicate with sqlglot (`parsing`), evaluates its constants (`literals`), snaps
each literal to the values the column can hold (`grids`) and combines the comparisons (`translator`)
into a `Translation`: a tuple domain that is a SUPERSET of the rows for which the predicate is TRUE
under SQL three-valued logic, as tight as the algebra allows, plus a human-readable note for every
place where it had to widen. A literal that cannot be a value of the column's type is an
`InvalidInputError` naming the column and the literal. `text_condition(where, schema)` reads the
same text for what every matching row's text contains (`text_conditions`, with `regex_runs` for
regular expressions), the `TextCondition` a text index answers."""

from pruner.predicate.sql.text_conditions import text_condition
from pruner.predicate.sql.translator import Translation, translate

__all__ = ["Translation", "text_condition", "translate"]
