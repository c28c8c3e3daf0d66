"""Converting between lakeprune's values and the `lakeprune.v1` protobuf messages, for the gRPC
server, the Python client and the Spark source's in-process bridge alike (the only modules besides
them that import the generated code).

Decoding a request is binding it to the table's schema: every column must exist, every value must
be of the field kind its column type takes (see `predicate.proto`) and is normalised with
`pruner.predicate.values.normalize`, so the planner only ever sees well-typed, canonical domains.
Nothing is rounded: a value that does not fit its column exactly, a range whose low end lies above
its high end, an empty or too long IN list, a NaN bound, a column given twice — each is an
`InvalidInputError` naming the column and what was wrong. Encoding is exact too: floating-point
values always travel as `double_value`, decimals as unscaled digits plus scale."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import assert_never

import numpy as np

from pruner.bounded import echo, shorten
from pruner.errors import InvalidInputError
from pruner.format.instant import is_instant
from pruner.numeric import date_from_days, days_since_epoch, micros_since_epoch, timestamp_from_micros
from pruner.planner.planner import PlannedPrune
from pruner.planner.result import ExplainStep, IndexReport, PruneResult, Split
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import Value, format_value, normalize, normalize_all
from pruner.service.gen.lakeprune.v1 import predicate_pb2 as ppb
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.storage_requests import StorageRequests
from pruner.types import Column, ColumnType, TableSchema, TypeKind

_UNSCALED = re.compile(r"[+-]?[0-9]{1,80}")
MAX_SCALE = 38


def value_fields(kind: TypeKind) -> tuple[str, ...]:
    """The fields of the `Value` oneof that a column of `kind` accepts (see `predicate.proto`)."""
    match kind:
        case TypeKind.BOOLEAN:
            return ("boolean_value",)
        case TypeKind.TINYINT | TypeKind.SMALLINT | TypeKind.INT | TypeKind.BIGINT:
            return ("integer_value",)
        case TypeKind.FLOAT | TypeKind.DOUBLE:
            return ("double_value", "float_value")
        case TypeKind.DECIMAL:
            return ("decimal_value",)
        case TypeKind.STRING:
            return ("string_value",)
        case TypeKind.BINARY:
            return ("binary_value",)
        case TypeKind.DATE:
            return ("date_days",)
        case TypeKind.TIMESTAMP:
            return ("timestamp_micros",)
        case _:
            assert_never(kind)


def proto_kind(kind: TypeKind) -> spb.TypeKind:
    """The `lakeprune.v1.TypeKind` of a kind."""
    match kind:
        case TypeKind.BOOLEAN:
            return spb.TYPE_KIND_BOOLEAN
        case TypeKind.TINYINT:
            return spb.TYPE_KIND_TINYINT
        case TypeKind.SMALLINT:
            return spb.TYPE_KIND_SMALLINT
        case TypeKind.INT:
            return spb.TYPE_KIND_INT
        case TypeKind.BIGINT:
            return spb.TYPE_KIND_BIGINT
        case TypeKind.FLOAT:
            return spb.TYPE_KIND_FLOAT
        case TypeKind.DOUBLE:
            return spb.TYPE_KIND_DOUBLE
        case TypeKind.DECIMAL:
            return spb.TYPE_KIND_DECIMAL
        case TypeKind.STRING:
            return spb.TYPE_KIND_STRING
        case TypeKind.BINARY:
            return spb.TYPE_KIND_BINARY
        case TypeKind.DATE:
            return spb.TYPE_KIND_DATE
        case TypeKind.TIMESTAMP:
            return spb.TYPE_KIND_TIMESTAMP
        case _:
            assert_never(kind)


_FROM_PROTO = {proto_kind(kind): kind for kind in TypeKind}


# Values --------------------------------------------------------------------------------------------


def encode_value(value: Value) -> ppb.Value:
    """The message for a normalised value (its Python type decides the field)."""
    if isinstance(value, bool):
        return ppb.Value(boolean_value=value)
    if isinstance(value, int):
        return ppb.Value(integer_value=value)
    if isinstance(value, float):
        return ppb.Value(double_value=value)
    if isinstance(value, Decimal):
        return ppb.Value(decimal_value=encode_decimal(value))
    if isinstance(value, str):
        return ppb.Value(string_value=value)
    if isinstance(value, bytes):
        return ppb.Value(binary_value=value)
    if isinstance(value, datetime):
        return ppb.Value(timestamp_micros=micros_since_epoch(value))
    if isinstance(value, date):
        return ppb.Value(date_days=days_since_epoch(value))
    raise InvalidInputError(f"cannot encode {value!r}: unsupported value type {type(value).__name__}")


def encode_decimal(value: Decimal) -> ppb.DecimalValue:
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        raise InvalidInputError(f"cannot encode the decimal {value}: not a finite number")
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    if exponent > 0:
        unscaled, exponent = unscaled * 10**exponent, 0
    return ppb.DecimalValue(unscaled=str(unscaled), scale=-exponent)


def decode_decimal(message: ppb.DecimalValue) -> Decimal:
    """The decimal of a well-formed message (`decode_value` checks one from a client)."""
    # From text, so that no context precision applies: scaleb() would round beyond 28 digits.
    return Decimal(f"{message.unscaled}E{-message.scale}")


def decode_value(message: ppb.Value, column: Column) -> Value:
    """The normalised value of `message` for `column`; `InvalidInputError` if it does not fit."""
    kind = message.WhichOneof("kind")
    accepted = value_fields(column.type.kind)
    if kind not in accepted:
        given = "no value" if kind is None else kind
        raise InvalidInputError(
            f"column {column.name} ({column.type}) takes {' or '.join(accepted)}, got {given}"
        )
    raw: object
    if kind == "decimal_value":
        raw = _decimal(message.decimal_value, column)
    elif kind == "date_days":
        raw = _from_epoch(column, date_from_days, message.date_days)
    elif kind == "timestamp_micros":
        raw = _from_epoch(column, timestamp_from_micros, message.timestamp_micros)
    else:
        raw = getattr(message, kind)
    if isinstance(raw, float) and math.isnan(raw):
        raise InvalidInputError(f"column {column.name}: NaN cannot be a value or a bound of a domain")
    try:
        return normalize(raw, column.type)
    except InvalidInputError as exc:
        raise InvalidInputError(f"column {column.name}: {exc}") from None


def decode_values(messages: Sequence[ppb.Value], column: Column) -> list[Value]:
    """`decode_value` of each message (an IN list, a dynamic filter's of up to 100,000 values): when
    all carry the column's one plain field (integers, strings), read and checked in bulk."""
    kinds = {m.WhichOneof("kind") for m in messages}
    plain = ("integer_value", "string_value")
    if len(kinds) == 1 and (kind := kinds.pop()) in plain and kind in value_fields(column.type.kind):
        try:
            return normalize_all([getattr(m, kind) for m in messages], column.type)
        except InvalidInputError:
            pass  # value by value below, for the message that names the column
    return [decode_value(m, column) for m in messages]


def _decimal(message: ppb.DecimalValue, column: Column) -> Decimal:
    if not _UNSCALED.fullmatch(message.unscaled) or not 0 <= message.scale <= MAX_SCALE:
        raise InvalidInputError(
            f"column {column.name}: decimal_value needs unscaled digits and a scale 0..{MAX_SCALE}, "
            f"got unscaled={echo(message.unscaled)} scale={message.scale}"
        )
    return decode_decimal(message)


def _from_epoch(column: Column, since_epoch: Callable[[int], date], count: int) -> date:
    try:
        return since_epoch(count)
    except OverflowError:
        raise InvalidInputError(f"column {column.name}: {count} is out of range for {column.type}") from None


# Domains -------------------------------------------------------------------------------------------


def encode_domain(domain: Domain) -> ppb.Domain:
    values = domain.values
    if values.is_none() or values.is_all():
        value_set = ppb.ValueSet(all_or_none=ppb.AllOrNone(all=values.is_all()))
    elif values.is_discrete():
        value_set = ppb.ValueSet(discrete=encode_discrete(values.discrete_values()))
    else:
        value_set = ppb.ValueSet(ranges=ppb.RangeSet(ranges=[_encode_range(r) for r in values.ranges]))
    return ppb.Domain(values=value_set, null_allowed=domain.null_allowed, nan_allowed=domain.nan_allowed)


def encode_discrete(values: Sequence[Value]) -> ppb.DiscreteValues:
    """An IN list: packed when its values are all integers or all strings, else value by value."""
    integers = [v for v in values if type(v) is int]  # not bool
    if len(integers) == len(values):
        return ppb.DiscreteValues(integers=integers)
    strings = [v for v in values if type(v) is str]
    if len(strings) == len(values):
        return ppb.DiscreteValues(strings=strings)
    return ppb.DiscreteValues(values=[encode_value(v) for v in values])


def decode_discrete(message: ppb.DiscreteValues, column: Column) -> SortedRangeSet:
    """An IN list: from `values`, or in bulk from the packed `integers` or `strings` (exactly one of
    the three holds them). Packed integers for an integer column are checked, sorted and
    deduplicated as one array: a join's dynamic filter waits for this on the query's critical path."""
    lists = {"values": message.values, "integers": message.integers, "strings": message.strings}
    given = [name for name, items in lists.items() if items]
    if not given:
        _check_not_empty(column, 0, "IN list")
    if len(given) > 1:
        raise InvalidInputError(
            f"column {column.name}: an IN list sets {' and '.join(given)}; exactly one of values, "
            "integers, strings holds its values"
        )
    if given == ["values"]:
        return SortedRangeSet.of_values(*decode_values(message.values, column))
    field = "integer_value" if given == ["integers"] else "string_value"
    if field not in value_fields(column.type.kind):
        raise InvalidInputError(
            f"column {column.name}: packed {given[0]} do not fit a {column.type} column "
            f"(it takes {' or '.join(value_fields(column.type.kind))})"
        )
    bounds = column.type.kind.integer_bounds
    if given == ["integers"] and bounds is not None:
        integers = np.array(message.integers, dtype=np.int64)
        if bounds[0] <= integers.min() and integers.max() <= bounds[1]:
            return SortedRangeSet.of_integers(integers)
        # else value by value below, for the message that names the value out of range
    try:
        return SortedRangeSet.of_values(*normalize_all(list(lists[given[0]]), column.type))
    except InvalidInputError as exc:
        raise InvalidInputError(f"column {column.name}: {exc}") from None


def _encode_range(r: Range) -> ppb.Range:
    message = ppb.Range(low_inclusive=r.low_inclusive, high_inclusive=r.high_inclusive)
    if r.low is not None:
        message.low.CopyFrom(encode_value(r.low))
    if r.high is not None:
        message.high.CopyFrom(encode_value(r.high))
    return message


def encode_tuple_domain(predicate: TupleDomain) -> ppb.TupleDomain:
    domains = predicate.domains
    if domains is None:
        return ppb.TupleDomain(none=True)
    return ppb.TupleDomain(
        columns=[ppb.ColumnDomain(column=name, domain=encode_domain(d)) for name, d in domains.items()]
    )


def decode_domain(message: ppb.Domain, column: Column) -> Domain:
    if not message.HasField("values"):
        raise InvalidInputError(f"column {column.name}: the domain has no value set")
    value_set = message.values
    kind = value_set.WhichOneof("kind")
    if kind == "all_or_none":
        values = SortedRangeSet.all() if value_set.all_or_none.all else SortedRangeSet.none()
    elif kind == "discrete":
        values = decode_discrete(value_set.discrete, column)
    elif kind == "ranges":
        ranges = value_set.ranges.ranges
        _check_not_empty(column, len(ranges), "range set")
        values = SortedRangeSet.of_ranges(*(_decode_range(r, column) for r in ranges))
    else:
        raise InvalidInputError(
            f"column {column.name}: the value set has none of all_or_none, ranges, discrete"
        )
    if message.nan_allowed and not column.type.kind.is_floating:
        raise InvalidInputError(
            f"column {column.name}: nan_allowed is for float and double columns, not {column.type}"
        )
    return Domain(values, message.null_allowed, message.nan_allowed)


def _check_not_empty(column: Column, count: int, what: str) -> None:
    if count == 0:
        raise InvalidInputError(
            f"column {column.name}: empty {what} (use all_or_none {{all: false}} for no value)"
        )


def _decode_range(message: ppb.Range, column: Column) -> Range:
    low = decode_value(message.low, column) if message.HasField("low") else None
    high = decode_value(message.high, column) if message.HasField("high") else None
    low_inclusive = message.low_inclusive and low is not None
    high_inclusive = message.high_inclusive and high is not None
    if low is not None and high is not None:
        if low > high:  # type: ignore[operator]
            raise InvalidInputError(
                f"column {column.name}: inverted range, low {shorten(format_value(low))} > high "
                f"{shorten(format_value(high))}"
            )
        if low == high and not (low_inclusive and high_inclusive):
            raise InvalidInputError(
                f"column {column.name}: empty range at {shorten(format_value(low))} (a single value "
                "needs both ends inclusive)"
            )
    return Range(low, low_inclusive, high, high_inclusive)


def decode_tuple_domain(message: ppb.TupleDomain, schema: TableSchema) -> TupleDomain:
    """The request's predicate over `schema`; `InvalidInputError` for anything malformed (unknown
    column, wrong type, inverted or empty range, NaN where not allowed). Size is not malformed: the
    binding (`pruner.planner.prune.bind_predicate`) widens what exceeds the limits, noted."""
    if message.none:
        if message.columns:
            raise InvalidInputError("a tuple domain with none = true cannot have column domains")
        return TupleDomain.none()
    domains: dict[str, Domain] = {}
    for entry in message.columns:
        column = resolve_column(schema, entry.column)
        if entry.column in domains:
            raise InvalidInputError(f"column {entry.column} has more than one domain")
        if not entry.HasField("domain"):
            raise InvalidInputError(f"column {entry.column}: no domain")
        domains[entry.column] = decode_domain(entry.domain, column)
    return TupleDomain.with_domains(domains)


def resolve_column(schema: TableSchema, name: str) -> Column:
    if not schema.has(name):
        shown = ", ".join(schema.names)
        raise InvalidInputError(f"unknown column {echo(name)} (columns: {shown})")
    return schema.column(name)


def check_snapshot(instant: str) -> str | None:
    """The requested snapshot: None for the latest, else a well-formed instant."""
    if not instant:
        return None
    if not is_instant(instant):
        raise InvalidInputError(f"snapshot {echo(instant)} is not an instant (expected YYYYMMDDHHMMSSmmm)")
    return instant


def check_no_sql_predicate(request: spb.PruneRequest) -> None:
    """The gRPC service prunes by the TupleDomain alone: `sql_predicate` is the in-process Spark
    bridge's (`builder.spark_source`), refused here rather than ignored (which would read more)."""
    if request.HasField("sql_predicate"):
        raise InvalidInputError(
            "sql_predicate is only read by the in-process Spark source; send the predicate as a TupleDomain"
        )


MIN_SPLIT_BYTES = 64 << 10  # a range smaller than a row group buys an engine nothing but splits


def check_split_bytes(max_split_bytes: int) -> int:
    """A request's `max_split_bytes`: 0 (whole files) or at least `MIN_SPLIT_BYTES`."""
    if max_split_bytes != 0 and max_split_bytes < MIN_SPLIT_BYTES:
        raise InvalidInputError(
            f"max_split_bytes {max_split_bytes:,} is below the minimum of {MIN_SPLIT_BYTES:,} "
            "(0: one split per file)"
        )
    return max_split_bytes


# Tables --------------------------------------------------------------------------------------------


def encode_column_type(column_type: ColumnType) -> spb.ColumnType:
    return spb.ColumnType(
        kind=proto_kind(column_type.kind),
        precision=column_type.precision,
        scale=column_type.scale,
        name=str(column_type),
    )


def decode_column_type(message: spb.ColumnType) -> ColumnType:
    kind = _FROM_PROTO.get(message.kind)
    if kind is None:
        raise InvalidInputError(f"unknown column type kind {message.kind} ({message.name})")
    if kind is TypeKind.DECIMAL:
        return ColumnType(kind, message.precision, message.scale)
    return ColumnType(kind)


def encode_schema(schema: TableSchema) -> list[spb.Column]:
    return [
        spb.Column(name=c.name, type=encode_column_type(c.type), nullable=c.nullable) for c in schema.columns
    ]


def decode_schema(columns: Sequence[spb.Column]) -> TableSchema:
    return TableSchema(tuple(Column(c.name, decode_column_type(c.type), c.nullable) for c in columns))


# Prune results ---------------------------------------------------------------------------------------


def encode_partition_values(values: Mapping[str, Value | None]) -> list[spb.PartitionValue]:
    """A file's typed partition values (`pruner.format.path_columns.path_values`; None is NULL,
    sent as an unset `typed_value`)."""
    return [
        spb.PartitionValue(column=k, typed_value=encode_value(v))
        if v is not None
        else spb.PartitionValue(column=k)
        for k, v in values.items()
    ]


def decode_partition_values(messages: Sequence[spb.PartitionValue]) -> dict[str, Value | None]:
    """The partition values the sidecar sent: each by the field it set (the column's type chose
    it), with no schema at hand; an unset `typed_value`, or one with no field set, is NULL."""
    return {m.column: decode_sent_value(m.typed_value) for m in messages}


def decode_sent_value(message: ppb.Value) -> Value | None:
    """A value the sidecar encoded (`encode_value`), by its field alone: None when no field is
    set. Requests are decoded against their column (`decode_value`), never with this."""
    kind = message.WhichOneof("kind")
    if kind is None:
        return None
    if kind == "decimal_value":
        return decode_decimal(message.decimal_value)
    if kind == "date_days":
        return date_from_days(message.date_days)
    if kind == "timestamp_micros":
        return timestamp_from_micros(message.timestamp_micros)
    value: Value = getattr(message, kind)
    return value


def encode_split(split: Split) -> spb.Split:
    return spb.Split(
        path=split.path,
        partition=split.partition,
        partition_values=encode_partition_values(split.partition_values),
        file_group=split.file_group,
        start=split.start,
        length=split.length,
        row_count=split.row_count,
        file_size=split.file_size,
    )


def decode_split(message: spb.Split) -> Split:
    return Split(
        path=message.path,
        partition=message.partition,
        partition_values=decode_partition_values(message.partition_values),
        file_group=message.file_group,
        start=message.start,
        length=message.length,
        row_count=message.row_count,
        file_size=message.file_size,
    )


def encode_explain(step: ExplainStep) -> spb.ExplainStep:
    message = spb.ExplainStep(
        step=step.step,
        columns=step.columns,
        files_in=step.files_in,
        files_out=step.files_out,
        millis=step.millis,
    )
    if step.index is not None:
        message.index = step.index
    if step.skipped is not None:
        message.skipped = step.skipped
    if step.fallback is not None:
        message.fallback = step.fallback
    return message


def decode_explain(message: spb.ExplainStep) -> ExplainStep:
    return ExplainStep(
        step=message.step,
        index=message.index if message.HasField("index") else None,
        columns=tuple(message.columns),
        files_in=message.files_in,
        files_out=message.files_out,
        millis=message.millis,
        skipped=message.skipped if message.HasField("skipped") else None,
        fallback=message.fallback if message.HasField("fallback") else None,
    )


def encode_index_report(entry: IndexReport) -> spb.IndexReport:
    message = spb.IndexReport(index=entry.index, kind=entry.kind, files_pruned=entry.files_pruned)
    if entry.why_not is not None:
        message.why_not = entry.why_not
    return message


def decode_index_report(message: spb.IndexReport) -> IndexReport:
    why_not = message.why_not if message.HasField("why_not") else None
    return IndexReport(message.index, message.kind, message.files_pruned, why_not)


def encode_prune_start(planned: PlannedPrune) -> spb.PruneResponse:
    """The first message of a stream: what is known before any file is decided."""
    return spb.PruneResponse(
        snapshot=planned.snapshot or "",
        predicate=planned.predicate,
        files_total=planned.files_total,
        widened=planned.widened,
    )


def encode_prune_header(result: PruneResult, explain: bool) -> spb.PruneResponse:
    """A response with everything but the splits (a stream's last message carries it)."""
    return spb.PruneResponse(
        snapshot=result.snapshot or "",
        predicate=result.predicate,
        files_total=result.files_total,
        files_selected=result.files_selected,
        fallbacks=result.fallbacks,
        explain=[encode_explain(s) for s in result.explain] if explain else [],
        storage=encode_storage_requests(result.storage),
        widened=result.widened,
        index_report=[encode_index_report(r) for r in result.index_report] if explain else [],
    )


def encode_storage_requests(requests: StorageRequests) -> spb.StorageRequests:
    return spb.StorageRequests(
        lists=requests.lists, heads=requests.heads, gets=requests.gets, bytes_read=requests.bytes_read
    )


def decode_storage_requests(message: spb.StorageRequests) -> StorageRequests:
    return StorageRequests(message.lists, message.heads, message.gets, message.bytes_read)


def encode_prune_result(
    result: PruneResult, explain: bool, splits: Sequence[Split] | None = None
) -> spb.PruneResponse:
    """One response with the whole result: its splits, or `splits` when they were cut further
    (`Split.ranges`)."""
    response = encode_prune_header(result, explain)
    response.splits.extend(encode_split(s) for s in (result.splits if splits is None else splits))
    return response
