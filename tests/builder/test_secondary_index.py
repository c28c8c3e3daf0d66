"""Secondary indexes (RFC-77) through build, inserts, updates that change and that keep the
value, moves between partitions, deletes and re-inserts: after every write the index holds exactly
the `(value, record key)` pairs of the table's live rows (read from the data files, not from the
index's own log), and pruning by EQUAL / IN keeps every file holding a matching row."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from builder.compaction import compact
from builder.index_build import build_index, execute
from pruner.errors import InvalidInputError
from pruner.index import secondary
from pruner.index.definitions import IndexState, IndexType
from pruner.index.kinds import partition_of
from pruner.planner.limits import DEFAULT_LIMITS
from pruner.planner.prune import prune
from pruner.predicate.domain import Domain
from pruner.predicate.tuple_domain import TupleDomain
from pruner.table.table import LakeTable
from tests.support import CITIES, create, keys_df, make_row, to_df

# Every footer-guarded scan runs (`PruneLimits.range_max_index_share`).
EVERY_SCAN = dataclasses.replace(DEFAULT_LIMITS, range_max_index_share=1.0)


def live_pairs(location: str, column: str) -> set[tuple[Any, str]]:
    """`(value, record key)` of every live row whose column is not NULL, from the data files."""
    snapshot = LakeTable.open(location).snapshot()
    pairs = set()
    for f in snapshot.files():
        rows = pq.read_table(snapshot.table.storage.path(f.path), columns=[column, "id"]).to_pylist()
        pairs |= {(r[column], str(r["id"])) for r in rows if r[column] is not None}
    return pairs


def index_pairs(location: str, index: str) -> set[tuple[Any, str]]:
    table = LakeTable.open(location)
    rows = table.snapshot().index_partition(table.spec(table.definition(index))).read_all().to_pylist()
    assert len(rows) == len({(r["secondary_key"], r["key"]) for r in rows}), "duplicate pair"
    return {(r["secondary_key"], r["key"]) for r in rows}


def assert_exact(location: str) -> None:
    assert index_pairs(location, "by_day") == live_pairs(location, "day")
    assert index_pairs(location, "by_amount") == live_pairs(location, "amount")


def assert_pruning_is_safe(location: str, column: str, values: list[Any]) -> None:
    """EQUAL / IN on the column: no file holding a matching row is pruned, and the secondary index
    step ran (it is the only one that can use an IN on these columns here)."""
    snapshot = LakeTable.open(location).snapshot()
    storage = snapshot.table.storage
    for chosen in [values[:1], values]:
        predicate = TupleDomain.with_domains({column: Domain.multiple_values(chosen)})
        result = prune(snapshot.table, predicate, snapshot=snapshot.instant)
        step = next(s for s in result.explain if s.step == "secondary_index")
        assert step.skipped is None and step.fallback is None, step
        selected = {s.path for s in result.splits}
        for f in snapshot.files():
            rows = pq.read_table(storage.path(f.path), columns=[column]).column(column).to_pylist()
            if any(v in chosen for v in rows):
                assert storage.full_uri(f.path) in selected, f"{column} in {chosen}: pruned {f.path}"


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("CREATE INDEX s ON t USING secondary_index (id)", "is the record key"),
        ("CREATE INDEX s ON t USING secondary_index (score)", "cannot cover double"),
        ("CREATE INDEX s ON t USING secondary_index (city, city)", "index columns must be distinct"),
        ("CREATE INDEX s ON t USING secondary_index (city, score)", "cannot cover double"),
        ("CREATE INDEX s ON t (id)", "give the index type"),
    ],
)
def test_bad_secondary_definitions_are_refused(tmp_path: Path, statement: str, message: str) -> None:
    from builder.create import create_table

    location = str(tmp_path / "t")
    create_table(location, "id bigint, city string, score double, day date", "id")
    with pytest.raises(InvalidInputError, match=message):
        execute(location, statement)


def test_create_index_without_using_makes_a_secondary_index(tmp_path: Path) -> None:
    from builder.create import create_table

    location = str(tmp_path / "t")
    create_table(location, "id bigint, city string, day date", "id")
    execute(location, "CREATE INDEX by_city ON t (city)")
    execute(location, "CREATE INDEX by_day ON t USING secondary_index (day)")
    table = LakeTable.open(location)
    assert [(d.name, d.index_type, partition_of(d)) for d in table.definitions] == [
        ("by_city", IndexType.SECONDARY_INDEX, "secondary_index_by_city"),
        ("by_day", IndexType.SECONDARY_INDEX, "secondary_index_by_day"),
    ]
    assert table.spec(table.definition("by_day")).key_fields == ("secondary_key", "key")
    assert table.spec(table.definition("by_day")).hash_field == "secondary_key"


def test_build_and_maintenance_keep_exactly_the_live_pairs(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "t")
    table = create(location, spark)
    first = [make_row(k, CITIES[k % 3]) for k in range(40)]
    for r in first[::6]:
        r["amount"] = None  # NULLs are not indexed
    table.insert(to_df(spark, first))
    table.sql("CREATE INDEX by_day ON t USING secondary_index (day)")
    table.sql("CREATE INDEX by_amount ON t (amount)", build=False)
    # A write while by_amount is still building, then the build's catch-up.
    table.upsert(to_df(spark, [make_row(k, CITIES[k % 3], 1) for k in range(0, 40, 4)]))
    assert LakeTable.open(location).definition("by_amount").state == IndexState.BUILDING
    build_index(location, "by_amount", spark)
    assert_exact(location)

    # Updates that change amount and keep day, moving to another city (another file group); moves
    # that keep both values; values set to NULL; deletes; re-inserts; a compaction.
    moved = [make_row(k, CITIES[(k + 1) % 3], 2) for k in range(1, 40, 5)]
    table.upsert(to_df(spark, moved))
    assert_exact(location)
    same_value_move = [make_row(k, CITIES[(k + 2) % 3], 2) for k in range(1, 40, 5)]
    table.upsert(to_df(spark, same_value_move))  # amount and day unchanged, partition changes
    assert_exact(location)
    nulled = [{**make_row(k, CITIES[k % 3], 3), "amount": None} for k in range(2, 40, 7)]
    table.upsert(to_df(spark, nulled))
    assert_exact(location)
    table.delete(keys_df(spark, list(range(0, 40, 3))))
    assert_exact(location)
    table.insert(to_df(spark, [make_row(k, CITIES[k % 3], 4) for k in range(0, 40, 9)]))
    assert_exact(location)
    compact(location, force=True)
    assert_exact(location)

    days = sorted({v for v, _ in live_pairs(location, "day")})
    assert_pruning_is_safe(location, "day", days[:2])
    amounts = sorted({v for v, _ in live_pairs(location, "amount")})
    assert_pruning_is_safe(location, "amount", amounts[:5])
    missing = Decimal("999.99")
    snapshot = LakeTable.open(location).snapshot()
    predicate = TupleDomain.with_domains({"amount": Domain.single_value(missing)})
    assert prune(snapshot.table, predicate, snapshot=snapshot.instant).splits == []


def test_a_snapshot_older_than_the_index_build_is_not_pruned_by_it(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A secondary index lists values, not files: at a snapshot before its build committed, files
    written before it was created have no entries yet, so the index cannot prove anything there."""
    location = str(tmp_path / "t")
    table = create(location, spark)
    table.insert(to_df(spark, [make_row(k, CITIES[k % 3]) for k in range(30)]))
    before = table.insert(to_df(spark, [make_row(k, CITIES[k % 3]) for k in range(30, 40)])).instant
    execute(location, "CREATE INDEX by_day ON t (day)", spark, build=False)
    table.insert(to_df(spark, [make_row(k, CITIES[k % 3]) for k in range(40, 50)]))  # indexed on write
    during = LakeTable.open(location).snapshot().instant
    build_index(location, "by_day", spark)
    day = make_row(3, "ams")["day"]
    predicate = TupleDomain.with_domains({"day": Domain.single_value(day)})
    for instant in (before, during):
        snapshot = LakeTable.open(location).snapshot(instant)
        result = prune(snapshot.table, predicate, snapshot=instant)
        holding = {
            snapshot.table.storage.full_uri(f.path)
            for f in snapshot.files()
            if day in pq.read_table(snapshot.table.storage.path(f.path), columns=["day"])["day"].to_pylist()
        }
        assert holding and holding <= {s.path for s in result.splits}, instant
        step = next(s for s in result.explain if s.step == "secondary_index")
        assert step.skipped is not None and "complete from" in step.skipped
    latest = prune(LakeTable.open(location), predicate)
    assert next(s for s in latest.explain if s.step == "secondary_index").skipped is None


