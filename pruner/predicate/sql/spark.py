"""Spark's filters as lakeprune SQL. The Spark data source hands over the filters Spark pushes to a
scan as Catalyst's SQL text (`Expression.sql()`: `(t.id = 3L)`, `TIMESTAMP '...'`, backquoted
names, `date_format(t.ts, 'yyyy-MM-dd')`); `from_spark` reads each conjunct with sqlglot's Spark
dialect and rewrites it into the SQL that `translate` reads, or leaves it out. Leaving a conjunct out
keeps more files, so only what is known to mean the same in Spark and in lakeprune is kept: the
connectives, comparisons, IN, BETWEEN, IS [NOT] NULL, literals (Spark's typed numbers become
CASTs), `startswith` (Spark's form of `LIKE 'p%'`), the text atoms (`LIKE`, given an explicit
`ESCAPE '\\'` where its pattern holds a backslash, Spark's default escape; `contains`, `endswith`,
`RLIKE`, `locate` / `instr`; over a column or `lower` / `upper` of one) and the registry functions whose Spark
semantics equal the registry's: `year`, `hour`, `month`, `day` (also over Spark's
`CAST(ts AS DATE)`, which it inserts for `year` / `month` / `dayofmonth` of a timestamp),
`to_date` and `date_format` (a Java
pattern of the fields `yyyy MM dd HH mm ss` and separators, mapped to the `%` spelling),
`timestamp_seconds` / `timestamp_millis` and Spark's string `from_unixtime(s)` cast back to a
timestamp (the registry's `from_unixtime`; as those are NULL in the registry outside 0001..9999,
where Spark's have a value, a comparison of one also keeps NULL and is never negated), `substring`,
`length`, `lower` and `upper` compared by `=` / IN with literals that the JVM's full case mapping
cannot produce differently from the registry's simple one (`lower`: lower-case text without
U+0307 or a final sigma; `upper`: ASCII without 'SS', 'FF', 'FI', 'FL', 'ST', which it makes of
'ß' and ligatures), and
`regexp_extract` with
a pattern in the subset every engine reads alike, compared by `=` / IN with non-empty strings only
(Spark gives '' where the registry gives NULL), nested in one another; and,
in ANSI mode only (`spark.sql.ansi.enabled`, Spark 4's default: otherwise Spark wraps integer
overflow where an index expression holds NULL), arithmetic (`+ - * / div %`, unary `-`) over them,
columns and literals, with casts of those to numbers (and, in UTC, to dates and timestamps).
Timestamps are instants rendered in the session time zone, so a conjunct with a timestamp literal or
a time function is kept only when that zone is UTC. Spark's NaN is the greatest double and equals
itself, so a range that NaN passes on a float or double column (`x > v`, `x >= v`) is read as
`(x > v OR is_nan(x))`, which the column stats answer from each file's NaN count, and a conjunct
with a NaN literal is left out. Every conjunct left out is named in `dropped`."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import SqlglotError

from pruner.errors import InvalidInputError
from pruner.functions.regex_subset import check_pattern
from pruner.predicate.sql.parsing import is_utc
from pruner.predicate.text import simple_lower

# Spark functions read as plain calls (sqlglot would otherwise rewrite them into its own nodes).
_CALLS = (
    "date_format",
    "year",
    "hour",
    "month",
    "day",
    "dayofmonth",
    "to_date",
    "lower",
    "upper",
    "substring",
    "length",
    "regexp_extract",
    "timestamp_seconds",
    "timestamp_millis",
)
# timestamps made of epoch numbers: NULL in the registry outside 0001..9999, where Spark's have a
# value (Spark's own timestamps lie in that range)
_EPOCH_CALLS = {"timestamp_seconds", "timestamp_millis", "from_unixtime"}
_TIME_CALLS = {"date_format", "year", "hour", "month", "day", "dayofmonth", "to_date", *_EPOCH_CALLS}
# Spark's `from_unixtime(s)` is a string, `yyyy-MM-dd HH:mm:ss` in the session's zone; Catalyst
# writes `hour(from_unixtime(s))` as `hour(CAST(from_unixtime(s, 'yyyy-MM-dd HH:mm:ss') AS TIMESTAMP))`,
# which in a UTC session is the registry's `from_unixtime(s)`.
_FROM_UNIXTIME_FORMAT = "yyyy-MM-dd HH:mm:ss"
# Spark reads `year(ts)` as `year(CAST(ts AS DATE))` (so `month`, `dayofmonth`): in a UTC session
# the date's field is the timestamp's own UTC field, the registry's.
_DATE_FIELDS = {"year", "month", "day", "dayofmonth"}
_RENAMED = {"dayofmonth": "day"}
# Characters the JVM's full lower-case mapping produces where the registry's simple one does not.
_LOWER_DIFFERS = ("\u0307", "\u03c2")
# The ASCII texts the JVM's full upper-case mapping makes of one character where the registry's simple
# one keeps a single character ('ß' -> 'SS', 'ﬁ' -> 'FI', ...): of an ASCII text without them, every
# string the JVM upper-cases to it is one the registry upper-cases to it too.
_UPPER_EXPANSIONS = ("SS", "FF", "FI", "FL", "ST")
_JAVA_FIELDS = {"yyyy": "%Y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%i", "ss": "%s"}
_JAVA_TOKEN = re.compile(r"yyyy|MM|dd|HH|mm|ss|[-:/. ,_]|'[^']+'")
_CONNECTIVES = (exp.And, exp.Or, exp.Not, exp.Paren)
_PREDICATES = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.In, exp.Between, exp.Is)
_CAST_TYPES = {"BIGINT", "INT", "SMALLINT", "TINYINT", "DOUBLE", "FLOAT", "DECIMAL", "DATE", "TIMESTAMP"}
_CAST_TYPES |= {"TIMESTAMPTZ", "BOOLEAN", "VARCHAR", "TEXT"}
# Text atoms whose Spark meaning is lakeprune's: `contains`, `endswith`, `RLIKE` (Java regex syntax,
# of which the text index reads only what Java, Python and RE2 agree on) and `locate` / `instr`.
_TEXT_ATOMS = (exp.Contains, exp.EndsWith, exp.RegexpLike, exp.StrPosition)
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod)
_VALUE_CASTS = {"BIGINT", "INT", "SMALLINT", "TINYINT", "DOUBLE", "FLOAT"}


# Spark's dialect without its builders of the functions above, which then parse as plain calls.
_PARSER = type(
    "Parser",
    (Spark.Parser,),
    {
        "FUNCTIONS": {
            k: v for k, v in Spark.Parser.FUNCTIONS.items() if k.lower() not in (*_CALLS, "from_unixtime")
        }
    },
)
_SPARK = type("SparkCalls", (Spark,), {"Parser": _PARSER})()


@dataclass(frozen=True)
class SparkFilters:
    """A lakeprune WHERE clause for Spark's filters (None: nothing usable) and what was left out."""

    where: str | None
    dropped: tuple[str, ...]


