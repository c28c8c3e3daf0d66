"""Trino's filter expressions as lakeprune SQL. The native Trino connector sends the part of a
scan's filter that is not a TupleDomain as Trino's own expression trees (`EngineFilter`: calls of
Trino's functions and operators — `$equal`, `$add`, `$cast`, `year`, ... — over the table's columns
and typed constants); `from_trino` rewrites each conjunct into the SQL that `translate` reads, where
the table's index expressions are matched up to normalisation (operand order of commutative
operators, redundant casts), or leaves it out. Leaving a conjunct out keeps more files, so only what
means the same in Trino and in lakeprune's registry on every input is kept:
- the connectives `$and`, `$or`, `$not` (not over `lower` or a time function, see below),
  comparisons, `$in`, `$is_null`, constants of lakeprune's types;
- arithmetic `$add $subtract $multiply $divide $modulus $negate` and the function `mod` over
  integers and doubles (Trino fails a query on integer overflow or division by zero, where the index
  holds NULL: no answer depends on such a row; `/` of integers truncates in both; `mod` of doubles
  is not an index expression), and `$cast` between the types the registry casts (integers to wider
  integers or double, real to double, a timestamp to its date; not a date to a timestamp, which
  Trino places in the session's zone);
- on `timestamp(6) with time zone` values (read in UTC, as the connector reads them): `year`,
  `month`, `day` (`day_of_month`), `hour`, `date_trunc` and `date_format` over the fields
  `%Y %m %d %H %i %s %%`; and `from_unixtime` of integer seconds (Trino's takes a double: the
  integer's cast to double is exact in 0001..9999), whose `timestamp(3) with time zone` is in the
  session's zone, so it is read only when that zone (`time_zone`, sent by the connector) is UTC, or
  with UTC as its second argument. The registry's are NULL for instants outside 0001..9999, where
  Trino's have a value, so a comparison of one is read as `(cmp OR operand IS NULL)`, and never
  negated;
- on `varchar`: `substring` from a positive start, `length` (both count code points, as Trino
  does), `regexp_extract` with a pattern in the subset every engine reads alike
  (`pruner.functions.regex_subset`; NULL without a match in both), `abs` on numbers, and
  `lower` in `=` / `IN` only — the connector sends those only with literals free of the letters
  its JVM lowers differently from the index (a range is not translated: such a row could sort
  inside Trino's range and outside the index's). `upper` and
  `trim` are not: Trino keeps 'ß' where the index has 'ẞ', and trims other whitespace.
Every conjunct left out is named in `dropped` (the engine still evaluates the whole filter)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from sqlglot import exp

from pruner.bounded import shorten
from pruner.errors import InvalidInputError
from pruner.functions.expression import cast_allowed
from pruner.functions.regex_subset import check_pattern
from pruner.functions.registry import TRUNC_UNITS
from pruner.predicate.sql.parsing import indexed_column, is_utc
from pruner.predicate.sql.translator import Translation, translate
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import Value
from pruner.types import ColumnType, TableSchema, TypeKind


@dataclass(frozen=True)
class ColumnRef:
    """A column of the table."""

    name: str
    type: ColumnType


@dataclass(frozen=True)
class Constant:
    """A constant of `type` (None: NULL), decoded and checked against its type."""

    value: Value | None
    type: ColumnType


@dataclass(frozen=True)
class Call:
    """A call of one of Trino's functions or operators (its name as `FunctionName.getName()`)."""

    function: str
    arguments: tuple[TrinoExpression, ...]
    type: ColumnType


TrinoExpression = ColumnRef | Constant | Call


@dataclass(frozen=True)
class TrinoFilters:
    """The lakeprune SQL of each conjunct that could be read, and a text of each left out."""

    conjuncts: tuple[str, ...]
    dropped: tuple[str, ...]


