"""The codec: every value of every column type survives encode -> decode exactly (extremes
included), TupleDomains round-trip in canonical form, and malformed messages are
`InvalidInputError`s naming the column."""

from __future__ import annotations

import dataclasses
import math
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pruner.errors import InvalidInputError, TableCorruptError
from pruner.format.keys import partition_paths
from pruner.format.path_columns import file_path_values, path_values
from pruner.index.definitions import IndexState, IndexType
from pruner.planner.result import ExplainStep, IndexReport, PruneResult, Split
from pruner.predicate.domain import Domain, SortedRangeSet
from pruner.predicate.ranges import Range
from pruner.predicate.tuple_domain import TupleDomain
from pruner.predicate.values import normalize
from pruner.service import codec, table_codec
from pruner.service.gen.lakeprune.v1 import predicate_pb2 as ppb
from pruner.service.gen.lakeprune.v1 import pruning_service_pb2 as spb
from pruner.storage_requests import StorageRequests
from pruner.types import Column, TableSchema, parse_type

SCHEMA = TableSchema.parse(
    "b boolean, t tinyint, s smallint, i int, l bigint, f float, d double, m decimal(38,9), "
    "p decimal(10,2), str string, bin binary, day date, ts timestamp"
)
EXTREMES: dict[str, list[Any]] = {
    "b": [True, False],
    "t": [-128, 127],
    "s": [-(2**15), 2**15 - 1],
    "i": [-(2**31), 2**31 - 1],
    "l": [-(2**63), 2**63 - 1, 0],
    "f": [-3.4028234663852886e38, 1.5, -0.0, math.inf, -math.inf, 0.1],
    "d": [5e-324, -1.7976931348623157e308, math.inf, 0.1],
    "m": [
        Decimal("-99999999999999999999999999999.999999999"),
        Decimal("0E-9"),
        Decimal("12345678901234567890.123456789"),
    ],
    "p": [Decimal("-99999999.99"), Decimal("0.01"), Decimal("100.00")],
    "str": ["", "Zürich → 東京", "emoji 🚕", "a" * 300, "\x00"],
    "bin": [b"", b"\x00\xff", bytes(range(256))],
    "day": [date(1, 1, 1), date(9999, 12, 31), date(1969, 12, 31), date(1970, 1, 1)],
    "ts": [
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
        datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
        datetime(2026, 11, 22, 1, 2, 3, 4, tzinfo=UTC),
    ],
}


@pytest.mark.parametrize(("name", "value"), [(n, v) for n, values in EXTREMES.items() for v in values])
def test_every_value_round_trips_exactly(name: str, value: Any) -> None:
    column = SCHEMA.column(name)
    message = ppb.Value.FromString(codec.encode_value(value).SerializeToString())
    decoded = codec.decode_value(message, column)
    assert decoded == value and type(decoded) is type(value)
    if isinstance(value, float):
        assert math.copysign(1, decoded) == math.copysign(1, value)
    if isinstance(value, Decimal):
        assert decoded.as_tuple() == value.as_tuple()


def test_float_values_travel_as_doubles_and_float32_is_accepted() -> None:
    assert codec.encode_value(0.1).WhichOneof("kind") == "double_value"
    assert codec.decode_value(ppb.Value(float_value=0.5), SCHEMA.column("f")) == 0.5