@dataclass(frozen=True)
class _Session:
    """What a conjunct means depends on: a UTC session zone (timestamps, time functions) and ANSI
    mode (`spark.sql.ansi.enabled`: integer overflow fails the query instead of wrapping, and a
    division by zero too instead of giving NULL)."""

    utc: bool
    ansi: bool


def from_spark(
    filters: Sequence[str], time_zone: str, floating: Collection[str] = (), ansi: bool = False
) -> SparkFilters:
    """The AND of what can be read of `filters` (Catalyst SQL texts) in a session at `time_zone`,
    in ANSI mode or not; `floating` names the float and double columns (see `_nan_above`)."""
    session = _Session(is_utc(time_zone), ansi)
    approximate = {name.lower() for name in floating}
    kept: list[str] = []
    dropped: list[str] = []
    for text in filters:
        converted = _conjunct(text, session, approximate)
        if converted is None:
            dropped.append(text)
        elif converted not in kept:
            kept.append(converted)
    where = " AND ".join(f"({c})" for c in kept) if kept else None
    return SparkFilters(where, tuple(dropped))


def _conjunct(text: str, session: _Session, approximate: set[str]) -> str | None:
    try:
        tree = _SPARK.parse(text)[0]
        if tree is None:
            return None
    except (SqlglotError, RecursionError):
        return None
    if _case_mapping_is_unsafe(tree) or _regexp_extract_is_unsafe(tree) or _has_nan_literal(tree):
        return None
    try:
        return _null_outside_range(_rewrite(_nan_above(tree, approximate), session)).sql()
    except _UnsupportedError:
        return None