def from_trino(
    conjuncts: Sequence[TrinoExpression],
    indexed: Callable[[exp.Expr], bool] = lambda node: True,
    time_zone: str = "",
) -> TrinoFilters:
    """What can be read of Trino's `conjuncts` as lakeprune SQL, one text per conjunct, in a
    session at `time_zone` (Trino's TimeZoneKey id; empty: unknown); a comparison of a computed
    value (not a column, not a constant) is read only where `indexed` says an index holds it."""
    kept: list[str] = []
    dropped: list[str] = []
    for conjunct in conjuncts:
        try:
            if _session_zoned(conjunct) and not is_utc(time_zone):
                raise _UnsupportedError(f"from_unixtime in the session's zone {time_zone or '(unknown)'!r}")
            text = _Reader(indexed).condition(conjunct).sql()
        except _UnsupportedError as exc:
            dropped.append(f"{shorten(render(conjunct))} ({shorten(exc)})")
            continue
        if text not in kept:
            kept.append(text)
    return TrinoFilters(tuple(kept), tuple(dropped))


def text_atoms(conjuncts: Sequence[TrinoExpression], time_zone: str = "") -> tuple[str, ...]:
    """The text atoms among `conjuncts` over a computed string (`substring(msg, 1, 80) LIKE
    '%disk full%'`, `starts_with`, `regexp_like`, `strpos(...)` compared) as lakeprune SQL, for the
    text indexes over expressions (`text_condition` reads them, and decides what each requires):
    the connector's text predicate carries atoms over a column, or `lower` / `upper` of one, only.
    A conjunct with a function that does not mean in Trino what it means in the registry (`upper`,
    `trim`, ...) is left out, as in `from_trino`."""
    found: list[str] = []
    for conjunct in conjuncts:
        if not isinstance(conjunct, Call) or (_session_zoned(conjunct) and not is_utc(time_zone)):
            continue
        try:
            atom = _text_atom(conjunct)
        except _UnsupportedError:
            continue
        if atom is not None:
            found.append(atom.sql())
    return tuple(dict.fromkeys(found))


def _text_atom(node: Call) -> exp.Expr | None:
    """`node` as a text atom over a computed string; None when it is no such atom."""
    function, arguments = node.function, node.arguments
    if function in _COMPARISONS and len(arguments) == 2:
        for position, bound, op in ((0, 1, function), (1, 0, _FLIPPED_COMPARISONS[function])):
            strpos = arguments[position]
            if isinstance(strpos, Call) and strpos.function == "strpos" and len(strpos.arguments) == 2:
                subject = _text_subject(strpos.arguments[0])
                if subject is None:
                    return None
                needle = exp.Literal.string(_text_constant("strpos", strpos.arguments[1]))
                found = exp.StrPosition(this=subject, substr=needle)
                limit = exp.Literal.number(_integer_constant(function, arguments[bound]))
                return _COMPARISONS[op](this=found, expression=limit)
        return None
    if not arguments or (subject := _text_subject(arguments[0])) is None:
        return None
    texts = [exp.Literal.string(_text_constant(function, literal)) for literal in arguments[1:]]
    if function == "$like" and len(texts) in (1, 2):
        like = exp.Like(this=subject, expression=texts[0])
        return exp.Escape(this=like, expression=texts[1]) if len(texts) == 2 else like
    if function == "starts_with" and len(texts) == 1:
        return exp.StartsWith(this=subject, expression=texts[0])
    if function == "regexp_like" and len(texts) == 1:
        return exp.RegexpLike(this=subject, expression=texts[0])
    return None


def _text_subject(node: TrinoExpression) -> exp.Expr | None:
    """A computed string's SQL; None for a column or `lower` / `upper` of one (the connector's
    text predicate has those atoms)."""
    if not isinstance(node, Call) or _cases_a_column(node):
        return None
    return _value(node)


