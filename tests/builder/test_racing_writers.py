"""Two whole writers racing on one S3 table: two processes, each with its own Spark session, start
an upsert together, 3 rounds (the session's SeaweedFS server). Both upsert the same keys with
their own values (moving them between partitions) and one key of their own. Every round exactly
one commit lands and the other writer fails with a one-line `ConflictError` before writing
anything; in the end the table holds exactly the first snapshot with the winners' upserts replayed
in round order, and its record index agrees."""

from __future__ import annotations

import multiprocessing
from multiprocessing.synchronize import Barrier
from typing import Any

import pytest
from pyspark.sql import SparkSession

from pruner.table.table import LakeTable
from tests.support import CITIES, Row, assert_record_index_consistent, contents, create, make_row, to_df
from tests.support_racing import racing, reported

ROUNDS = 3  # each round is a new race from the barrier; a writer that lost one races again in the next
WAIT_S = 180.0  # a writer's first round includes its JVM's start
SHARED_KEYS = range(5)
WRITERS = {"w0": CITIES[0], "w1": CITIES[1]}


def upsert_rows(writer: str, round_no: int) -> list[Row]:
    """What `writer` upserts in a round: the shared keys in its own partition, and a key of its own."""
    own = 1000 + 10 * round_no + sorted(WRITERS).index(writer)
    return [make_row(k, WRITERS[writer], version=round_no + 1) for k in [*SHARED_KEYS, own]]


def writer_process(location: str, writer: str, start: Barrier, done: Barrier, results: Any) -> None:
    """One racing writer: its own Spark session; each round waits for the start, upserts, reports
    the outcome, and waits for the round's end."""
    from builder import LakepruneTable
    from builder.session import spark_session
    from pruner.errors import ConflictError

    table = LakepruneTable(location, spark_session(master="local[1]", app_name=f"racer-{writer}"))
    for round_no in range(ROUNDS):
        start.wait(WAIT_S)
        try:
            rows = upsert_rows(writer, round_no)
            outcome = f"won {table.upsert(to_df(table.spark, rows)).instant}"
        except ConflictError as exc:
            outcome = f"conflict: {exc}"
        except BaseException as exc:  # reported to the test, which fails on it
            outcome = f"error: {type(exc).__name__}: {exc}"
        results.put((round_no, writer, outcome))
        done.wait(WAIT_S)


@pytest.mark.usefixtures("s3_environment")
def test_two_writers_started_together_land_one_commit_per_round(
    spark: SparkSession, s3_root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    location = f"{s3_root}/racing"
    first = [make_row(k, CITIES[k % 3]) for k in range(20)]
    create(location, spark).insert(to_df(spark, first))
    replay: dict[int, Row] = {row["id"]: row for row in first}

    monkeypatch.setenv("LAKEPRUNE_SPARK_DRIVER_MEMORY", "1g")  # two more JVMs on a shared host
    ctx = multiprocessing.get_context("spawn")
    start, done = ctx.Barrier(3), ctx.Barrier(3)
    results = ctx.Queue()
    writers = [
        ctx.Process(target=writer_process, args=(location, name, start, done, results)) for name in WRITERS
    ]
    with racing(writers, (start, done), WAIT_S):
        for round_no in range(ROUNDS):
            start.wait(WAIT_S)
            outcomes = dict(reported(results, round_no, WAIT_S) for _ in writers)
            done.wait(WAIT_S)
            winners = [w for w, outcome in outcomes.items() if outcome.startswith("won ")]
            assert len(winners) == 1, f"round {round_no}: {outcomes}"
            (lost,) = [outcome for outcome in outcomes.values() if not outcome.startswith("won ")]
            assert lost.startswith("conflict: table ") and "\n" not in lost, f"round {round_no}: {lost}"
            replay.update({row["id"]: row for row in upsert_rows(winners[0], round_no)})

    table = LakeTable.open(location)
    assert len(table.timeline.commits()) == 1 + ROUNDS and not table.timeline.pending()
    assert contents(location) == replay
    assert_record_index_consistent(location)