def test_decimals_need_not_carry_the_columns_scale() -> None:
    column = SCHEMA.column("p")
    for unscaled, scale in (("15", 1), ("1500", 3), ("-7", 0)):
        value = codec.decode_value(
            ppb.Value(decimal_value=ppb.DecimalValue(unscaled=unscaled, scale=scale)), column
        )
        assert value == Decimal(unscaled).scaleb(-scale) and value.as_tuple().exponent == -2
    wide = "9" * 38
    assert codec.decode_value(
        ppb.Value(decimal_value=ppb.DecimalValue(unscaled=wide, scale=9)), SCHEMA.column("m")
    ) == Decimal("99999999999999999999999999999.999999999")  # no context rounding (28 digits)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("l", ppb.Value(string_value="1"), "column l (bigint) takes integer_value, got string_value"),
        (
            "d",
            ppb.Value(integer_value=1),
            "column d (double) takes double_value or float_value, got integer_value",
        ),
        ("t", ppb.Value(integer_value=128), "column t: cannot use 128 as a tinyint value: out of range"),
        ("p", ppb.Value(decimal_value=ppb.DecimalValue(unscaled="1", scale=3)), "has more than 2 fractional"),
        (
            "p",
            ppb.Value(decimal_value=ppb.DecimalValue(unscaled="10000000000", scale=2)),
            "needs more than 10 digits",
        ),
        ("p", ppb.Value(decimal_value=ppb.DecimalValue(unscaled="1.5", scale=0)), "needs unscaled digits"),
        (
            "p",
            ppb.Value(decimal_value=ppb.DecimalValue(unscaled="\uff11\uff15", scale=0)),
            "needs unscaled digits",
        ),
        ("p", ppb.Value(decimal_value=ppb.DecimalValue(unscaled="15\n", scale=0)), "needs unscaled digits"),
        ("p", ppb.Value(decimal_value=ppb.DecimalValue(unscaled="1", scale=-1)), "a scale 0..38"),
        ("day", ppb.Value(date_days=2**31 - 1), "column day: 2147483647 is out of range for date"),
        ("ts", ppb.Value(timestamp_micros=2**63 - 1), "is out of range for timestamp"),
        ("d", ppb.Value(double_value=math.nan), "NaN cannot be a value"),
        ("str", ppb.Value(), "got no value"),
    ],
)
def test_values_that_do_not_fit_their_column(name: str, value: ppb.Value, message: str) -> None:
    with pytest.raises(InvalidInputError) as raised:
        codec.decode_value(value, SCHEMA.column(name))
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("name", "values", "message"),
    [
        (
            "t",
            [ppb.Value(integer_value=1), ppb.Value(integer_value=128)],
            "column t: cannot use 128 as a tinyint",
        ),
        (
            "l",
            [ppb.Value(integer_value=1), ppb.Value(string_value="2")],
            "column l (bigint) takes integer_value",
        ),
        (
            "str",
            [ppb.Value(string_value="a"), ppb.Value()],
            "column str (string) takes string_value, got no value",
        ),
    ],
)
def test_an_in_list_is_read_in_bulk_and_its_bad_value_named(
    name: str, values: list[ppb.Value], message: str
) -> None:
    column = SCHEMA.column(name)
    with pytest.raises(InvalidInputError) as raised:
        codec.decode_values(values, column)
    assert message in str(raised.value)
    good = values[:1] * 3
    assert codec.decode_values(good, column) == [codec.decode_value(good[0], column)] * 3


def _value_sets(pool: list[Any]) -> st.SearchStrategy[Domain]:
    def build(kind: str, picked: list[Any], null: bool, incl: tuple[bool, bool]) -> Domain:
        low, high = min(picked), max(picked)
        if kind == "values":
            return Domain.multiple_values(picked, null)
        if kind == "range":
            bounded = Range.between(low, incl[0], high, incl[1]) or Range.equal(low)
            return Domain(SortedRangeSet.of_ranges(bounded, Range.greater_than(high)), null)
        if kind == "below":
            return Domain(SortedRangeSet.of_ranges(Range.less_than(low)), null)
        return Domain(SortedRangeSet.of_values(*picked).complement(), null)

    return st.builds(
        build,
        st.sampled_from(["values", "range", "below", "complement"]),
        st.lists(st.sampled_from(pool), min_size=1, max_size=4),
        st.booleans(),
        st.tuples(st.booleans(), st.booleans()),
    )


ORDERED = {k: [v for v in vs if not (isinstance(v, float) and math.isinf(v))] for k, vs in EXTREMES.items()}


@given(st.data())
def test_tuple_domains_round_trip(data: st.DataObject) -> None:
    columns = data.draw(st.lists(st.sampled_from(sorted(ORDERED)), min_size=0, max_size=4, unique=True))
    predicate = TupleDomain.with_domains({c: data.draw(_value_sets(ORDERED[c])) for c in columns})
    message = codec.encode_tuple_domain(predicate)
    decoded = codec.decode_tuple_domain(type(message).FromString(message.SerializeToString()), SCHEMA)
    assert decoded == predicate