def translate_trino(
    conjuncts: Sequence[TrinoExpression],
    schema: TableSchema,
    expressions: Mapping[str, str],
    time_zone: str = "",
) -> Translation:
    """The AND of what can be read of Trino's `conjuncts` over `schema` in a session at
    `time_zone` (`expressions`: the table's index expressions, as `translate` takes them), each
    conjunct translated on its own so
    that one the table cannot bind (a literal outside its column's type) leaves out only itself.
    A comparison of a computed value that no index holds is left out before any SQL is made of it
    (a 400-value IN list over `substring(zip, 1, 5)` on a table without such an index would
    otherwise be rendered and parsed for nothing)."""
    types = {c.name: c.type for c in schema.columns}
    filters = from_trino(
        conjuncts, lambda node: indexed_column(node, types, expressions) is not None, time_zone
    )
    domain = TupleDomain.all()
    notes = [f"Trino filter not read: {dropped}" for dropped in filters.dropped]
    for conjunct in filters.conjuncts:
        try:
            translation = translate(conjunct, schema, expressions)
        except InvalidInputError as exc:
            notes.append(f"Trino filter not bound: {shorten(conjunct)} ({shorten(exc)})")
            continue
        domain = domain.intersect(translation.domain)
        notes.extend(translation.widened)
    return Translation(domain, tuple(notes))


def render(node: TrinoExpression) -> str:
    """Trino's expression as text (function names as Trino has them), for notes."""
    match node:
        case ColumnRef(name=name):
            return name
        case Constant(value=value):
            return "NULL" if value is None else repr(value)
        case Call(function=function, arguments=arguments):
            return f"{function}({', '.join(render(a) for a in arguments)})"


class _UnsupportedError(Exception):
    pass


_COMPARISONS: dict[str, type[exp.Binary]] = {
    "$equal": exp.EQ,
    "$not_equal": exp.NEQ,
    "$less_than": exp.LT,
    "$less_than_or_equal": exp.LTE,
    "$greater_than": exp.GT,
    "$greater_than_or_equal": exp.GTE,
}
_FLIPPED_COMPARISONS = {
    "$equal": "$equal",
    "$not_equal": "$not_equal",
    "$less_than": "$greater_than",
    "$less_than_or_equal": "$greater_than_or_equal",
    "$greater_than": "$less_than",
    "$greater_than_or_equal": "$less_than_or_equal",
}
_ARITHMETIC: dict[str, type[exp.Binary]] = {
    "$add": exp.Add,
    "$subtract": exp.Sub,
    "$multiply": exp.Mul,
    "$divide": exp.Div,
    "$modulus": exp.Mod,
    "mod": exp.Mod,  # Trino's function: the operator's value (the dividend's sign)
}
_TEMPORAL_FIELDS = {"year": "year", "month": "month", "day": "day", "day_of_month": "day", "hour": "hour"}
# the time functions whose registry value is NULL outside 0001..9999, where Trino's is not
_NULL_OUTSIDE_RANGE = {"year", "month", "day", "hour", "date_format", "date_trunc", "from_unixtime"}
_DATE_FORMAT_PATTERN = re.compile(r"(?:[^%]|%[YmdHis%])*")


