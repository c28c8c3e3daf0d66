"""`lakeprune sql`, `lakeprune index build` and `lakeprune prune` through the CLI, on a local disk,
on S3 and on Cloud Storage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pruner.storage import Storage
from tests.cli.test_cli import create_trips, warehouse_root, write_input, write_trips
from tests.cli.test_cli import lakeprune as run


@pytest.mark.usefixtures("spark")
@pytest.mark.parametrize(
    "backend", ["local", pytest.param("s3", marks=pytest.mark.s3), pytest.param("gcs", marks=pytest.mark.gcs)]
)
def test_indexes_and_prune_from_the_command_line(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    warehouse = warehouse_root(backend, tmp_path, request)
    create_trips(
        warehouse,
        "--property",
        "write.target_file_size_bytes=640",
        "--property",
        "write.small_file_limit_bytes=320",
    )
    write_trips(warehouse, write_input(tmp_path / "a.parquet", range(60)), "insert")
    assert "built up to" in run("sql", "-w", warehouse, "CREATE INDEX stats ON trips USING column_stats")
    assert "run `lakeprune index build`" in run(
        "sql", "-w", warehouse, "--no-build", "CREATE INDEX bf ON trips USING bloom_filters (id)"
    )
    assert "is ready" in run("index", "build", "trips", "bf", "-w", warehouse)
    assert "(it already was)" in run("sql", "-w", warehouse, "REFRESH INDEX bf ON TABLE trips")
    shown = json.loads(run("sql", "-w", warehouse, "--json", "SHOW INDEXES ON trips"))
    assert {r["name"]: r["state"] for r in shown["rows"]} == {
        "files": "ready",
        "record_index": "ready",
        "stats": "ready",
        "bf": "ready",
    }

    pruned = json.loads(
        run("prune", "trips", "-w", warehouse, "--json", "--where", "id BETWEEN 10 AND 12 AND city = 'ber'")
    )
    assert pruned["files_selected"] < pruned["files_total"]
    assert {"snapshot", "files_total", "files_selected", "splits", "explain"} <= set(pruned)
    table = Storage.from_uri(f"{warehouse}/trips")
    assert all(s["path"].startswith(f"{table.uri}/") for s in pruned["splits"])
    assert all(table.exists(s["path"].removeprefix(f"{table.uri}/")) for s in pruned["splits"])
    assert [s["step"] for s in pruned["explain"]] == [
        "partition_values",
        "partition_stats",
        "record_index",
        "secondary_index",
        "functional_index",
        "column_stats",
        "bloom_filters",
        "text_index",
    ]
    text = run("prune", "trips", "-w", warehouse, "--explain", "--where", "id = 7 OR score > 3")
    assert "may match" in text and "column_stats" in text and "widened" in text
    # the report per index: files pruned, or why none
    report = {e["index"]: e for e in pruned["index_report"]}
    assert set(report) == {"record_index", "stats", "bf"}
    assert report["bf"]["why_not"] == "no EQUAL / IN (without NULL or NaN) on a column with bloom filters"
    text = " ".join(run("prune", "trips", "-w", warehouse, "--explain", "--where", "id > 50").split())
    assert (
        "indexes: record_index (record_index): pruned none: no EQUAL / IN on every record key column" in text
    )
    assert "stats (column_stats): pruned " in text and " file(s)" in text
    assert "bf (bloom_filters): pruned none: no EQUAL / IN (without NULL or NaN)" in text

    for args, message in {
        ("prune", "trips", "-w", warehouse, "--where", "nope = 1"): "unknown column",
        ("prune", "trips", "-w", warehouse, "--where", "id = "): "cannot parse",
        ("prune", "trips", "-w", warehouse, "--where", "id = 'abc'"): "id",
        ("sql", "-w", warehouse, "CREATE INDEX x ON trips USING magic (id)"): "unknown index type",
        ("sql", "CREATE INDEX x ON trips USING column_stats"): "give --table PATH",
        ("index", "build", "trips", "nope", "-w", warehouse): "has no index 'nope'",
    }.items():
        output = run(*args, expect=2)
        assert message in output and output.startswith("error:"), (args, output)