def test_all_none_and_only_null() -> None:
    for predicate in (
        TupleDomain.all(),
        TupleDomain.none(),
        TupleDomain.with_domains({"str": Domain.only_null(), "l": Domain.not_null()}),
    ):
        assert codec.decode_tuple_domain(codec.encode_tuple_domain(predicate), SCHEMA) == predicate


def _domain_message(**value_set: Any) -> ppb.TupleDomain:
    domain = ppb.Domain(values=ppb.ValueSet(**value_set))
    return ppb.TupleDomain(columns=[ppb.ColumnDomain(column="l", domain=domain)])


@pytest.mark.parametrize(
    ("message", "error"),
    [
        (
            ppb.TupleDomain(none=True, columns=[ppb.ColumnDomain(column="l")]),
            "none = true cannot have column",
        ),
        (_domain_message(), "the value set has none of all_or_none, ranges, discrete"),
        (_domain_message(ranges=ppb.RangeSet()), "column l: empty range set"),
        (_domain_message(discrete=ppb.DiscreteValues()), "column l: empty IN list"),
        (
            _domain_message(discrete=ppb.DiscreteValues(values=[ppb.Value(integer_value=1)], integers=[2])),
            "column l: an IN list sets values and integers; exactly one of",
        ),
        (
            _domain_message(discrete=ppb.DiscreteValues(strings=["a"])),
            "column l: packed strings do not fit a bigint column (it takes integer_value)",
        ),
        (
            _domain_message(
                ranges=ppb.RangeSet(
                    ranges=[ppb.Range(low=ppb.Value(integer_value=2), high=ppb.Value(integer_value=1))]
                )
            ),
            "column l: inverted range, low 2 > high 1",
        ),
        (ppb.TupleDomain(columns=[ppb.ColumnDomain(column="L", domain=ppb.Domain())]), "unknown column 'L'"),
    ],
)
def test_malformed_tuple_domains(message: ppb.TupleDomain, error: str) -> None:
    with pytest.raises(InvalidInputError) as raised:
        codec.decode_tuple_domain(message, SCHEMA)
    assert error in str(raised.value)


def test_size_is_not_malformed() -> None:
    """Limits are the binding's to apply, by widening (`tests/pruner/planner/test_prune.py`)."""
    values = [ppb.Value(integer_value=i) for i in range(200_000)]
    decoded = codec.decode_tuple_domain(_domain_message(discrete=ppb.DiscreteValues(values=values)), SCHEMA)
    assert decoded.domains is not None and len(decoded.domains["l"].values.ranges) == 200_000


def test_long_in_lists_travel_packed() -> None:
    """A join's dynamic filter of integer or string keys is one packed list, read in bulk; any
    other IN list goes value by value."""
    keys = TupleDomain.with_domains({"l": Domain.multiple_values(range(0, 300_000, 3))})
    message = codec.encode_tuple_domain(keys)
    assert len(message.columns[0].domain.values.discrete.integers) == 100_000
    assert codec.decode_tuple_domain(message, SCHEMA) == keys
    names = TupleDomain.with_domains({"str": Domain.multiple_values(["b", "a", "é"], null_allowed=True)})
    assert list(codec.encode_tuple_domain(names).columns[0].domain.values.discrete.strings) == ["a", "b", "é"]
    assert codec.decode_tuple_domain(codec.encode_tuple_domain(names), SCHEMA) == names
    days = TupleDomain.with_domains({"day": Domain.multiple_values([date(2026, 1, 2), date(2026, 1, 1)])})
    assert len(codec.encode_tuple_domain(days).columns[0].domain.values.discrete.values) == 2