class _Reader:
    """Reads conditions; `indexed` decides whether a computed operand is worth reading."""

    def __init__(self, indexed: Callable[[exp.Expr], bool]) -> None:
        self.indexed = indexed

    def condition(self, node: TrinoExpression) -> exp.Expr:
        if not isinstance(node, Call):
            raise _UnsupportedError("not a condition")
        function, arguments = node.function, node.arguments
        if function in ("$and", "$or"):
            if not arguments:
                raise _UnsupportedError(f"{function} of nothing")
            parts = [self.condition(argument) for argument in arguments]
            return exp.and_(*parts) if function == "$and" else exp.or_(*parts)
        if function == "$not" and len(arguments) == 1:
            if _approximate_calls(arguments[0]) or _calls(arguments[0], {"lower"}):
                raise _UnsupportedError("a negated lower or time function")
            return exp.Not(this=exp.Paren(this=self.condition(arguments[0])))
        if function == "$is_null" and len(arguments) == 1:
            return exp.Is(this=self.operand(arguments[0]), expression=exp.Null())
        if function in _COMPARISONS and len(arguments) == 2:
            if _calls(node, {"lower"}) and function != "$equal":
                raise _UnsupportedError("lower compared other than by =")
            left, right = (self.operand(argument) for argument in arguments)
            comparison = _COMPARISONS[function](this=left, expression=right)
            return _null_outside_range(comparison, arguments)
        if function == "$in" and len(arguments) == 2:
            values = arguments[1]
            if not isinstance(values, Call) or values.function != "$array" or not values.arguments:
                raise _UnsupportedError("IN of other than a list")
            subject = self.operand(arguments[0])  # before the list is rendered
            listed = [_value(value) for value in values.arguments]
            return _null_outside_range(exp.In(this=subject, expressions=listed), arguments[:1])
        raise _UnsupportedError(f"{function} is not a condition lakeprune reads")

    def operand(self, node: TrinoExpression) -> exp.Expr:
        """A compared value: a column, a constant, or a computed value an index holds."""
        value = _value(node)
        if isinstance(node, Call) and not self.indexed(value):
            raise _UnsupportedError(f"no index on {shorten(value.sql())}")
        return value


def _null_outside_range(condition: exp.Expr, operands: Sequence[TrinoExpression]) -> exp.Expr:
    """`condition`, or also NULL of each operand with a time function the index has NULL for."""
    nullable = [operand for operand in operands if _approximate_calls(operand)]
    if not nullable:
        return condition
    nulls = (exp.Is(this=_value(operand), expression=exp.Null()) for operand in nullable)
    return exp.Paren(this=exp.or_(condition, *nulls))


def _value(node: TrinoExpression) -> exp.Expr:
    match node:
        case ColumnRef(name=name):
            return exp.column(name, quoted=True)
        case Constant(value=value, type=kind):
            return _literal(value, kind)
        case Call(function=function, arguments=arguments, type=result):
            if function in _ARITHMETIC and len(arguments) == 2:
                _check_arithmetic(function, [*arguments, node])
                return exp.Paren(
                    this=_ARITHMETIC[function](this=_value(arguments[0]), expression=_value(arguments[1]))
                )
            if function == "$negate" and len(arguments) == 1:
                _check_arithmetic(function, [arguments[0], node])
                return exp.Neg(this=exp.Paren(this=_value(arguments[0])))
            if function == "$cast" and len(arguments) == 1:
                return _cast(arguments[0], result)
            reader = _FUNCTIONS.get(function)
            if reader is None:
                raise _UnsupportedError(f"{function} is not a function lakeprune reads from Trino")
            return reader(arguments)
    raise _UnsupportedError(f"cannot read {node!r}")


def _check_arithmetic(function: str, operands: Sequence[TrinoExpression]) -> None:
    kinds = {operand.type.kind for operand in operands}
    if not all(kind.is_integer or kind is TypeKind.DOUBLE for kind in kinds):
        raise _UnsupportedError(f"{function} of other than integers and doubles")
    if function in ("$modulus", "mod") and TypeKind.DOUBLE in kinds:
        raise _UnsupportedError(f"{function} of doubles")


def _cast(operand: TrinoExpression, target: ColumnType) -> exp.Expr:
    source = operand.type
    if source == target:
        return _value(operand)
    if not cast_allowed(source, target) or (source.kind, target.kind) == (TypeKind.DATE, TypeKind.TIMESTAMP):
        raise _UnsupportedError(f"$cast from {source} to {target}")
    return exp.Cast(this=_value(operand), to=exp.DataType.build(str(target)))