class _UnsupportedError(Exception):
    pass


def _rewrite(node: exp.Expr, session: _Session) -> exp.Expr:
    """A copy of `node` in lakeprune's SQL, or `_UnsupportedError`."""
    if isinstance(node, exp.Column):
        if not isinstance(node.this, exp.Identifier):
            raise _UnsupportedError
        return exp.column(node.this.name, quoted=True)
    if isinstance(node, exp.Literal | exp.Null | exp.Boolean):
        return node.copy()
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        return node.copy()
    if (
        isinstance(node, exp.Neg) and isinstance(node.this, exp.Cast) and _is_literal_cast(node.this)
    ):  # `-1.5D`
        return _cast(node.this, session, negate=True)
    if isinstance(node, _ARITHMETIC):
        return _arithmetic(node, session)
    if isinstance(node, exp.Neg):
        return exp.Neg(this=_arithmetic_operand(node.this, session))
    if isinstance(node, exp.Substring):
        call = exp.Anonymous(
            this="substring", expressions=[node.this, node.args.get("start"), node.args.get("length")]
        )
        return _call(call, session)
    if isinstance(node, exp.Cast):  # TryCast too: Spark's `3L`, `1.0D`, `DATE '...'`
        return _cast(node, session)
    if isinstance(node, exp.StartsWith):
        return _starts_with(node, session)
    if isinstance(node, exp.Like) and not node.args.get("negate"):
        return _like(node, session)
    if isinstance(node, exp.Escape) and isinstance(node.this, exp.Like):
        return _copy(node, session)  # an explicit escape: the pattern means the same in both
    if isinstance(node, _TEXT_ATOMS) and not node.args.get("flag"):
        return _copy(node, session)
    if isinstance(node, exp.Anonymous):
        return _call(node, session)
    if isinstance(node, _CONNECTIVES + _PREDICATES + (exp.IsNan, exp.Case, exp.If)):
        return _copy(node, session)  # CASE: its branches and values read as everything else
    raise _UnsupportedError


def _copy(node: exp.Expr, session: _Session) -> exp.Expr:
    """`node` with its operands rewritten."""
    copy = node.copy()
    for key, value in node.args.items():
        if isinstance(value, exp.Expr):
            copy.set(key, _rewrite(value, session))
        elif isinstance(value, list):
            copy.set(key, [_rewrite(v, session) if isinstance(v, exp.Expr) else v for v in value])
    return copy


def _like(node: exp.Like, session: _Session) -> exp.Expr:
    """Spark's LIKE, whose escape is a backslash by default: with a backslash in the pattern, an
    explicit `ESCAPE '\\'` (without one, lakeprune reads a backslash as literal or escape)."""
    pattern = node.expression
    if not isinstance(pattern, exp.Literal) or not pattern.is_string:
        raise _UnsupportedError
    copy = _copy(node, session)
    return exp.Escape(this=copy, expression=exp.Literal.string("\\")) if "\\" in pattern.name else copy


def _arithmetic(node: exp.Expr, session: _Session) -> exp.Expr:
    """`+ - * / div %` as the index expressions compute them (`pruner.functions.expression`): only in
    ANSI mode, where Spark fails the query on the rows whose value the index holds as NULL
    (overflow, division by zero). A plain node: Spark's dialect marks `/` as safe (NULL on zero)."""
    left = _arithmetic_operand(node.this, session)
    right = _arithmetic_operand(node.expression, session)
    return type(node)(this=left, expression=right)


def _arithmetic_operand(node: exp.Expr, session: _Session) -> exp.Expr:
    if not session.ansi:
        raise _UnsupportedError  # Spark wraps integer overflow where the index holds NULL
    return _operand(node, session)


