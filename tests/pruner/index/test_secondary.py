"""The secondary index partition without Spark: RFC-77's worked example (base entries, log entries
with tombstones, merged result), the pair as merge key, hashing by value alone, the old-image diff
and tombstones never reaching a base file."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given
from hypothesis import strategies as st

from pruner.index import secondary
from pruner.index.definitions import IndexDefinition, IndexType
from pruner.metadata.index_partition import IndexPartitionView, compact_bucket, write_base, write_logs
from pruner.metadata.merge import with_op
from pruner.metadata.spec import OP_DELETE, OP_FIELD, OP_UPSERT
from pruner.storage import Storage
from pruner.types import parse_type

SPEC = secondary.spec("by_city", parse_type("string"), 4)
CITY_INDEX = IndexDefinition("by_city", IndexType.SECONDARY_INDEX, ("city",))
I1, I2, I3 = "20240101000000001", "20240101000000002", "20240101000000003"

BASE = [
    ("chennai", "c8abbe79-8d89-47ea-b4ce-4d224bae5bfa"),
    ("los-angeles", "9909a8b1-2d15-4d3d-8ec9-efc48c536a01"),
    ("los-angeles", "9809a8b1-2d15-4d3d-8ec9-efc48c536a01"),
    ("sfo", "334e26e9-8355-45cc-97c6-c31daf0df330"),
    ("sfo", "334e26e9-8355-45cc-97c6-c31daf0df329"),
]
LOG = [
    ("sfo", "334e26e9-8355-45cc-97c6-c31daf0df329", OP_DELETE),
    ("chennai", "e3cf430c-889d-4015-bc98-59bdce1e530c", OP_UPSERT),
    ("los-angeles", "9809a8b1-2d15-4d3d-8ec9-efc48c536a01", OP_DELETE),
    ("austin", "9809a8b1-2d15-4d3d-8ec9-efc48c536a01", OP_UPSERT),
]
MERGED = [
    ("austin", "9809a8b1-2d15-4d3d-8ec9-efc48c536a01"),
    ("chennai", "c8abbe79-8d89-47ea-b4ce-4d224bae5bfa"),
    ("chennai", "e3cf430c-889d-4015-bc98-59bdce1e530c"),
    ("los-angeles", "9909a8b1-2d15-4d3d-8ec9-efc48c536a01"),
    ("sfo", "334e26e9-8355-45cc-97c6-c31daf0df330"),
]


def _pairs(rows: pa.Table) -> list[tuple[str, str]]:
    return list(zip(rows["secondary_key"].to_pylist(), rows["key"].to_pylist(), strict=True))


def _view(storage: Storage, as_of: str) -> IndexPartitionView:
    return IndexPartitionView.load(storage, SPEC, frozenset({I1, I2, I3}), as_of)


def _write_example(storage: Storage) -> None:
    base = pa.table({"secondary_key": [v for v, _ in BASE], "key": [k for _, k in BASE]})
    for bucket in set(SPEC.buckets(base).tolist()):
        write_base(storage, SPEC, bucket, I1, base.filter(pa.array(SPEC.buckets(base) == bucket)))
    log = pa.table(
        {
            "secondary_key": [v for v, _, _ in LOG],
            "key": [k for _, k, _ in LOG],
            OP_FIELD: pa.array([op for _, _, op in LOG], pa.int8()),
        }
    )
    write_logs(storage, SPEC, I2, log)


def test_rfc77_worked_example(tmp_path: Path) -> None:
    storage = Storage.from_uri(str(tmp_path))
    _write_example(storage)
    view = _view(storage, I2)
    merged = view.read_all()
    # RFC-77 lists the two chennai entries unordered; here buckets are sorted by the whole pair.
    assert sorted(_pairs(merged)) == MERGED
    for bucket in view.buckets:
        assert _pairs(view.read_bucket(bucket)) == sorted(_pairs(view.read_bucket(bucket)))
    # A lookup by value reads one bucket and returns every record key of that value.
    assert sorted(_pairs(view.lookup(pa.array(["chennai", "sfo", "nowhere"])))) == [
        MERGED[1],
        MERGED[2],
        MERGED[4],
    ]
    # Compaction folds base and logs; the new base never holds a tombstone (nor an op column).
    for bucket in list(view.buckets):
        compact_bucket(view, bucket, I3)
    compacted = _view(storage, I3)
    assert sorted(_pairs(compacted.read_all())) == MERGED
    for files in compacted.buckets.values():
        assert files.logs == () and files.base is not None
        base_rows = pq.read_table(storage.path(compacted.rel(files.base)))
        assert OP_FIELD not in base_rows.schema.names


def test_all_entries_of_a_value_share_its_bucket() -> None:
    keys = [f"k{i}" for i in range(200)]
    rows = pa.table({"secondary_key": ["same"] * 200, "key": keys})
    assert set(SPEC.buckets(rows).tolist()) == {SPEC.buckets(rows.slice(0, 1))[0]}
    dates = secondary.spec("by_day", parse_type("date"), 8)
    typed = pa.table({"secondary_key": [date(2026, 1, 1)] * 3, "key": ["a", "b", "c"]})
    assert len(set(dates.buckets(typed).tolist())) == 1


def test_old_image_diff() -> None:
    record_key = ("id",)
    old = pa.table({"id": [1, 2, 3, 4], "city": ["a", "b", None, "d"]})
    new = pa.table({"id": [1, 2, 3, 5], "city": ["a", "x", "c", None]})
    changes = secondary.file_group_changes(old, new, CITY_INDEX, record_key, SPEC, full=False)
    got = sorted(zip(_pairs(changes), changes[OP_FIELD].to_pylist(), strict=True))
    assert got == [
        (("b", "2"), OP_DELETE),  # value changed: tombstone for the old pair
        (("c", "3"), OP_UPSERT),  # NULL -> value: insert
        (("d", "4"), OP_DELETE),  # deleted row
        (("x", "2"), OP_UPSERT),  # value changed: insert of the new pair
    ]
    full = secondary.file_group_changes(old, new, CITY_INDEX, record_key, SPEC, full=True)
    assert sorted(_pairs(full.filter(pa.compute.equal(full[OP_FIELD], OP_UPSERT)))) == [
        ("a", "1"),
        ("c", "3"),
        ("x", "2"),
    ]


def test_a_move_between_file_groups_keeps_the_pair() -> None:
    tombstone = with_op(pa.table({"secondary_key": ["a"], "key": ["1"]}).cast(SPEC.schema), OP_DELETE)
    upsert = with_op(pa.table({"secondary_key": ["a"], "key": ["1"]}).cast(SPEC.schema), OP_UPSERT)
    ordered = secondary.order_for_commit(pa.concat_tables([upsert, tombstone]))
    assert ordered[OP_FIELD].to_pylist() == [OP_DELETE, OP_UPSERT]


def test_range_scan_honours_tombstones_and_estimates_from_footers(tmp_path: Path) -> None:
    from pruner.planner.steps.secondary_index import ranges_expression
    from pruner.predicate.domain import Domain, SortedRangeSet
    from pruner.predicate.ranges import Range

    storage = Storage.from_uri(str(tmp_path))
    _write_example(storage)
    view = _view(storage, I2)
    between = Range.between("b", True, "m", False)
    assert between is not None
    expression = ranges_expression(Domain.of(SortedRangeSet.of_ranges(between), False), pa.string())
    # chennai and los-angeles are in [b, m); the tombstoned los-angeles pair stays hidden.
    assert sorted(_pairs(view.scan(expression))) == [MERGED[1], MERGED[2], MERGED[3]]
    assert 0.0 < view.estimate_fraction(expression) <= 1.0
    nothing = ranges_expression(
        Domain.of(SortedRangeSet.of_ranges(Range.greater_than("zz")), False), pa.string()
    )
    assert view.scan(nothing).num_rows == 0 and view.estimate_fraction(nothing) == 0.0


# Composite secondary keys -----------------------------------------------------------------------

TEXTS = st.text(alphabet="ab\\N\x1fu0", max_size=4)
ROWS = st.lists(st.tuples(st.none() | TEXTS, st.none() | st.integers(-3, 3)), min_size=1, max_size=12)


@given(ROWS)
def test_composite_keys_tell_every_pair_of_values_and_nulls_apart(
    rows: list[tuple[str | None, int | None]],
) -> None:
    table = pa.table(
        {"a": pa.array([a for a, _ in rows], pa.string()), "b": pa.array([b for _, b in rows], pa.int64())}
    )
    keys = secondary.secondary_keys(table, ("a", "b")).to_pylist()
    assert None not in keys  # every row is indexed, NULLs included
    assert len(set(keys)) == len(set(rows))


@given(ROWS, TEXTS)
def test_a_prefix_range_holds_exactly_the_keys_continuing_the_prefix(
    rows: list[tuple[str | None, int | None]], wanted: str
) -> None:
    table = pa.table(
        {"a": pa.array([a for a, _ in rows], pa.string()), "b": pa.array([b for _, b in rows], pa.int64())}
    )
    keys = secondary.secondary_keys(table, ("a", "b")).to_pylist()
    (low,), (high,) = (side.to_pylist() for side in secondary.prefix_range(pa.table({"a": [wanted]})))
    assert [low <= k < high for k in keys] == [a == wanted for a, _ in rows]


def test_composite_pairs_index_rows_with_a_null_value() -> None:
    spec = secondary.spec("by_city_day", parse_type("string"), 4)
    old = pa.table({"id": [1, 2], "city": ["a", None], "n": [1, 2]})
    new = pa.table({"id": [1, 2], "city": ["a", "b"], "n": [None, 2]})
    composite = IndexDefinition("by_city_n", IndexType.SECONDARY_INDEX, ("city", "n"))
    changes = secondary.file_group_changes(old, new, composite, ("id",), spec, full=False)
    got = sorted(zip(_pairs(changes), changes[OP_FIELD].to_pylist(), strict=True))
    assert got == [
        (("\\N\x1f2", "2"), OP_DELETE),
        (("a\x1f1", "1"), OP_DELETE),
        (("a\x1f\\N", "1"), OP_UPSERT),
        (("b\x1f2", "2"), OP_UPSERT),
    ]