def _temporal_field(name: str) -> Callable[[Sequence[TrinoExpression]], exp.Expr]:
    def read(arguments: Sequence[TrinoExpression]) -> exp.Expr:
        _check_count(name, arguments, 1)
        _check_timestamp(name, arguments[0])
        return exp.Anonymous(this=_TEMPORAL_FIELDS[name], expressions=[_value(arguments[0])])

    return read


def _date_format(arguments: Sequence[TrinoExpression]) -> exp.Expr:
    _check_count("date_format", arguments, 2)
    _check_timestamp("date_format", arguments[0])
    pattern = _text_constant("date_format", arguments[1])
    if not _DATE_FORMAT_PATTERN.fullmatch(pattern):
        raise _UnsupportedError(f"date_format pattern {pattern!r}: fields other than %Y %m %d %H %i %s")
    return exp.Anonymous(this="date_format", expressions=[_value(arguments[0]), exp.Literal.string(pattern)])


def _date_trunc(arguments: Sequence[TrinoExpression]) -> exp.Expr:
    _check_count("date_trunc", arguments, 2)
    unit = _text_constant("date_trunc", arguments[0]).lower()
    if unit not in TRUNC_UNITS:
        raise _UnsupportedError(f"date_trunc unit {unit!r}")
    if arguments[1].type.kind not in (TypeKind.TIMESTAMP, TypeKind.DATE):
        raise _UnsupportedError("date_trunc of other than a timestamp or a date")
    return exp.Anonymous(this="date_trunc", expressions=[exp.Literal.string(unit), _value(arguments[1])])


def _substring(arguments: Sequence[TrinoExpression]) -> exp.Expr:
    if len(arguments) not in (2, 3):
        raise _UnsupportedError("substring takes 2 or 3 arguments")
    _check_string("substring", arguments[0])
    bounds = [_integer_constant("substring", argument) for argument in arguments[1:]]
    if bounds[0] < 1 or (len(bounds) == 2 and bounds[1] < 0):
        raise _UnsupportedError("substring from other than a positive start, of a negative length")
    return exp.Anonymous(
        this="substring", expressions=[_value(arguments[0]), *(exp.Literal.number(b) for b in bounds)]
    )


def _string_function(name: str) -> Callable[[Sequence[TrinoExpression]], exp.Expr]:
    def read(arguments: Sequence[TrinoExpression]) -> exp.Expr:
        _check_count(name, arguments, 1)
        _check_string(name, arguments[0])
        return exp.Anonymous(this=name, expressions=[_value(arguments[0])])

    return read


def _regexp_extract(arguments: Sequence[TrinoExpression]) -> exp.Expr:
    if len(arguments) not in (2, 3):
        raise _UnsupportedError("regexp_extract takes 2 or 3 arguments")
    _check_string("regexp_extract", arguments[0])
    pattern = _text_constant("regexp_extract", arguments[1])
    group = _integer_constant("regexp_extract", arguments[2]) if len(arguments) == 3 else 0
    try:
        check_pattern(pattern)
    except InvalidInputError as exc:
        raise _UnsupportedError(str(exc)) from None
    return exp.Anonymous(
        this="regexp_extract",
        expressions=[_value(arguments[0]), exp.Literal.string(pattern), exp.Literal.number(group)],
    )


def _from_unixtime(arguments: Sequence[TrinoExpression]) -> exp.Expr:
    """`from_unixtime(seconds)` (in the session's zone, see `_session_zoned`) or
    `from_unixtime(seconds, 'UTC')`, of integer seconds: Trino casts them to double, exactly for
    every instant of 0001..9999, and keeps milliseconds, of which whole seconds lose nothing."""
    if len(arguments) not in (1, 2):
        raise _UnsupportedError("from_unixtime with hours and minutes")
    if len(arguments) == 2 and not is_utc(_text_constant("from_unixtime", arguments[1])):
        raise _UnsupportedError("from_unixtime in a zone other than UTC")
    seconds = arguments[0]
    if isinstance(seconds, Call) and seconds.function == "$cast" and len(seconds.arguments) == 1:
        seconds = seconds.arguments[0]
    if not seconds.type.kind.is_integer:
        raise _UnsupportedError("from_unixtime of other than integer seconds")
    return exp.Anonymous(this="from_unixtime", expressions=[_value(seconds)])