def _operand(node: exp.Expr, session: _Session) -> exp.Expr:
    """An operand of arithmetic or the value argument of a call: a cast of a column or of a
    computed value may stand there (never as a comparison's side: `CAST(id AS INT) = 2` is left out)."""
    if isinstance(node, exp.Cast) and not _is_literal_cast(node):
        return _value_cast(node, session)
    return _rewrite(node, session)


def _is_literal_cast(node: exp.Cast) -> bool:
    inner = node.this
    return isinstance(inner, exp.Literal | exp.Null) or (
        isinstance(inner, exp.Neg) and isinstance(inner.this, exp.Literal)
    )


def _value_cast(node: exp.Cast, session: _Session) -> exp.Expr:
    """A cast of a column or a computed value to a type whose values Spark and the index
    expressions compute alike (`pruner.functions.expression.cast_allowed` says which casts an
    index holds): numbers, and dates and timestamps in a UTC session."""
    to, kind = _target(node)
    if kind in ("TIMESTAMP", "TIMESTAMPTZ") and session.utc and _is_from_unixtime_text(node.this):
        assert isinstance(node.this, exp.Anonymous)
        return exp.Anonymous(this="from_unixtime", expressions=[_operand(node.this.expressions[0], session)])
    if kind not in _VALUE_CASTS and not (kind in ("DATE", "TIMESTAMP") and session.utc):
        raise _UnsupportedError
    return exp.Cast(this=_rewrite(node.this, session), to=to.copy())


def _is_from_unixtime_text(node: exp.Expr) -> bool:
    """Whether `node` is Spark's `from_unixtime(s, 'yyyy-MM-dd HH:mm:ss')`, the string that casts
    back to the instant `s` (in a UTC session)."""
    if not isinstance(node, exp.Anonymous) or str(node.this).lower() != "from_unixtime":
        return False
    pattern = node.expressions[1:]
    return len(node.expressions) in (1, 2) and all(
        isinstance(p, exp.Literal) and p.is_string and p.name == _FROM_UNIXTIME_FORMAT for p in pattern
    )


def _cast(node: exp.Cast, session: _Session, negate: bool = False) -> exp.Expr:
    """A cast of a literal (Spark's `3L`, `1.0D`, `DATE '...'`), negated for `-1.5D`."""
    inner = node.this
    if not _is_literal_cast(node) or (negate and not isinstance(inner, exp.Literal)):
        raise _UnsupportedError
    to, kind = _target(node)
    if kind not in _CAST_TYPES or (kind.startswith("TIMESTAMP") and not session.utc):
        raise _UnsupportedError
    if kind == "TIMESTAMPTZ":
        to = exp.DataType.build("TIMESTAMP")
    value = exp.Neg(this=inner.copy()) if negate else inner.copy()
    return exp.Cast(this=value, to=to.copy())


def _target(node: exp.Cast) -> tuple[exp.DataType, str]:
    """A cast's target type and its name (`BIGINT`, `TIMESTAMPTZ` ...); `_UnsupportedError` when
    it has none."""
    to = node.args.get("to")
    if not isinstance(to, exp.DataType):
        raise _UnsupportedError
    return to, to.this.name if isinstance(to.this, exp.DataType.Type) else str(to.this)


def _starts_with(node: exp.StartsWith, session: _Session) -> exp.Expr:
    prefix = node.expression
    if not isinstance(prefix, exp.Literal) or not prefix.is_string or re.search(r"[%_\\]", prefix.name):
        raise _UnsupportedError
    return exp.Like(this=_rewrite(node.this, session), expression=exp.Literal.string(prefix.name + "%"))