def test_nan_allowed_travels_on_float_and_double_columns_only() -> None:
    above = Domain(SortedRangeSet.of_ranges(Range.greater_than(1.5)), False, nan_allowed=True)
    predicate = TupleDomain.with_domains({"d": above, "f": Domain.only_nan()})
    assert codec.decode_tuple_domain(codec.encode_tuple_domain(predicate), SCHEMA) == predicate
    message = _domain_message(discrete=ppb.DiscreteValues(integers=[1]))
    message.columns[0].domain.nan_allowed = True
    with pytest.raises(InvalidInputError) as raised:
        codec.decode_tuple_domain(message, SCHEMA)
    assert str(raised.value) == "column l: nan_allowed is for float and double columns, not bigint"


def test_packed_integers_in_any_order_with_repeats_are_one_set() -> None:
    message = _domain_message(discrete=ppb.DiscreteValues(integers=[7, -3, 7, 2**63 - 1, -(2**63), 0]))
    decoded = codec.decode_tuple_domain(message, SCHEMA)
    assert decoded == TupleDomain.with_domains({"l": Domain.multiple_values([0, 7, -3, 2**63 - 1, -(2**63)])})


def test_packed_integers_out_of_the_columns_range_name_it() -> None:
    values = ppb.ValueSet(discrete=ppb.DiscreteValues(integers=[1, 2**31]))
    message = ppb.TupleDomain(columns=[ppb.ColumnDomain(column="i", domain=ppb.Domain(values=values))])
    with pytest.raises(InvalidInputError) as raised:
        codec.decode_tuple_domain(message, SCHEMA)
    assert str(raised.value).startswith("column i: ") and "2147483648" in str(raised.value)


def test_unbounded_ends_ignore_their_inclusive_flags() -> None:
    message = _domain_message(
        ranges=ppb.RangeSet(
            ranges=[ppb.Range(low_inclusive=True, high=ppb.Value(integer_value=5), high_inclusive=True)]
        )
    )
    assert codec.decode_tuple_domain(message, SCHEMA) == TupleDomain.with_domains(
        {"l": Domain(SortedRangeSet.of_ranges(Range.less_than_or_equal(5)), False)}
    )


def test_schemas_splits_and_explain_round_trip() -> None:
    assert codec.decode_schema(codec.encode_schema(SCHEMA)) == SCHEMA
    for text in ("decimal(38,0)", "decimal(1,1)", "timestamp"):
        column_type = parse_type(text)
        assert codec.decode_column_type(codec.encode_column_type(column_type)) == column_type
    split = Split(
        "s3://b/t/region=eu/f.parquet",
        "region=eu/day=__HIVE_DEFAULT_PARTITION__",
        {"region": "eu", "day": None},
        "g1",
        0,
        123,
        7,
        123,
    )
    assert codec.decode_split(codec.encode_split(split)) == split
    step = ExplainStep("bloom_filters", "bloom_filters", ("token",), 10, 2, 1.25, None, "OSError: x")
    assert codec.decode_explain(codec.encode_explain(step)) == step
    requests = StorageRequests(lists=1, heads=2, gets=3, bytes_read=4096)
    result = PruneResult("20260101000000000", "token = 'a'", 10, [split], [step], storage=requests)
    response = codec.encode_prune_result(result, explain=False)
    assert (response.files_selected, response.fallbacks, len(response.explain)) == (1, 1, 0)
    assert codec.decode_storage_requests(response.storage) == requests  # sent without explain too
    report = (IndexReport("bf", "bloom_filters", 8), IndexReport("stats", "column_stats", 0, "it ran"))
    assert [codec.decode_index_report(codec.encode_index_report(e)) for e in report] == list(report)
    reported = dataclasses.replace(result, index_report=report)
    assert len(codec.encode_prune_result(reported, explain=False).index_report) == 0  # as explain
    assert len(codec.encode_prune_header(reported, explain=True).index_report) == 2


# Every type of the type model, as the writer makes partition paths of it; NaN has no place in one.
PARTITION_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "b": st.booleans(),
    "t": st.integers(-128, 127),
    "s": st.integers(-(2**15), 2**15 - 1),
    "i": st.integers(-(2**31), 2**31 - 1),
    "l": st.integers(-(2**63), 2**63 - 1),
    "f": st.floats(width=32, allow_nan=False),
    "d": st.floats(allow_nan=False),
    "m": st.integers(-(10**38) + 1, 10**38 - 1).map(lambda u: Decimal(f"{u}E-9")),
    "p": st.integers(-(10**10) + 1, 10**10 - 1).map(lambda u: Decimal(f"{u}E-2")),
    "str": st.text(),
    "bin": st.text().map(lambda t: t.encode("utf-8")),  # a path holds a binary's UTF-8 text
    "day": st.dates(),
    "ts": st.datetimes(timezones=st.just(UTC)),
}