def test_a_composite_index_keeps_its_pairs_and_answers_all_columns_and_a_leading_prefix(
    spark: SparkSession, tmp_path: Path
) -> None:
    """`USING secondary_index (day, amount)`: after inserts, upserts that change one value or set
    it to NULL, deletes and a compaction, the index holds one pair per live row (NULLs included,
    as a marker), and EQUAL / IN on both columns or on `day` alone keeps every file holding a
    matching row, pruning the others."""
    location = str(tmp_path / "t")
    table = create(location, spark)
    table.insert(to_df(spark, [make_row(k, CITIES[k % 3]) for k in range(40)]))
    table.sql("CREATE INDEX by_day_amount ON t USING secondary_index (day, amount)")
    table.upsert(to_df(spark, [make_row(k, CITIES[k % 3], 1) for k in range(0, 40, 4)]))
    table.upsert(to_df(spark, [{**make_row(k, CITIES[k % 3], 2), "amount": None} for k in range(1, 40, 6)]))
    table.delete(keys_df(spark, list(range(2, 40, 5))))
    compact(location, force=True)

    snapshot = LakeTable.open(location).snapshot()
    storage = snapshot.table.storage
    files = {
        storage.full_uri(f.path): pq.read_table(storage.path(f.path), columns=["id", "day", "amount"])
        for f in snapshot.files()
    }
    rows = pa.concat_tables(files.values())
    expected = set(
        zip(
            secondary.secondary_keys(rows, ("day", "amount")).to_pylist(),
            [str(k) for k in rows["id"].to_pylist()],
            strict=True,
        )
    )
    assert index_pairs(location, "by_day_amount") == expected and len(expected) == rows.num_rows
    guarded = prune(
        snapshot.table, TupleDomain.with_domains({"day": Domain.single_value(rows["day"][0].as_py())})
    )
    step = next(s for s in guarded.explain if s.step == "secondary_index")
    assert step.skipped is not None and "not selective; left to column stats" in step.skipped

    live = [(r["day"], r["amount"]) for r in rows.to_pylist()]
    days = sorted({d for d, _ in live})
    both = [(days[0], next(a for d, a in live if d == days[0] and a is not None))]
    for domains, match in [  # a prefix (one value, two), both columns, a combination nobody holds
        ({"day": Domain.single_value(days[0])}, lambda d, a: d == days[0]),
        ({"day": Domain.multiple_values(days[1:3])}, lambda d, a: d in days[1:3]),
        (
            {"day": Domain.single_value(both[0][0]), "amount": Domain.single_value(both[0][1])},
            lambda d, a: (d, a) == both[0],
        ),
        (
            {"day": Domain.single_value(days[0]), "amount": Domain.single_value(Decimal("999.99"))},
            lambda d, a: False,
        ),
    ]:
        # this index is a few row groups: the footer guard would leave a prefix scan to column stats
        result = prune(
            snapshot.table, TupleDomain.with_domains(domains), snapshot=snapshot.instant, limits=EVERY_SCAN
        )
        step = next(s for s in result.explain if s.step == "secondary_index")
        assert step.skipped is None and step.fallback is None, (domains, step)
        holding = {
            path
            for path, data in files.items()
            if any(
                match(d, a) for d, a in zip(data["day"].to_pylist(), data["amount"].to_pylist(), strict=True)
            )
        }
        selected = {s.path for s in result.splits}
        assert holding <= selected, domains
        if "amount" in domains:  # one row, or none: most files go
            assert len(selected) <= 1 < len(files), (domains, step)