def _call(node: exp.Anonymous, session: _Session) -> exp.Expr:
    name = str(node.this).lower()
    if name not in _CALLS or (name in _TIME_CALLS and not session.utc):
        raise _UnsupportedError
    args = list(node.expressions)
    if args and name in _DATE_FIELDS and _is_date_cast(args[0]):
        args[0] = args[0].this
    if not args:
        raise _UnsupportedError
    rest = args[1:]
    if name == "date_format":
        if len(rest) != 1 or not isinstance(rest[0], exp.Literal) or not rest[0].is_string:
            raise _UnsupportedError
        rest = [exp.Literal.string(_percent_pattern(rest[0].name))]
    elif not all(isinstance(a, exp.Literal) for a in rest):
        raise _UnsupportedError
    return exp.Anonymous(this=_RENAMED.get(name, name), expressions=[_operand(args[0], session), *rest])


def _is_date_cast(node: exp.Expr) -> bool:
    """Whether `node` is `CAST(column AS DATE)`."""
    to = node.args.get("to") if isinstance(node, exp.Cast) else None
    return (
        isinstance(to, exp.DataType)
        and to.this == exp.DataType.Type.DATE
        and isinstance(node.this, exp.Column)
    )


def _percent_pattern(java: str) -> str:
    """A Java date pattern as the registry's `%` pattern, only where the two format alike."""
    out, position = [], 0
    while position < len(java):
        match = _JAVA_TOKEN.match(java, position)
        if match is None:
            raise _UnsupportedError
        token = match.group()
        if token in _JAVA_FIELDS:
            out.append(_JAVA_FIELDS[token])
        elif token.startswith("'"):
            if "%" in token:
                raise _UnsupportedError
            out.append(token[1:-1])
        else:
            out.append(token)
        position = match.end()
    if not any(token in "".join(out) for token in _JAVA_FIELDS.values()):
        raise _UnsupportedError
    return "".join(out)


def _case_mapping_is_unsafe(tree: exp.Expr) -> bool:
    """Whether a `lower(...)` or `upper(...)` call stands anywhere but in an un-negated `=` or IN
    against string literals that the JVM's full case mapping cannot produce where the registry's
    simple one does not (`lower`: no U+0307, no final sigma, and lower-case by the registry's own
    tables — a letter newer than the JVM's stays upper-case in Spark only; `upper`: ASCII without
    the expansions 'SS', 'FF', 'FI', 'FL', 'ST' — Spark's `upper('straße')` is 'STRASSE', the
    index's 'STRAẞE'): elsewhere (`<>`, ranges, under NOT) the two case mappings could disagree
    about a row. The subject of a text atom is safe: the text index holds the terms of both
    mappings."""
    return _outside_equality(
        tree,
        "lower",
        lambda text: not any(ch in text for ch in _LOWER_DIFFERS) and simple_lower(text) == text,
        text_subjects=True,
    ) or _outside_equality(
        tree,
        "upper",
        lambda text: text.isascii() and not any(seq in text for seq in _UPPER_EXPANSIONS),
        text_subjects=True,
    )


def _regexp_extract_is_unsafe(tree: exp.Expr) -> bool:
    """Whether a `regexp_extract(...)` call stands anywhere but in an un-negated `=` or IN against
    non-empty string literals: Spark gives '' where the registry gives NULL (no match, or a group
    that took no part in it), so only such an equality means the same; its pattern must lie in the
    subset every engine reads alike (`pruner.functions.regex_subset`)."""
    for call in tree.find_all(exp.Anonymous):
        if str(call.this).lower() == "regexp_extract":
            pattern = call.expressions[1] if len(call.expressions) > 1 else None
            if not isinstance(pattern, exp.Literal) or not pattern.is_string:
                return True
            try:
                check_pattern(pattern.name)
            except InvalidInputError:
                return True
    return _outside_equality(tree, "regexp_extract", bool, text_subjects=False)


def _outside_equality(
    tree: exp.Expr, name: str, literal_ok: Callable[[str], bool], *, text_subjects: bool
) -> bool:
    """Whether a call of `name` stands anywhere but in an un-negated `=` or IN against string
    literals that `literal_ok` accepts (or, with `text_subjects`, as a text atom's subject)."""
    for call in tree.find_all(exp.Anonymous):
        if str(call.this).lower() != name:
            continue
        parent = call.parent
        while isinstance(parent, exp.Paren):
            parent = parent.parent
        if text_subjects and _is_text_subject(call, parent):
            continue
        if not isinstance(parent, exp.EQ | exp.In) or parent.find_ancestor(exp.Not) is not None:
            return True
        others = [lit for lit in parent.find_all(exp.Literal) if lit.find_ancestor(exp.Anonymous) is None]
        if any(not lit.is_string or not literal_ok(lit.name) for lit in others):
            return True
    return False