@settings(deadline=None)  # builds an Arrow table per example: slow first calls on a loaded machine
@given(
    st.fixed_dictionaries({}, optional={c: st.none() | s for c, s in PARTITION_VALUES.items()}).filter(bool)
)
def test_partition_values_are_parsed_once_and_travel_typed(values: dict[str, Any]) -> None:
    """A value of every type (NULL included) written into a partition path by the writer comes out
    of the sidecar's parse typed as the column, and through the wire unchanged, in the field its
    column's type takes."""
    columns = list(values)
    row = pa.table({c: pa.array([v], SCHEMA.column(c).type.to_arrow()) for c, v in values.items()})
    path = partition_paths(row, tuple(columns))[0].as_py()
    typed = path_values(path, SCHEMA)
    assert typed == {c: None if v is None else normalize(v, SCHEMA.column(c).type) for c, v in values.items()}
    sent = spb.Split.FromString(
        codec.encode_split(Split("f", path, typed, "g", 0, 1, 1, 1)).SerializeToString()
    )
    for message in sent.partition_values:
        value = typed[message.column]
        kind = message.typed_value.WhichOneof("kind")
        assert (kind is None) == (value is None) and message.HasField("typed_value") == (value is not None)
        if value is not None:
            assert kind == codec.value_fields(SCHEMA.column(message.column).type.kind)[0]
            assert codec.decode_value(message.typed_value, SCHEMA.column(message.column)) == value
    decoded = codec.decode_split(sent).partition_values
    assert decoded == typed and [type(v) for v in decoded.values()] == [type(v) for v in typed.values()]


def test_an_empty_typed_value_is_null_and_a_path_value_that_does_not_parse_is_corrupt() -> None:
    message = spb.PartitionValue(column="day", typed_value=ppb.Value())
    assert codec.decode_partition_values([message]) == {"day": None}
    with pytest.raises(TableCorruptError, match=r"t: partition path 'i=1\.5': .*1\.5"):
        file_path_values("i=1.5", SCHEMA, "t")
    with pytest.raises(TableCorruptError, match="not a boolean"):
        file_path_values("b=yes", SCHEMA, "t")


def test_snapshots_and_columns() -> None:
    assert codec.check_snapshot("") is None
    assert codec.check_snapshot("20260101000000000") == "20260101000000000"
    with pytest.raises(InvalidInputError, match="is not an instant"):
        codec.check_snapshot("../../etc")
    with pytest.raises(InvalidInputError, match="unknown column 'x'"):
        codec.resolve_column(SCHEMA, "x")
    assert codec.resolve_column(SCHEMA, "m") == Column("m", parse_type("decimal(38,9)"))


def test_timestamps_before_the_epoch_keep_their_microseconds() -> None:
    moment = datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC)
    assert codec.encode_value(moment).timestamp_micros == -999_999
    assert codec.decode_value(ppb.Value(timestamp_micros=-1), SCHEMA.column("ts")) == datetime(
        1970, 1, 1, tzinfo=UTC
    ) - timedelta(microseconds=1)


@pytest.mark.parametrize("name", ["files", "record_index", *(str(t) for t in IndexType)])
def test_every_index_type_has_its_wire_enum(name: str) -> None:
    encoded = table_codec.encode_index_type(name)
    assert encoded != spb.INDEX_TYPE_UNSPECIFIED and table_codec.decode_index_type(encoded) == name


@pytest.mark.parametrize("state", list(IndexState))
def test_every_index_state_has_its_wire_enum(state: IndexState) -> None:
    encoded = table_codec.encode_index_state(str(state))
    assert encoded != spb.INDEX_STATE_UNSPECIFIED and table_codec.decode_index_state(encoded) == state