def _cases_a_column(node: Call) -> bool:
    return node.function in ("lower", "upper") and all(isinstance(a, ColumnRef) for a in node.arguments)


def _session_zoned(node: TrinoExpression) -> bool:
    """Whether `node` makes a timestamp in the session's zone (`from_unixtime(seconds)`), whose
    fields are the registry's (UTC) only in a UTC session."""
    if not isinstance(node, Call):
        return False
    if node.function == "from_unixtime" and len(node.arguments) == 1:
        return True
    return any(_session_zoned(argument) for argument in node.arguments)


def _abs(arguments: Sequence[TrinoExpression]) -> exp.Expr:
    _check_count("abs", arguments, 1)
    kind = arguments[0].type.kind
    if not (kind.is_integer or kind is TypeKind.DOUBLE):
        raise _UnsupportedError("abs of other than an integer or a double")
    return exp.Anonymous(this="abs", expressions=[_value(arguments[0])])


_FUNCTIONS: dict[str, Callable[[Sequence[TrinoExpression]], exp.Expr]] = {
    **{name: _temporal_field(name) for name in _TEMPORAL_FIELDS},
    "date_format": _date_format,
    "date_trunc": _date_trunc,
    "substring": _substring,
    "length": _string_function("length"),
    "lower": _string_function("lower"),
    "abs": _abs,
    "regexp_extract": _regexp_extract,
    "from_unixtime": _from_unixtime,
}


def _check_count(name: str, arguments: Sequence[TrinoExpression], count: int) -> None:
    if len(arguments) != count:
        raise _UnsupportedError(f"{name} with {len(arguments)} arguments")


def _check_timestamp(name: str, argument: TrinoExpression) -> None:
    if argument.type.kind is not TypeKind.TIMESTAMP:
        raise _UnsupportedError(f"{name} of other than timestamp(6) with time zone")


def _check_string(name: str, argument: TrinoExpression) -> None:
    if argument.type.kind is not TypeKind.STRING:
        raise _UnsupportedError(f"{name} of other than varchar")


def _text_constant(name: str, argument: TrinoExpression) -> str:
    if not isinstance(argument, Constant) or not isinstance(argument.value, str):
        raise _UnsupportedError(f"{name} with other than a text constant")
    return argument.value


def _integer_constant(name: str, argument: TrinoExpression) -> int:
    if (
        not isinstance(argument, Constant)
        or not isinstance(argument.value, int)
        or isinstance(argument.value, bool)
    ):
        raise _UnsupportedError(f"{name} with other than integer constants")
    return argument.value


def _calls(node: TrinoExpression, names: set[str]) -> bool:
    if not isinstance(node, Call):
        return False
    return node.function in names or any(_calls(argument, names) for argument in node.arguments)


def _approximate_calls(node: TrinoExpression) -> bool:
    return _calls(node, _NULL_OUTSIDE_RANGE | {"day_of_month"})


def _literal(value: Value | None, kind: ColumnType) -> exp.Expr:
    """A constant as the SQL `translate` reads back to exactly `value` of `kind`."""
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if kind.kind.is_integer:
        assert isinstance(value, int)
        return exp.Literal.number(value)
    if kind.kind is TypeKind.STRING:
        assert isinstance(value, str)
        return exp.Literal.string(value)
    if isinstance(value, bytes):
        raise _UnsupportedError("a varbinary constant")
    if isinstance(value, date):  # a datetime too
        text = value.isoformat()
    elif isinstance(value, Decimal):
        text = format(value, "f")
    else:
        text = repr(value)
    return exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build(str(kind)))