def _is_text_subject(call: exp.Expr, parent: exp.Expr | None) -> bool:
    """Whether `call` is the text a text atom searches, from which the translator reads no range
    (only the text index reads it, and it holds the terms of both case mappings): the subject of
    `contains`, `endswith`, `RLIKE`, `locate` / `instr`, or of a LIKE whose pattern has no literal
    prefix (a prefix would become a range on a functional index over `lower`)."""
    if isinstance(parent, _TEXT_ATOMS):
        return parent.this is call or (isinstance(parent.this, exp.Paren) and parent.this.unnest() is call)
    if isinstance(parent, exp.Like) and isinstance(parent.expression, exp.Literal):
        return parent.expression.name[:1] in ("%", "_")
    return False


def _has_nan_literal(tree: exp.Expr) -> bool:
    """Whether the conjunct compares with NaN (`CAST('NaN' AS DOUBLE)`), which Spark makes equal to
    itself and lakeprune, as SQL and Trino, compares false."""
    return any(
        literal.is_string and literal.name.strip().lower().lstrip("+-") == "nan"
        for literal in tree.find_all(exp.Literal)
    )


def _nan_above(tree: exp.Expr, approximate: set[str]) -> exp.Expr:
    """`tree` with each `x > v`, `x >= v` (or `v < x`, `v <= x`) on a float or double column read as
    Spark means it, `(x > v OR is_nan(x))`: Spark orders NaN above every number, lakeprune compares
    it false. Under NOT as well: `NOT (x > v)` is false for NaN in Spark, and so is
    `NOT (x > v OR is_nan(x))`; for NULL both are NULL (`is_nan(NULL)` is NULL in lakeprune).
    Spark's own `isnan(x)` is false for NULL, so it is read as `(is_nan(x) AND x IS NOT NULL)`."""

    def spark_order(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.IsNan):
            not_null = exp.Not(this=exp.Is(this=node.this.copy(), expression=exp.Null()))
            return exp.Paren(this=exp.And(this=node.copy(), expression=not_null))
        if isinstance(node, exp.GT | exp.GTE | exp.LT | exp.LTE):
            above = node.this if isinstance(node, exp.GT | exp.GTE) else node.expression
            if isinstance(above, exp.Column) and above.name.lower() in approximate:
                return exp.Paren(this=exp.Or(this=node.copy(), expression=exp.IsNan(this=above.copy())))
        return node

    return tree.transform(spark_order)


def _null_outside_range(tree: exp.Expr) -> exp.Expr:
    """`tree` (rewritten) with each comparison of a timestamp made of an epoch number read as
    `(cmp OR operand IS NULL)`: the registry's is NULL outside 0001..9999, where Spark's has a value.
    Under NOT that would keep too few rows, so a negated one is left out."""
    epoch = list(_epoch_calls(tree))
    if not epoch:
        return tree
    if any(call.find_ancestor(exp.Not) is not None for call in epoch):
        raise _UnsupportedError

    def keep_null(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, _PREDICATES) or isinstance(node, exp.Is):
            return node
        operands = [node.this] if isinstance(node, exp.In | exp.Between) else [node.this, node.expression]
        nullable = [operand for operand in operands if any(_epoch_calls(operand))]
        if not nullable:
            return node
        nulls = (exp.Is(this=o.copy(), expression=exp.Null()) for o in nullable)
        either = exp.or_(node.copy(), *nulls)
        return either if isinstance(node.parent, exp.Paren) else exp.Paren(this=either)

    return tree.transform(keep_null)


def _epoch_calls(tree: exp.Expr) -> Iterator[exp.Anonymous]:
    return (call for call in tree.find_all(exp.Anonymous) if str(call.this).lower() in _EPOCH_CALLS)
